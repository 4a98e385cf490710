#!/usr/bin/env bash
# Builds the Debian 12 guest image that the boot suite (test/boot, issue
# 30) boots, from Debian packages only (debootstrap from apt's Debian
# mirror; nothing else is fetched), and caches it outside the work tree,
# keyed by the hash of this recipe, so that later runs take no time:
#
#   $VIRTC_TOOLS_CACHE/boot-image-<sha256 of this file, 16 hex>/disk.qcow2
#
# One image boots every firmware family the suite covers:
#   - GPT disk: p1 BIOS boot partition (grub-pc's core.img, for SeaBIOS),
#     p2 EFI system partition, p3 ext4 root (label virtc-root);
#   - EFI and EFI + Secure Boot: Debian's signed shim as the removable
#     loader \EFI\BOOT\BOOTX64.EFI, which loads Debian's signed grub
#     (grubx64.efi) beside it; grub then boots Debian's signed kernel, so
#     OVMF's Microsoft-enrolled variables (OVMF_VARS.ms.fd) accept the chain;
#   - BIOS: grub-install --target=i386-pc into the BIOS boot partition.
# The guest has dbus, as cloud images do: the guest agent's guest-shutdown
# (libvirt's default shutdown, which virt-launcher asks for) runs
# shutdown(8), and systemd-logind handles the ACPI power button, both over
# the system bus.
# The guest has cloud-init (NoCloud reads KubeVirt's "cidata" disk),
# qemu-guest-agent (started by udev when the virtio-serial port
# org.qemu.guest_agent.0 appears, as KubeVirt's domain provides it), and
# the kernel console on ttyS0 (KubeVirt's serial console).
#
# Usage: build-image.sh   (prints the image path; needs root, debootstrap,
# qemu-img, losetup, sfdisk, mkfs.vfat, mcopy from the host's Debian
# packages debootstrap qemu-utils mount fdisk dosfstools mtools)
set -euo pipefail
export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH"

SUITE="${BOOT_IMAGE_SUITE:-bookworm}"
MIRROR="${BOOT_IMAGE_MIRROR:-http://deb.debian.org/debian}"
CACHE="${VIRTC_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/virtc-tools}"
self="$(readlink -f "$0")"
hash="$(cat "$self" | sha256sum | cut -c1-16)"
out="$CACHE/boot-image-$hash"

log() { echo "boot-image: $*" >&2; }

if [ -s "$out/disk.qcow2" ]; then
  log "cached in $out"
  echo "$out/disk.qcow2"
  exit 0
fi
mkdir -p "$CACHE"
exec 9>"$CACHE/.boot-image.lock"
flock 9
if [ -s "$out/disk.qcow2" ]; then
  log "cached in $out"
  echo "$out/disk.qcow2"
  exit 0
fi

start=$(date +%s)
work="$(mktemp -d "${TMPDIR:-/tmp}/virtc-boot-image.XXXXXX")"
root="$work/root"
loops=()
cleanup() {
  set +e
  for m in "$root/dev" "$root/proc" "$root/sys" "$root"; do
    mountpoint -q "$m" && umount -l "$m"
  done
  for l in "${loops[@]}"; do losetup -d "$l"; done
  rm -rf "$work"
}
trap cleanup EXIT

raw="$work/disk.raw"
truncate -s 3G "$raw"
sfdisk --quiet "$raw" <<'PART'
label: gpt
start=2048, size=2048, type=21686148-6449-6E6F-744E-656564454649, name=bios
start=4096, size=126976, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name=esp
start=131072, size=6158336, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=root
PART
# A loop device per partition, by offset: containers often have no
# partition nodes for a partition-scanned loop device (no udev).
part() { # start-sector size-sectors (0: to the end)
  local args=(--find --show --offset $(($1 * 512)))
  [ "$2" -gt 0 ] && args+=(--sizelimit $(($2 * 512)))
  losetup "${args[@]}" "$raw"
}
esp="$(part 4096 126976)"
loops+=("$esp")
# sized, not to the end: the backup GPT is in the disk's last sectors
rootdev="$(part 131072 6158336)"
loops+=("$rootdev")
mkfs.vfat -F 32 -n ESP "$esp" >/dev/null
mkfs.ext4 -q -L virtc-root "$rootdev"
mkdir -p "$root"
mount "$rootdev" "$root"

log "debootstrap $SUITE from $MIRROR"
debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1 || {
  tail -20 "$work/debootstrap.log" >&2
  grep -B2 -A8 -i "error" "$root/debootstrap/debootstrap.log" | tail -60 >&2
  exit 1
}
mount --bind /dev "$root/dev"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
# The guest's packages through apt in the chroot (debootstrap's own
# resolver does not follow virtual packages such as cloud-init's
# python3-cffi-backend-api-min). The signed EFI binaries are unpacked, not
# installed: their maintainer scripts write the build host's EFI variables.
log "apt-get install in the guest"
cat >"$root/usr/sbin/policy-rc.d" <<'POLICY'
#!/bin/sh
exit 101
POLICY
chmod +x "$root/usr/sbin/policy-rc.d"
chroot "$root" sh -ec '
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends systemd-sysv udev kmod initramfs-tools \
    linux-image-amd64 e2fsprogs dosfstools cloud-init qemu-guest-agent grub-pc-bin \
    iproute2 isc-dhcp-client ca-certificates netbase dbus
  cd /tmp && apt-get download -q shim-signed shim-helpers-amd64-signed grub-efi-amd64-signed
