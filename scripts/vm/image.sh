#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The VM tier's disk image: Debian 12 (bookworm) as shipped, from Debian's own
# packages (mmdebstrap with this host's apt sources): linux-image-amd64
# (6.1), systemd 252 as PID 1 on a pure cgroup-v2 tree, and what the tests
# run. Booted by scripts/vm/run.sh with the kernel and initrd taken from it.
#
# Cached in $VSD_VM_CACHE (default /var/cache/vsd-vm), keyed by a hash of this
# script: base.img, vmlinuz, initrd.img. Prints the cache directory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${VSD_VM_CACHE:-/var/cache/vsd-vm}
key=$(cat "$here/image.sh" "$here/guest-run.sh" "$here/vsd-vm-run.service" | sha256sum | cut -c1-16)
dir=$cache/$key
if [ -f "$dir/base.img" ] && [ -f "$dir/vmlinuz" ] && [ -f "$dir/initrd.img" ]; then
	echo "$dir"
	exit 0
fi

# The guest: systemd and the kernel; the project's runtime libraries; the
# tools the integration tests call; make, to run them with the host's
# Makefile; apache2 and libfcgi for the insulation test; Debian's PHP-FPM,
# a service systemd starts itself, for the package test; cgi-fcgi (libfcgi-bin),
# iperf3, haproxy, nftables and the Prometheus text parser for the hosting,
# network and metrics tests, nginx for the classification test behind both
# front ends, MariaDB (disabled: each test runs its own server) for the
# gated database tests, and the runtime libraries (json-c, libmnl, libnftables) the
# host may link vsd against; curl, which docs/migrating.md has a provider
# type to check the sites (tests/vm/migrate.sh follows it).
pkgs="systemd systemd-sysv udev dbus kmod linux-image-amd64 initramfs-tools
      libbpf1 libseccomp2 libelf1 zlib1g libfcgi0ldbl
      make bash coreutils procps psmisc iproute2 util-linux python3 bpftool strace
      apache2 gnuplot-nox passwd php8.2-fpm
      libfcgi-bin iperf3 haproxy nftables python3-prometheus-client nginx
      mariadb-server mariadb-client php8.2-mysql
      libjson-c5 libmnl0 libnftables1 curl"
start=$(date +%s)
rm -rf "$dir"
mkdir -p "$dir"
tmp=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root

# shellcheck disable=SC2086
mmdebstrap --variant=apt --quiet \
	--include="$(echo $pkgs | tr ' ' ,)" \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--customize-hook='chroot "$1" passwd -d root' \
	--customize-hook='echo vsd-vm >"$1/etc/hostname"' \
	--customize-hook='printf "/dev/vda / ext4 rw,relatime 0 1\n" >"$1/etc/fstab"' \
	--customize-hook='rm -f "$1/etc/resolv.conf"' \
	--customize-hook="cp '$here/guest-run.sh' \"\$1/usr/local/sbin/vsd-vm-run\"" \
	--customize-hook="cp '$here/vsd-vm-run.service' \"\$1/etc/systemd/system/\"" \
	--customize-hook='chroot "$1" systemctl enable vsd-vm-run.service' \
	--customize-hook='chroot "$1" systemctl disable apache2.service php8.2-fpm.service haproxy.service mariadb.service' \
	--customize-hook='chroot "$1" systemctl mask systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer man-db.timer e2scrub_all.timer fstrim.timer' \
	bookworm "$root" /etc/apt/sources.list.d/debian.sources

cp "$root"/boot/vmlinuz-* "$dir/vmlinuz"
cp "$root"/boot/initrd.img-* "$dir/initrd.img"
size=$(( $(du -sm "$root" | cut -f1) + 1500 ))
truncate -s "${size}M" "$tmp/base.img"
mkfs.ext4 -q -L vsdvm -d "$root" "$tmp/base.img"
mv "$tmp/base.img" "$dir/base.img"
# images made by earlier versions of these scripts are of no use any more
for old in "$cache"/*/; do
	[ "${old%/}" = "$dir" ] || rm -rf "$old"
done
echo "image.sh: built $dir in $(( $(date +%s) - start )) s" >&2
echo "$dir"
