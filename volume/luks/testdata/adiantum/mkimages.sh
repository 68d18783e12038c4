#!/usr/bin/env bash
# Makes the Adiantum LUKS images of this directory with the real thing:
# cryptsetup and dm-crypt in a Linux VM (Debian's 6.1 kernel under
# qemu-system-x86_64, KVM if there is one), and checks the other direction
# there too. Run it from anywhere (a few minutes: the VM is emulated).
#
#   apt-get install qemu-system-x86 cryptsetup-bin xz-utils
#   volume/luks/testdata/adiantum/mkimages.sh [WORKDIR]
#
# In the VM, for each fwd-*.img: cryptsetup luksFormat (options below),
# cryptsetup open, the pattern (pattern() below) written through dm-crypt at
# two offsets of the data area, and the SHA-256 of the whole decrypted data
# area printed. For each rev-*.img, which cryptvol made on the host (FAT,
# one file): cryptsetup open --test-passphrase, open, and the SHA-256 of the
# decrypted data area. The host then requires `cryptvol export` of every
# image to hash the same, keeps the fwd images as fwd-*.img.xz with the
# data-area hashes in dmcrypt-data.sha256 (TestDmcryptImages reads them),
# and prints
# what it checked. The kernel and busybox come from Debian packages
# (apt-get download), cryptsetup and its libraries from this machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work"
cd "$work"
echo "work directory: $work"