' >"$work/apt.log" 2>&1 || {
  tail -40 "$work/apt.log" >&2
  exit 1
}
rm -f "$root/usr/sbin/policy-rc.d"
mkdir -p "$work/efi-debs"
for deb in "$root"/tmp/*.deb; do dpkg-deb -x "$deb" "$work/efi-debs"; done
rm -f "$root"/tmp/*.deb

cat >"$root/etc/fstab" <<'FSTAB'
LABEL=virtc-root / ext4 errors=remount-ro 0 1
FSTAB
# cloud-init's NoCloud datasource only (KubeVirt's cloudInitNoCloud disk).
echo 'datasource_list: [ NoCloud, None ]' >"$root/etc/cloud/cloud.cfg.d/90-virtc-datasource.cfg"
: >"$root/etc/machine-id"
rm -f "$root/etc/hostname"

# no_timer_check, as the Fedora and RHEL cloud images boot: the kernel's
# check that the emulated timer ticks through the IO-APIC busy-waits a
# few ticks, which an overloaded host running the guest under TCG misses
# ("Kernel panic - not syncing: IO-APIC + timer doesn't work!", seen in a
# cold CI run beside other suites).
kernel="$(cd "$root/boot" && ls vmlinuz-* | sort -V | tail -1)"
initrd="initrd.img-${kernel#vmlinuz-}"
mkdir -p "$root/boot/grub"
cat >"$root/boot/grub/grub.cfg" <<CFG
set timeout=0
search --no-floppy --label --set=root virtc-root
linux /boot/$kernel root=LABEL=virtc-root ro console=tty0 console=ttyS0,115200n8 no_timer_check
initrd /boot/$initrd
boot
CFG

# EFI: the removable loader path, so no NVRAM boot entry is needed (the
# suite boots fresh OVMF variables as virt-launcher does).
efi="$work/esp/EFI"
mkdir -p "$efi/BOOT" "$efi/debian"
cp "$work/efi-debs/usr/lib/shim/shimx64.efi.signed" "$efi/BOOT/BOOTX64.EFI"
cp "$work/efi-debs/usr/lib/shim/mmx64.efi.signed" "$efi/BOOT/mmx64.efi"
cp "$work/efi-debs/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed" "$efi/BOOT/grubx64.efi"
# Debian's signed grub reads grub.cfg from its built-in prefix
# (/EFI/debian on the ESP) and the directory it was loaded from.
for d in BOOT debian; do
  cat >"$efi/$d/grub.cfg" <<'CFG'
search --no-floppy --label --set=root virtc-root
set prefix=($root)/boot/grub
configfile $prefix/grub.cfg
CFG
done

# BIOS: what grub-install --target=i386-pc does, by hand (it needs the
# partition nodes of the disk): grub-pc's modules under /boot/grub, a
# core.img whose prefix is the root partition, embedded by grub-bios-setup
# into the BIOS boot partition with boot.img in the MBR.
cp -r "$root/usr/lib/grub/i386-pc" "$root/boot/grub/i386-pc"
chroot "$root" grub-mkimage -O i386-pc -o /boot/grub/i386-pc/core.img \
  -p '(hd0,gpt3)/boot/grub' biosdisk part_gpt ext2 search normal configfile linux
disk="$(losetup --find --show "$raw")"
loops+=("$disk")
echo "(hd0) $disk" >"$root/tmp/device.map"
chroot "$root" /usr/lib/grub/i386-pc/grub-bios-setup --skip-fs-probe -d /boot/grub/i386-pc -m /tmp/device.map "$disk" >"$work/grub.log" 2>&1 || {
  cat "$work/grub.log" >&2
  exit 1
}
rm -f "$root/tmp/device.map"
chroot "$root" apt-get clean
rm -rf "$root/var/lib/apt/lists/"*
for m in "$root/dev" "$root/proc" "$root/sys" "$root"; do umount "$m"; done
# The ESP is written with mtools: the build host's kernel need not have vfat.
mcopy -s -i "$esp" "$work/esp/EFI" ::/
for l in "${loops[@]}"; do losetup -d "$l"; done
loops=()

mkdir -p "$out.tmp"
qemu-img convert -q -f raw -O qcow2 "$raw" "$out.tmp/disk.qcow2"
rm -rf "$out"
mv "$out.tmp" "$out"
log "built $SUITE guest image in $(($(date +%s) - start))s into $out"
echo "$out/disk.qcow2"
