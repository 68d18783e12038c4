#!/usr/bin/env bash
# Compares PBKDF2-HMAC-SHA-512, -SHA-256, -BLAKE2s-256 (500,000 and 50,000
# iterations) and -RIPEMD-160 (655,331 and 65,533) at VeraCrypt's header-key length
# (192 bytes) with `openssl kdf ... PBKDF2`, one core each, CPU features masked the same way on both sides:
# GODEBUG for this package (golang.org/x/sys/cpu and the runtime honour
# it), OPENSSL_ia32cap for OpenSSL (~A:~B clears bits of CPUID leaf 1
# EDX:ECX in A, AVX being bit 60, and of leaf 7 EBX in B: AVX-512
# F/DQ/IFMA/CD/BW/VL 0xd0230000, SHA 0x20000000, AVX2 0x20).
# Each row alternates the two ROUNDS times and keeps the best CPU time of
# each (BenchmarkPBKDF2VsOpenSSL), which filters out most of the noise of
# a shared machine; the ratio is openssl's time over ours.
# Usage: kdf/bench_vs_openssl.sh [ROUNDS]
set -euo pipefail
rounds=${1:-5}
cd "$(dirname "$0")"
command -v openssl >/dev/null || { echo "openssl not installed" >&2; exit 1; }
bin=$(mktemp -d)/kdf.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" .
paths() { # the code paths the masks select, from the test binary itself
	GODEBUG=$1 CRYPTVOL_PRINT_PATHS=1 "$bin" -test.run '^TestDispatchHonoursGODEBUG$' 2>/dev/null | grep '^SHA-' | tr '\n' ';'
}
printf "%-34s %-12s %8s %10s %10s %7s\n" masks benchmark iter "cryptvol s" "openssl s" ratio
while IFS='|' read -r name godebug cap; do
	echo "== $name: $(paths "$godebug")"
	GODEBUG=$godebug OPENSSL_ia32cap=$cap "$bin" -test.run '^$' -test.bench '^BenchmarkPBKDF2VsOpenSSL$' \
		-test.benchtime "${rounds}x" -test.cpu 1 2> >(grep -v 'unknown cpu feature "sha"' >&2) |
		awk -v m="$name" '/x-openssl/ {
			split($1, p, "/"); c = o = r = "?"
			for (i = 1; i <= NF; i++) {
				if ($(i+1) == "cryptvol-cpu-s") c = $i
				if ($(i+1) == "openssl-cpu-s") o = $i
				if ($(i+1) == "x-openssl") r = $i
			}
			printf "%-34s %-12s %8s %10s %10s %7s\n", m, p[2], p[3], c, o, r
		}'
done <<'ROWS'
native (AVX-512, SHA-NI)||~0:~0x0
AVX2 + SHA-NI (Zen 2/3)|cpu.avx512f=off|~0:~0xd0230000
AVX2, no SHA-NI (Haswell..Skylake)|cpu.avx512f=off,cpu.sha=off|~0:~0xf0230000
AVX, no AVX2 (Sandy Bridge)|cpu.avx512f=off,cpu.avx2=off,cpu.sha=off|~0:~0xf0230020
SSE only (no AVX)|cpu.all=off|~0x1000000000000000:~0xf0230020
ROWS