kver=6.1.0-57-amd64
if [ ! -f root/boot/vmlinuz-$kver ]; then
  apt-get download linux-image-$kver busybox-static
  mkdir -p root
  for d in ./*.deb; do dpkg-deb -x "$d" root; done
fi

# The known plaintext: 512 lines of 32 bytes (16 KiB).
pattern() { awk 'BEGIN { for (i = 0; i < 512; i++) printf "dm-crypt adiantum %013d\n", i }'; }
pattern >pattern.bin
pass="adiantum from the kernel"
printf '%s' "$pass" >pass.txt

# fwd images: name, size, whether to keep it here, luksFormat options.
# aes-xts-plain64 with 4096-byte sectors is the control: it shows how
# dm-crypt numbers the IVs of large sectors (in 512-byte units) whatever
# the cipher. The LUKS2 ones have a keyslots area for one keyslot, which
# luksFormat fills with noise, so that they compress to about 160 KB; the
# LUKS1 one (1 MB of noise in its eight keyslots) is only checked here.
small="--luks2-keyslots-size 128k --offset 320"
fwd=(
  "fwd-luks2-aes-xts-4096|2208K|keep|--type luks2 --cipher aes-xts-plain64 --key-size 256 --sector-size 4096 $small"
  "fwd-luks2-xchacha12-4096|2208K|keep|--type luks2 --cipher xchacha12,aes-adiantum-plain64 --key-size 256 --sector-size 4096 $small"
  "fwd-luks2-xchacha20-512|2208K|keep|--type luks2 --cipher xchacha20,aes-adiantum-plain64 --key-size 256 --sector-size 512 $small"
  "fwd-luks1-xchacha12|3M|no|--type luks1 --cipher xchacha12,aes-adiantum-plain64 --key-size 256"
)
# rev images: name, cryptvol create options.
rev=(
  "rev-luks2-aes-xts-4096|--type luks2 --size 20M --cipher aes-xts-plain64 --key-size 256"
  "rev-luks2-xchacha12-4096|--type luks2 --size 20M --cipher xchacha12,aes-adiantum-plain64"
  "rev-luks2-xchacha20-512|--type luks2 --size 20M --cipher xchacha20,aes-adiantum-plain64 --sector-size 512"
  "rev-luks1-xchacha20|--type luks1 --size 4M --cipher xchacha20,aes-adiantum-plain64"
)

(cd "$repo" && go build -o "$work/cryptvol" ./cmd/cryptvol)
for r in "${rev[@]}"; do
  IFS='|' read -r name opts <<<"$r"
  rm -f "$name.img"
  # shellcheck disable=SC2086
  ./cryptvol create "$name.img" $opts --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --password-file pass.txt >/dev/null
  ./cryptvol put "$name.img" pattern.bin --password-file pass.txt
done
for f in "${fwd[@]}"; do
  IFS='|' read -r name size _ <<<"$f"
  rm -f "$name.img"
  truncate -s "$size" "$name.img"
done

# The initramfs: busybox, cryptsetup with its libraries, the modules.
rm -rf initrd && mkdir -p initrd/bin initrd/lib/modules initrd/etc initrd/run/cryptsetup
cp root/bin/busybox initrd/bin/
for t in sh mount mkdir insmod dd sha256sum cat echo poweroff sleep sync awk head ls; do ln -s busybox "initrd/bin/$t"; done
cp "$(command -v cryptsetup)" initrd/bin/
for lib in $(ldd "$(command -v cryptsetup)" | awk '/=>/ { print $3 } /^\t\/lib64/ { print $1 }'); do
  mkdir -p "initrd$(dirname "$lib")"
  cp -L "$lib" "initrd$lib"
done
mkdir -p initrd/lib64 && cp -L /lib64/ld-linux-x86-64.so.2 initrd/lib64/
python3 - "$work/root/lib/modules/$kver" virtio_pci virtio_blk dm_mod dm_crypt adiantum nhpoly1305_avx2 nhpoly1305_sse2 \
  chacha_x86_64 chacha_generic aesni_intel algif_skcipher >modules.txt <<'PY'
import os, re, sys
top = sys.argv[1]
paths = {}
for d, _, fs in os.walk(top + '/kernel'):
    for f in fs:
        if f.endswith('.ko'):
            paths[f[:-3].replace('-', '_')] = os.path.join(d, f)
order = []
def add(n):
    if n in order or n not in paths:
        return
    data = open(paths[n], 'rb').read()
    m = re.search(rb'depends=([^\x00]*)\x00', data)
    for dep in (m.group(1).split(b',') if m and m.group(1) else []):
        add(dep.decode().replace('-', '_'))
    order.append(n)
for n in sys.argv[2:]:
    add(n)
print('\n'.join(paths[n] for n in order))
PY
: >initrd/modules
while read -r ko; do
  cp "$ko" initrd/lib/modules/
  echo "/lib/modules/$(basename "$ko")" >>initrd/modules
done <modules.txt
cp pattern.bin pass.txt initrd/
{
  echo '#!/bin/sh'
  echo 'mkdir -p /proc /sys /dev /tmp /run/cryptsetup'
  echo 'mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev'
  echo 'for m in $(cat /modules); do insmod $m || echo "insmod $m failed"; done'
  echo 'export DM_DISABLE_UDEV=1'
  echo 'sleep 1'
  n=0
  for f in "${fwd[@]}" "${rev[@]}"; do
    IFS='|' read -r name a keep b <<<"$f"
    case $name in rev-*) b=$a ;; esac
    dev=/dev/vd$(printf "\\$(printf '%03o' $((97 + n)))")
    n=$((n + 1))
    case $name in
    fwd-*)
      echo "cryptsetup luksFormat --batch-mode $b --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file /pass.txt $dev || echo 'RESULT $name luksFormat FAILED'"
      echo "cryptsetup open --key-file /pass.txt $dev x || echo 'RESULT $name open FAILED'"
      # Two copies of the pattern: at the start and at 1536 KiB (sectors
      # 384 of 4096 bytes, 3072 of 512) of the data area; the rest of the
      # area is never written (zeros on disk, noise once decrypted).
      echo "dd if=/pattern.bin of=/dev/mapper/x bs=4096 conv=fsync 2>/dev/null"
      echo "dd if=/pattern.bin of=/dev/mapper/x bs=4096 seek=384 conv=fsync 2>/dev/null"
      ;;
    rev-*)
      echo "cryptsetup open --test-passphrase --key-file /pass.txt $dev && echo 'RESULT $name test-passphrase ok' || echo 'RESULT $name test-passphrase FAILED'"
      echo "printf wrong | cryptsetup open --test-passphrase --key-file - $dev && echo 'RESULT $name wrong passphrase ACCEPTED' || echo 'RESULT $name wrong passphrase rejected'"
      echo "cryptsetup open --key-file /pass.txt $dev x || echo 'RESULT $name open FAILED'"
      ;;
    esac
    echo "echo \"RESULT $name sha256 \$(sha256sum /dev/mapper/x | awk '{print \$1}')\""
    echo "echo \"RESULT $name status \$(cryptsetup status x | awk '/cipher:|sector size:/ {printf \"%s \", \$0}')\""
    echo "cryptsetup close x"
  done
  echo 'sync; echo RESULT done; poweroff -f'
} >initrd/init
chmod +x initrd/init
(cd initrd && find . | ../root/bin/busybox cpio -o -H newc 2>/dev/null | gzip -1) >initrd.gz

drives=()
for f in "${fwd[@]}" "${rev[@]}"; do
  IFS='|' read -r name _ <<<"$f"
  drives+=(-drive "file=$name.img,format=raw,if=virtio")
done
# TCG, not KVM: the VM boots in seconds either way, and nested KVM (this
# project's machines are themselves VMs) hangs in the guest's early boot.
timeout 900 qemu-system-x86_64 -machine accel=tcg -cpu max -m 512 -nographic -no-reboot \
  -kernel root/boot/vmlinuz-$kver -initrd initrd.gz -append "console=ttyS0 panic=-1 quiet" \
  "${drives[@]}" </dev/null | tr -d '\r' | tee console.log | grep -E '^RESULT|insmod .* failed'

grep -a -o 'RESULT .*' console.log >results.txt
fail=0
: >dmcrypt-data.sha256
for f in "${fwd[@]}" "${rev[@]}"; do
  IFS='|' read -r name _ <<<"$f"
  kernel=$(awk -v n="$name" '$2 == n && $3 == "sha256" { print $4 }' results.txt)
  ours=$(./cryptvol export "$name.img" - --password-file pass.txt | sha256sum | awk '{print $1}')
  if [ -z "$kernel" ] || [ "$kernel" != "$ours" ]; then
    echo "MISMATCH $name: dm-crypt $kernel, cryptvol export $ours"
    fail=1
  else
    echo "same     $name: dm-crypt and cryptvol export both $ours"
  fi
  case $f in fwd-*"|keep|"*) echo "$ours  $name.img" >>dmcrypt-data.sha256 ;; esac
done
grep -q 'FAILED\|ACCEPTED' results.txt && fail=1
if [ $fail -ne 0 ]; then
  echo "FAILED; see $work/console.log"
  exit 1
fi
for f in "${fwd[@]}"; do
  IFS='|' read -r name _ keep _ <<<"$f"
  [ "$keep" = keep ] || continue
  xz -9 -k -f "$name.img"
  cp "$name.img.xz" "$here/"
done
cp dmcrypt-data.sha256 "$here/"
echo "images and dmcrypt-data.sha256 written to $here"
