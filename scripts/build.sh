#!/usr/bin/env bash
# Configures (once) and builds forgectl into ./build. Extra arguments go to `meson setup`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if [ ! -f build/build.ninja ]; then
  meson setup build --buildtype=debugoptimized -Dwerror=true "$@" >/dev/null
fi
ninja -C build >/dev/null
