#!/bin/sh
# iobench.sh: what encryption costs on this machine's disk, measured in one
# run, with the reference figures beside ours.
#
#   bench/iobench/iobench.sh [DIR] [SIZE_MIB] [RUNS]   (from the repository root)
#
# DIR (default: $TMPDIR or /tmp) is on the disk to measure; SIZE_MIB
# (default 256) is written and read per pass; RUNS (default 3) passes of
# each kind are made and the fastest counts (`cryptvol benchmark io` reports
# the median with its min–max instead), because a disk shared with other work is noisy.
#
# 1. `cryptvol benchmark io`: the same file written (1 MiB writes, fsync)
#    and read back from the disk, raw and through a FUSE mount of an AES
#    VeraCrypt volume. Write ratio = encrypted / raw.
# 2. dd, as in the seed measurement: to an allocated file (overwritten in
#    place, like a partition), through `cryptvol mount` (the real background
#    daemon) and through gocryptfs (the Debian package); writes with
#    conv=fsync, reads after dropping the file and its container (or
#    ciphertext file) from the page cache. Write ratio = cryptvol / raw,
#    read ratio = cryptvol / gocryptfs.
set -eu

DIR=${1:-${TMPDIR:-/tmp}}
SIZE=${2:-256}
RUNS=${3:-3}
for tool in go dd gocryptfs; do
	command -v "$tool" >/dev/null || { echo "iobench.sh: $tool is not installed" >&2; exit 1; }
done
[ -e /dev/fuse ] || { echo "iobench.sh: no /dev/fuse" >&2; exit 1; }

work=$(mktemp -d "$DIR/cryptvol-iobench.XXXXXX")
export CRYPTVOL_RUNTIME_DIR="$work/run"
cleanup() {
	"$work/cryptvol" unmount "$work/cv" >/dev/null 2>&1 || true
	fusermount3 -u "$work/gc" >/dev/null 2>&1 || umount "$work/gc" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

go build -o "$work/cryptvol" ./cmd/cryptvol
cv="$work/cryptvol"

# dd_rate ARGS...: run dd, print its rate in bytes per second.
dd_rate() {
	dd "$@" 2>&1 | awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s,") { print $1 / $(i-1); exit } }'
}
# drop FILE...: evict files from the page cache.
drop() {
	for f in "$@"; do dd if="$f" iflag=nocache count=0 status=none; done
}
best() { sort -g | tail -1; }
mb() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'; }

"$cv" benchmark io "$work/target" --size "${SIZE}M" --runs "$RUNS" --format csv >"$work/io.csv"
raw_w=$(awk -F, '$1 == "raw" { print $2 }' "$work/io.csv")
raw_r=$(awk -F, '$1 == "raw" { print $3 }' "$work/io.csv")
enc_w=$(awk -F, '$1 == "encrypted" { print $2 }' "$work/io.csv")
enc_r=$(awk -F, '$1 == "encrypted" { print $3 }' "$work/io.csv")

# Mounted the ordinary way: cryptvol's daemon and gocryptfs.
printf 'iobench password for both\n' >"$work/pw"
mkdir "$work/cv" "$work/gc" "$work/gc.cipher"
"$cv" create "$work/v.hc" --size "$((SIZE + SIZE / 16 + 16))M" --password-file "$work/pw" --pim 1 --quick >/dev/null 2>&1
"$cv" mount "$work/v.hc" "$work/cv" --password-file "$work/pw" --pim 1
gocryptfs -init -q -passfile "$work/pw" "$work/gc.cipher" >/dev/null 2>&1
gocryptfs -q -nosyslog -passfile "$work/pw" "$work/gc.cipher" "$work/gc"

: >"$work/cvw"; : >"$work/cvr"; : >"$work/gcw"; : >"$work/gcr"; : >"$work/rw"; : >"$work/rr"
dd if=/dev/zero of="$work/raw.img" bs=1M count="$SIZE" conv=fsync status=none
i=0
while [ "$i" -lt "$RUNS" ]; do
	i=$((i + 1))
	dd_rate if=/dev/zero of="$work/raw.img" bs=1M count="$SIZE" conv=fsync,notrunc >>"$work/rw"
	drop "$work/raw.img"
	dd_rate if="$work/raw.img" of=/dev/null bs=1M >>"$work/rr"

	dd_rate if=/dev/zero of="$work/cv/f" bs=1M count="$SIZE" conv=fsync >>"$work/cvw"
	drop "$work/v.hc" "$work/cv/f"
	dd_rate if="$work/cv/f" of=/dev/null bs=1M >>"$work/cvr"
	rm "$work/cv/f"

	dd_rate if=/dev/zero of="$work/gc/f" bs=1M count="$SIZE" conv=fsync >>"$work/gcw"
	drop "$work/gc.cipher"/* "$work/gc/f"
	dd_rate if="$work/gc/f" of=/dev/null bs=1M >>"$work/gcr"
	rm "$work/gc/f"
done
rw=$(best <"$work/rw"); rr=$(best <"$work/rr")
cvw=$(best <"$work/cvw"); cvr=$(best <"$work/cvr")
gcw=$(best <"$work/gcw"); gcr=$(best <"$work/gcr")

echo "== on $DIR: $SIZE MiB per pass, best of $RUNS; MB/s (1 MB = 2^20 bytes)"
printf '%-34s %10s %10s\n' "" "write" "read"
printf '%-34s %10s %10s\n' "benchmark io: raw" "$(mb "$raw_w")" "$(mb "$raw_r")"
printf '%-34s %10s %10s\n' "benchmark io: encrypted (mount)" "$(mb "$enc_w")" "$(mb "$enc_r")"
printf '%-34s %10s %10s\n' "dd raw (allocated file)" "$(mb "$rw")" "$(mb "$rr")"
printf '%-34s %10s %10s\n' "dd through cryptvol mount" "$(mb "$cvw")" "$(mb "$cvr")"
printf '%-34s %10s %10s\n' "dd through gocryptfs" "$(mb "$gcw")" "$(mb "$gcr")"
echo
awk -v rw="$raw_w" -v ew="$enc_w" -v ddr="$rw" -v ddc="$cvw" -v cr="$cvr" -v gr="$gcr" 'BEGIN {
	printf "write through the mount / raw write, benchmark io: %.2f  (goal >= 0.85)\n", ew / rw
	printf "write through the mount / raw write, dd:           %.2f  (goal >= 0.85)\n", ddc / ddr
	printf "read through cryptvol mount / gocryptfs, dd:       %.2f  (goal >= 1.00)\n", cr / gr
}'
