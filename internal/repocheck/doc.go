// Package repocheck holds no code, only tests of the repository as a
// whole: generated files carry Go's exact marker, nothing cites a file
// that is not in the repository, docs/ARCHITECTURE.md agrees with the
// packages and the command line, and imports follow the layering that
// docs/ARCHITECTURE.md describes.
package repocheck
