#!/usr/bin/env bash
# Configures (once) and builds forgectl into ./build. Extra arguments go to `meson setup`;
# FORGECTL_BUILD_TARGETS (ninja targets, space-separated) builds only those instead of everything.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
bash scripts/install-deps.sh
# ccache (installed above) sits before the compiler by itself: meson finds it on PATH when it
# configures build/. Its settings are set here, not left to a config file a clean machine lacks:
# the cache in CCACHE_DIR (default ~/.cache/ccache); paths under the checkout taken relative to
# it, the build directory's path out of the hash (-g1 line tables only name it), the compiler
# known by its content and one locale, so another checkout of the same sources (CI's clone, the
# fresh-machine check's /root/forgectl) hits. A hit needs the same compiler input after
# preprocessing, so a missing header fails the build with or without a cache.
ccache_env
if [ ! -f build/build.ninja ]; then
  # A half-configured build/ (an earlier setup failed) would make every later run fail the same way.
  rm -rf build
  step "meson setup" meson setup build --buildtype=debugoptimized -Dwerror=true "$@"
fi
# This build's own compiles, counted apart from whatever else shares the cache (scripts/lib.sh).
stats="$PWD/build/ccache-stats.log"
rm -f "$stats"
# shellcheck disable=SC2086 # the targets are words
CCACHE_STATSLOG=$stats step "ninja (compiling forgectl)" ninja -C build ${FORGECTL_BUILD_TARGETS:-}
[ -z "${FORGECTL_STEP_TIMES:-}" ] || echo "build.sh: ccache: $(ccache_counts "$stats")" >>"$FORGECTL_STEP_TIMES"
