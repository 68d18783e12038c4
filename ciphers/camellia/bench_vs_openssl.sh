#!/bin/sh
# Compares this package's Camellia-256 throughput with OpenSSL's
# camellia-256-ecb on 4096-byte buffers (and prints botan's Camellia-256 for
# information), in one script so all see the same machine state. Throughput
# is per second of CPU time (openssl speed without -elapsed divides by user
# CPU time; the Go benchmarks report cpuMB/s), because on a shared machine
# wall time mostly measures the neighbours. Each side runs ROUNDS times,
# interleaved, and the best run of each counts.
#
#   sh bench_vs_openssl.sh [ROUNDS]
set -eu
rounds=${1:-3}
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/pkg.test" .
ossl() { # name, extra openssl flags...
	name=$1
	shift
	openssl speed -seconds 1 -bytes 4096 "$@" 2>/dev/null |
		awk -v n="$name" '/^CAMELLIA-256-ECB/ { v=$2; sub(/k$/, "", v); printf "%s %.1f\n", n, v*1000/1e6 }'
}
i=0
while [ "$i" -lt "$rounds" ]; do
	ossl openssl-encrypt-4K -evp camellia-256-ecb >>"$tmp/results"
	ossl openssl-decrypt-4K -decrypt -evp camellia-256-ecb >>"$tmp/results"
	"$tmp/pkg.test" -test.run '^$' -test.bench . -test.benchtime 0.3s |
		awk '/^Benchmark/ { name=$1; sub(/-[0-9]+$/, "", name); for (j=1; j<=NF; j++) if ($(j+1)=="cpuMB/s") print name, $j }' >>"$tmp/results"
	i=$((i + 1))
done
sort -k1,1 -k2,2gr "$tmp/results" | awk '!seen[$1]++' >"$tmp/best"
enc=$(awk '$1 == "openssl-encrypt-4K" { print $2 }' "$tmp/best")
dec=$(awk '$1 == "openssl-decrypt-4K" { print $2 }' "$tmp/best")
printf "%-44s %9s %10s\n" "benchmark (best of $rounds runs)" "cpuMB/s" "vs openssl"
awk -v e="$enc" -v d="$dec" '{
	ref = ($1 ~ /[Dd]ecrypt/) ? d : e
	printf "%-44s %9.0f %9.2fx\n", $1, $2, $2 / ref
}' "$tmp/best"
if command -v botan >/dev/null; then
	echo "botan 2 (wall time, for information):"
	botan speed --msec=1000 --buf-size=4096 Camellia-256 2>/dev/null | sed 's/^/  /'
fi
