package keep

// dropKeyring removes a test's entries.
func dropKeyring(s Store) { RemoveKeyring(s.(*keyring).name) }
