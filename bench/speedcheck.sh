#!/bin/sh
# Speed floor check: cryptvol's single-threaded 4 KiB XTS figures against
# `openssl speed -evp aes-256-xts` and `botan speed 'XTS(Serpent)'
# 'XTS(Twofish)'`, measured in the same run as bytes per CPU second (see
# internal/cmd/speedcheck for how). Exits 1 if a ratio is below 0.5.
# Usage: bench/speedcheck.sh [-seconds 2] [-floor 0.5] [-require-tools]
set -e
cd "$(dirname "$0")/.."
exec go run ./internal/cmd/speedcheck "$@"
