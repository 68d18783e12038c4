//go:build !linux

package keep

func dropKeyring(s Store) { s.DeleteAll() }
