#!/usr/bin/env bash
# System packages the app and its tests need: ffmpeg (benchmarks), OSMesa/EGL (offscreen body
# rendering), Chromium (browser tests). Installs only what is missing; needs root for apt-get.
set -euo pipefail
need=()
command -v ffmpeg >/dev/null 2>&1 || need+=(ffmpeg)
[ -x /usr/bin/chromium ] || need+=(chromium)
for pkg in libosmesa6 libegl1 libgl1-mesa-dri libglu1-mesa; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "warning: missing system packages (${need[*]}); run as root: apt-get install -y ${need[*]}" >&2
  exit 0
fi
echo "installing system packages: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
