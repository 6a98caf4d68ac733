#!/usr/bin/env bash
# Install what the case-insensitive file-system tests mount with: exFAT through FUSE (exfat-fuse,
# exfatprogs for mkfs.exfat), from Debian's packages. Needs root and apt-get.
set -euo pipefail
if command -v mkfs.exfat >/dev/null && command -v mount.exfat-fuse >/dev/null && command -v losetup >/dev/null; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# another session may be installing packages: wait for it rather than fail on dpkg's lock
exec 9>/tmp/apt.lock
flock 9
packages="exfat-fuse exfatprogs mount"
apt-get install -y -q $packages >&2 || { apt-get update -q >&2 && apt-get install -y -q $packages >&2; }
