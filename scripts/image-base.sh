#!/usr/bin/env bash
# scripts/image-base.sh OUT.tar [PACKAGES]: an image's base, a Debian bookworm minbase root file system
# made by debootstrap from the Debian mirror apt already uses, with PACKAGES (comma-separated, default
# ca-certificates) and their dependencies, trimmed, with the unprivileged user `app` (10001).
# Needs root (debootstrap). A copy is kept in IMAGE_BASE_CACHE (default /var/cache/community-layer-image)
# for a week, keyed by what makes it; without a usable copy it is made anew.
set -euo pipefail
out=$1
suite=bookworm
packages=${2:-ca-certificates}
# The first Debian mirror of apt's own sources (deb822 or one-line format), so no host is named here.
mirror=$(grep -rhoE '^(URIs:\s*|deb\s+(\[[^]]*\]\s+)?)https?://\S+/debian/?(\s|$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
  | grep -oE 'https?://\S+' | head -n1 || true)
if [ -z "$mirror" ]; then
  echo "image-base: no Debian mirror found in /etc/apt/sources.list*" >&2
  exit 1
fi
cache=${IMAGE_BASE_CACHE:-/var/cache/community-layer-image}
key=$(printf '%s\n' "$suite" "$packages" "$mirror" "$(sha256sum "$0" | cut -d' ' -f1)" | sha256sum | cut -c1-16)
# One copy per package set: the service's base and PgBouncer's are kept side by side.
label=$(printf '%s' "$packages" | tr -c 'a-z0-9.-' '-')
cached="$cache/base-$suite-$label-$key.tar"
if [ -f "$cached" ] && [ -n "$(find "$cached" -mtime -7)" ] && tar -tf "$cached" ./etc/passwd >/dev/null 2>&1; then
  echo "image-base: reusing $cached"
  cp "$cached" "$out"
  exit 0
fi

if ! command -v debootstrap >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
rootfs=$(mktemp -d /var/tmp/community-layer-base.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
# The image's / gets this folder's mode: readable by all, as any root file system.
chmod 755 "$rootfs"
echo "image-base: debootstrap --variant=minbase $suite from $mirror"
debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
  tail -n 20 "$rootfs.log" >&2
  exit 1
}
rm -f "$rootfs.log"
# What a container never uses: documentation, translations, apt's package lists and downloads, logs.
rm -rf "$rootfs"/usr/share/{doc,man,info,locale}/* "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*
echo 'app:x:10001:10001:community-layer:/app:/usr/sbin/nologin' >>"$rootfs/etc/passwd"
echo 'app:x:10001:' >>"$rootfs/etc/group"
echo 'app:!:19000::::::' >>"$rootfs/etc/shadow"
tar --numeric-owner -C "$rootfs" -cf "$out" .
if mkdir -p "$cache" 2>/dev/null; then
  cp "$out" "$cached.partial" && mv "$cached.partial" "$cached"
  find "$cache" -name "base-$suite-$label-*.tar" ! -newer "$cached" ! -path "$cached" -delete
fi
