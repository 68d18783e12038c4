# Conveniences over the go command; `go run ./internal/cmd/release` is the
# real release builder and works without make.

VERSION ?=
RELEASE_FLAGS = -out dist $(if $(VERSION),-version $(VERSION))

.PHONY: release release-check crossbuild test fuzz

# Static binaries for every platform in dist/, plus dist/SHA256SUMS.
release:
	go run ./internal/cmd/release $(RELEASE_FLAGS)

# The same, then inspect every binary and run its `version` (under
# qemu-user-static for the foreign Linux targets).
release-check:
	go run ./internal/cmd/release $(RELEASE_FLAGS) -check

# Release binaries and every package with its tests, for every platform.
crossbuild:
	go run ./internal/cmd/release $(RELEASE_FLAGS) -all-packages

test:
	go test ./...

# The long fuzz run: every fuzz target for FUZZTIME each (.ci/fuzz).
FUZZTIME ?= 10m
fuzz:
	.ci/fuzz $(FUZZTIME)
