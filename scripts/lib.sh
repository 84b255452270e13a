# Sourced by the other scripts. Quiet on success, never silent on failure:
#   step NAME CMD...        runs CMD with its output kept aside; on failure names the step, prints
#                           the last lines of that output and exits with CMD's code.
#   shown_step NAME CMD...  runs CMD with its output shown as it comes; on failure names the step
#                           and exits with CMD's code.
# With FORGECTL_STEP_TIMES=FILE each step appends "NAME: SECONDS s" to FILE (the fresh-machine
# check prints them, to show where a slow machine spends its time).
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
