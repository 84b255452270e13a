#!/usr/bin/env bash
# Configures (once) and builds forgectl into ./build. Extra arguments go to `meson setup`;
# FORGECTL_BUILD_TARGETS (ninja targets, space-separated) builds only those instead of everything.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
bash scripts/install-deps.sh
if [ ! -f build/build.ninja ]; then
  # A half-configured build/ (an earlier setup failed) would make every later run fail the same way.
  rm -rf build
  step "meson setup" meson setup build --buildtype=debugoptimized -Dwerror=true "$@"
fi
# shellcheck disable=SC2086 # the targets are words
step "ninja (compiling forgectl)" ninja -C build ${FORGECTL_BUILD_TARGETS:-}
