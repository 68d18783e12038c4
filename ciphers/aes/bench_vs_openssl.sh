#!/bin/sh
# Compares this package's AES-256 XTS throughput with OpenSSL's on 4096-byte
# buffers, in one script so both see the same machine state. Both sides are
# measured per second of CPU time (openssl speed divides by user CPU time
# unless given -elapsed; the Go benchmarks report cpuMB/s), because on a
# shared machine wall time mostly measures the neighbours. Each side runs
# ROUNDS times interleaved and the best run of each counts (openssl prints
# "inf" when a run got too little CPU time to measure; such runs are dropped).
#
#   sh bench_vs_openssl.sh [ROUNDS]
set -eu
rounds=${1:-5}
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/aes.test" .
pattern='^BenchmarkAES$/./^(EncryptXTS|DecryptXTS|EncryptXTS\+tweak|EncryptBlocks)$/^(1x4096|8x512|4KiB)$'
i=0
while [ "$i" -lt "$rounds" ]; do
	openssl speed -seconds 1 -bytes 4096 -evp aes-256-xts 2>/dev/null |
		awk '/^AES-256-XTS/ && $2 ~ /^[0-9.]+k$/ { v=$2; sub(/k$/, "", v); printf "openssl-aes-256-xts-4096 %.1f\n", v*1000/1e6 }' >>"$tmp/results"
	openssl speed -seconds 1 -bytes 4096 -decrypt -evp aes-256-xts 2>/dev/null |
		awk '/^AES-256-XTS/ && $2 ~ /^[0-9.]+k$/ { v=$2; sub(/k$/, "", v); printf "openssl-aes-256-xts-4096-decrypt %.1f\n", v*1000/1e6 }' >>"$tmp/results"
	"$tmp/aes.test" -test.run '^$' -test.bench "$pattern" -test.benchtime 0.2s |
		awk '/^Benchmark/ { name=$1; sub(/-[0-9]+$/, "", name); for (j=1; j<=NF; j++) if ($(j+1)=="cpuMB/s") print name, $j }' >>"$tmp/results"
	i=$((i + 1))
done
"$tmp/aes.test" -test.run TestImplementationName -test.v 2>&1 | sed -n 's/.*implementation: /implementation: /p'
# Best run per benchmark, then each against OpenSSL in the same direction.
sort -k1,1 -k2,2gr "$tmp/results" | awk '!seen[$1]++' >"$tmp/best"
ossl=$(awk '$1 == "openssl-aes-256-xts-4096" { print $2 }' "$tmp/best")
ossl_dec=$(awk '$1 == "openssl-aes-256-xts-4096-decrypt" { print $2 }' "$tmp/best")
printf "%-58s %9s %10s\n" "benchmark (best of $rounds runs)" "cpuMB/s" "vs openssl"
awk -v e="$ossl" -v d="$ossl_dec" '{
	ref = ($1 ~ /[Dd]ecrypt/) ? d : e
	printf "%-58s %9.0f %9.2fx\n", $1, $2, $2 / ref
}' "$tmp/best"
