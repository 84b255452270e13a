# Sourced by the other scripts. Quiet on success, never silent on failure:
#   step NAME CMD...        runs CMD with its output kept aside; on failure names the step, prints
#                           the last lines of that output and exits with CMD's code.
#   shown_step NAME CMD...  runs CMD with its output shown as it comes; on failure names the step
#                           and exits with CMD's code.
#   ccache_env              exports the compiler cache's settings for a build of this checkout
#                           (scripts/build.sh says why each).
#   ccache_counts LOG       prints "N hits, M misses" of the compiles a ccache stats log
#                           (CCACHE_STATSLOG) recorded: one build's, whatever else shares the cache.
# With FORGECTL_STEP_TIMES=FILE each step appends "SCRIPT: NAME: SECONDS s" to FILE (.ci/run and
# the fresh-machine check print them, to show where the time goes).
_step_time() {
  [ -n "${FORGECTL_STEP_TIMES:-}" ] || return 0
  echo "$(basename "$0"): $1: $(($(date +%s) - $2)) s" >>"$FORGECTL_STEP_TIMES"
}
step() {
  local name=$1; shift
  local log rc=0
  log=$(mktemp "${TMPDIR:-/tmp}/forgectl-step.XXXXXX")
  local t0; t0=$(date +%s)
  "$@" >"$log" 2>&1 || rc=$?
  _step_time "$name" "$t0"
  if [ "$rc" -eq 0 ]; then
    rm -f "$log"
    return 0
  fi
  echo "$(basename "$0"): step '$name' failed (exit $rc): $*" >&2
  echo "---- last 40 lines of its output (all of it: $log) ----" >&2
  tail -n 40 "$log" >&2
  echo "----" >&2
  exit "$rc"
}

shown_step() {
  local name=$1; shift
  local rc=0 t0; t0=$(date +%s)
  "$@" || rc=$?
  _step_time "$name" "$t0"
  [ "$rc" -eq 0 ] && return 0
  echo "$(basename "$0"): step '$name' failed (exit $rc): $*" >&2
  exit "$rc"
}

ccache_env() {
  export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}" CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 \
    CCACHE_COMPILERCHECK=content
  # ccache hashes the locale (the compiler's messages depend on it): one locale for every build,
  # else a bare machine (no LANG) misses all the host's (LANG=C.UTF-8) entries.
  export LANG=C.UTF-8
  unset LC_ALL LC_CTYPE LC_MESSAGES
}

ccache_counts() {
  [ -f "$1" ] || { echo "0 hits, 0 misses"; return 0; }
  awk '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { hits++ }
    $1 == "cache_miss" { misses++ }
    END { printf "%d hits, %d misses\n", hits, misses }' "$1"
}
