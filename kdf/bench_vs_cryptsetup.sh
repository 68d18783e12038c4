#!/usr/bin/env bash
# Compares PBKDF2 iterations per CPU-second (256-bit key, one thread) of
# this package with `cryptsetup benchmark --pbkdf pbkdf2 --hash H` on this
# machine (cryptsetup times its benchmark with getrusage CPU time too). Both are run alternately ROUNDS times and the best figure of
# each is kept, which filters out the noise of other processes.
# Usage: kdf/bench_vs_cryptsetup.sh [ROUNDS]
# Both sides inherit the environment, so CPU features are masked for both
# by setting GODEBUG (this package) and OPENSSL_ia32cap (Debian's cryptsetup
# links OpenSSL's libcrypto; see ldd) as in bench_vs_openssl.sh's rows, e.g.
# SSE2 only: GODEBUG=cpu.all=off OPENSSL_ia32cap='~0x1000000000000000:~0xf0230128'
# (AVX, and AVX2, BMI1/2, SHA, AVX-512 of CPUID leaf 7).
set -euo pipefail
rounds=${1:-5}
cd "$(dirname "$0")"
command -v cryptsetup >/dev/null || { echo "cryptsetup not installed" >&2; exit 1; }
bin=$(mktemp -d)/kdf.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" .
declare -A ours theirs
hashes="sha512 sha256 ripemd160 whirlpool sha1 blake2s-256"
for ((r = 0; r < rounds; r++)); do
	for h in $hashes; do
		v=$(cryptsetup benchmark --pbkdf pbkdf2 --hash "$h" 2>/dev/null | awk '/iterations per second/ {print $2}')
		[[ -n "$v" && "$v" -gt "${theirs[$h]:-0}" ]] && theirs[$h]=$v
	done
	while read -r name it; do
		[[ "${it%.*}" -gt "${ours[$name]:-0}" ]] && ours[$name]=${it%.*}
	done < <("$bin" -test.run '^$' -test.bench '^BenchmarkPBKDF2$/^(SHA-512|SHA-256|RIPEMD-160|Whirlpool|SHA-1|BLAKE2s-256)$' -test.benchtime 300ms |
		awk '/iter\/s/ { n=$1; sub(/^BenchmarkPBKDF2\//, "", n); sub(/-[0-9]+$/, "", n); for (i=1;i<=NF;i++) if ($(i+1)=="iter/cpu-s") print n, $i }')
done
printf "%-12s %14s %14s %7s\n" PRF "cryptvol it/s" "cryptsetup" ratio
for pair in sha512:SHA-512 sha256:SHA-256 ripemd160:RIPEMD-160 whirlpool:Whirlpool sha1:SHA-1 blake2s-256:BLAKE2s-256; do
	c=${pair%%:*}; g=${pair#*:}
	printf "%-12s %14s %14s %7s\n" "$g" "${ours[$g]:-?}" "${theirs[$c]:-?}" \
		"$(awk -v a="${ours[$g]:-0}" -v b="${theirs[$c]:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }')"
done
