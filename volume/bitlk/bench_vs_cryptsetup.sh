#!/usr/bin/env bash
# Compares the CPU time of one BitLocker key stretch (2^20 SHA-256 rounds,
# one thread) here with cryptsetup's on this machine: `cryptsetup
# bitlkDump --dump-volume-key` with the password of a corpus image runs
# exactly one stretch (the password protector comes first), minus the same
# command without a key (reading the metadata). Both sides are timed by
# getrusage CPU time, alternately ROUNDS times, best of each kept, which
# filters out other processes' noise. With MASK=nosha both run without the
# SHA extensions (GODEBUG=cpu.sha=off, OPENSSL_ia32cap clearing CPUID(7)
# EBX bit 29), as on CPUs before Ice Lake and Zen.
# Usage: volume/bitlk/bench_vs_cryptsetup.sh [ROUNDS]
set -euo pipefail
export LC_ALL=C
rounds=${1:-5}
cd "$(dirname "$0")"
command -v cryptsetup >/dev/null || { echo "cryptsetup not installed" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go test -c -o "$dir/bitlk.test" .
corpus=${CRYPTVOL_TESTDATA:-../../../shared/testdata}
tar -C "$dir" -xJf "$corpus/cryptsetup/bitlk-images.tar.xz" bitlk-images/bitlk-aes-xts-128.img
img=$dir/bitlk-images/bitlk-aes-xts-128.img
mask=()
if [[ "${MASK:-}" == nosha ]]; then
	# x/sys/cpu warns that it does not know "sha"; the runtime and
	# this package do.
	mask=(env GODEBUG=cpu.sha=off OPENSSL_ia32cap="~0x0:~0x20000000")
fi
cpu() { # cpu CMD...: user+system CPU seconds of CMD
	python3 -c 'import resource,subprocess,sys
subprocess.run(sys.argv[1:], stdin=open("/dev/stdin","rb"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r=resource.getrusage(resource.RUSAGE_CHILDREN); print("%.4f" % (r.ru_utime+r.ru_stime))' "$@"
}
best_cs=99 best_base=99 best_ours=99
for ((r = 0; r < rounds; r++)); do
	t=$(printf anaconda | cpu "${mask[@]}" cryptsetup bitlkDump --dump-volume-key --batch-mode --key-file - "$img")
	best_cs=$(awk -v a="$t" -v b="$best_cs" 'BEGIN { print (a < b) ? a : b }')
	t=$(cpu "${mask[@]}" cryptsetup bitlkDump "$img" </dev/null)
	best_base=$(awk -v a="$t" -v b="$best_base" 'BEGIN { print (a < b) ? a : b }')
	t=$("${mask[@]}" "$dir/bitlk.test" -test.run '^$' -test.bench '^BenchmarkStretch$/^default$' -test.benchtime 3x 2>/dev/null |
		awk '/cpu-s\/op/ { for (i = 1; i < NF; i++) if ($(i+1) == "cpu-s/op") print $i }')
	best_ours=$(awk -v a="$t" -v b="$best_ours" 'BEGIN { print (a < b) ? a : b }')
done
awk -v cs="$best_cs" -v base="$best_base" -v ours="$best_ours" -v mask="${MASK:-none}" 'BEGIN {
	printf "one key stretch (mask: %s): cryptsetup %.3f s CPU (%.3f - %.3f reading the metadata), cryptvol %.3f s: %.2fx\n",
		mask, cs - base, cs, base, ours, (cs - base) / ours }'

# AES-CBC decryption, one thread, by CPU time: BitLocker's (512-byte
# sectors, each IV its offset encrypted) against OpenSSL's plain CBC over
# 16 KiB buffers (openssl speed divides by user CPU time); and the
# Elephant diffuser's cost on top of it.
best_ossl=0
declare -A best_ours_mb
for ((r = 0; r < rounds; r++)); do
	v=$("${mask[@]}" openssl speed -evp aes-128-cbc -decrypt -bytes 16384 -seconds 1 2>/dev/null | awk '/^AES-128-CBC/ { sub(/k$/, "", $2); print $2 * 1.024 / 1000 }')
	best_ossl=$(awk -v a="$v" -v b="$best_ossl" 'BEGIN { print (a > b) ? a : b }')
	while read -r name v; do
		best_ours_mb[$name]=$(awk -v a="$v" -v b="${best_ours_mb[$name]:-0}" 'BEGIN { print (a > b) ? a : b }')
	done < <("${mask[@]}" "$dir/bitlk.test" -test.run '^$' -test.bench '^BenchmarkDecrypt(CBC128|Elephant128|XTS128)$' -test.cpu 1 -test.benchtime 20x 2>/dev/null |
		awk '/MB\/cpu-s/ { n = $1; sub(/^BenchmarkDecrypt/, "", n); for (i = 1; i < NF; i++) if ($(i+1) == "MB/cpu-s") print n, $i }')
done
awk -v o="$best_ossl" -v c="${best_ours_mb[CBC128]:-0}" -v e="${best_ours_mb[Elephant128]:-0}" -v x="${best_ours_mb[XTS128]:-0}" 'BEGIN {
	printf "AES-128-CBC decryption, one thread: openssl %.0f MB/s, BitLocker CBC %.0f MB/s (%.2fx), with the Elephant diffuser %.0f MB/s (%.2fx), XTS %.0f MB/s\n",
		o, c, c / o, e, e / o, x }'
