//go:build !linux

package keep

func dropKeyring(s Store) { s.DeleteAll() }

// agentsIn cannot list processes here.
func agentsIn(dir string) []int { return nil }
