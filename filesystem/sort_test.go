package filesystem_test

import "sort"

func sortStrings(s []string) { sort.Strings(s) }
