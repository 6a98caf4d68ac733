#!/usr/bin/env bash
# Install Debian's chromium when it is missing (the browser tests drive it through playwright; no
# browser build is ever downloaded). Prints the browser's path. Needs root and apt-get.
set -euo pipefail
for candidate in /usr/bin/chromium /usr/bin/chromium-browser; do
  if [ -x "$candidate" ]; then echo "$candidate"; exit 0; fi
done
export DEBIAN_FRONTEND=noninteractive
# another session may be installing packages: wait for it rather than fail on dpkg's lock
exec 9>/tmp/apt.lock
flock 9
apt-get install -y -q chromium >&2 || { apt-get update -q >&2 && apt-get install -y -q chromium >&2; }
echo /usr/bin/chromium
