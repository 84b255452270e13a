#!/usr/bin/env bash
# bench/tool.sh [-n N]: one tool call's round trip as the agent loop makes it (ToolExecutor::call
# through forgectl's helper in the runner) vs `docker exec` (the CLI) and docker-py's exec_run, for
# `read_file` of a small workspace file and `bash` running `true`. Interleaved: each round runs
# every way once, in random order, against a stack brought up with `forgectl up` (taken down at
# exit, also on Ctrl-C). Prints median [p25-p75] tables with ratios vs the CLI (bench/README.md).
# shellcheck disable=SC2317  # the way_* functions and traps are called indirectly
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BUILD=${FORGECTL_BUILD:-$ROOT/build}
SOCK=${FORGECTL_BENCH_SOCKET:-/var/run/docker.sock}
IMAGE=forgectl/runner:local
FORGECTL=$BUILD/src/cli/forgectl
TOOLB=$BUILD/bench/tool_bench
MANIFEST=$ROOT/examples/environments/no-internet.yaml
CONTENT=forgectl-bench  # the workspace file f: 14 bytes, no newline

usage() { echo "usage: bench/tool.sh [-n N]  (N rounds, default 30, at least 4; each round runs every way once)"; }
die() { echo "bench/tool.sh: $*" >&2; exit 1; }

n=30
while (($#)); do
  case $1 in
    -n) n=${2:-}; shift ;;
    -n*) n=${1#-n} ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 4)); then usage >&2; exit 2; fi

export DOCKER_HOST=unix://$SOCK
PY=
for p in ${FORGECTL_BENCH_PYTHON:-} /usr/bin/python3 python3; do
  if "$p" -c 'import docker' 2>/dev/null; then PY=$p; break; fi
done
[[ -n $PY ]] || die "no python3 with docker-py (python3-docker); set FORGECTL_BENCH_PYTHON"
command -v docker >/dev/null || die "the docker CLI is missing"

# FORGECTL_BENCH_NO_BUILD=1: use the binaries as they are (another build of the same tree is running).
if [[ ${FORGECTL_BENCH_NO_BUILD:-} == 1 ]]; then
  [[ -x $FORGECTL && -x $TOOLB ]] || die "$FORGECTL or $TOOLB is missing; build them (ninja -C $BUILD)"
else
  ninja -C "$BUILD" src/cli/forgectl bench/tool_bench >/dev/null || die "build failed (ninja -C $BUILD)"
fi
if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  "$FORGECTL" images build || die "could not build $IMAGE"
fi

# ---- set-up and teardown ----------------------------------------------------------------
# The manifest is copied under a name of this run's own, so the stack is fg-tool-bench-<pid>-…:
# an up interrupted before it printed its name can still be found, and no one else's stack is.

TMP=$(mktemp -d /tmp/forgectl-toolbench.XXXXXX)
STACK='' FG_PID='' PY_PID=''
cleanup() {
  exec 3>&- 4<&- 5>&- 6<&-  # stdin EOF: both servers exit
  local p
  for p in $FG_PID $PY_PID; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  if [[ -n $STACK ]]; then
    "$FORGECTL" down "$STACK" >/dev/null 2>&1 || echo "bench/tool.sh: could not take stack $STACK down" >&2
    STACK=''
  fi
  local s  # an up that was interrupted before it printed the name
  for s in $("$FORGECTL" ps 2>/dev/null | awk -v p="fg-tool-bench-$$-" 'index($1, p) == 1 { print $1 }'); do
    "$FORGECTL" down "$s" >/dev/null 2>&1 || echo "bench/tool.sh: could not take stack $s down" >&2
  done
  rm -rf "$TMP"
}
interrupted() {
  trap - EXIT INT TERM
  echo >&2
  cleanup
  exit 130
}
trap cleanup EXIT
trap interrupted INT TERM

cp "$MANIFEST" "$TMP/tool-bench-$$.yaml"
STACK=$("$FORGECTL" up "$TMP/tool-bench-$$.yaml" 2>"$TMP/up.log") || { cat "$TMP/up.log" >&2; die "forgectl up failed"; }
RUNNER=$(docker ps -q --no-trunc --filter "label=io.forgectl.stack=$STACK" --filter label=io.forgectl.role=runner)
[[ -n $RUNNER ]] || die "stack $STACK has no running runner"
"$FORGECTL" exec "$STACK" -- sh -c "printf %s $CONTENT > /work/f" || die "cannot write /work/f in $STACK"

# The two long-lived clients: one request per line in, one duration (ms) per line out.
mkfifo "$TMP/fg.in" "$TMP/fg.out" "$TMP/py.in" "$TMP/py.out"
"$TOOLB" serve "$STACK" "$CONTENT" <"$TMP/fg.in" >"$TMP/fg.out" 2>"$TMP/fg.log" &
FG_PID=$!
exec 3>"$TMP/fg.in" 4<"$TMP/fg.out"
"$PY" "$HERE/pytool.py" "$RUNNER" "$CONTENT" <"$TMP/py.in" >"$TMP/py.out" 2>"$TMP/py.log" 3>&- 4<&- &  # not a writer of fg.in
PY_PID=$!
exec 5>"$TMP/py.in" 6<"$TMP/py.out"

# ask fg|py REQUEST: one request to a server; its answer (ms) on stdout. SIGPIPE is ignored so
# that a server that died is reported, not the end of this script.
trap '' PIPE
ask() {
  local answer
  if [[ $1 == fg ]]; then
    echo "$2" >&3 && read -r answer <&4
  else
    echo "$2" >&5 && read -r answer <&6
  fi 2>/dev/null || answer="ERR the $1 server ended"
  [[ $answer != ERR* ]] || { echo "$answer" >&2; return 1; }
  echo "$answer"
}
read -r ready <&4 || ready=
[[ $ready == ready* ]] || { cat "$TMP/fg.log" >&2; die "tool_bench did not start: $ready"; }
open_ms=${ready#ready }
read -r ready <&6 || ready=
[[ $ready == ready ]] || { cat "$TMP/py.log" >&2; die "pytool.py did not start: $ready"; }

# ---- the ways: each makes one call and prints its duration in ms ------------------------

lap() {
  local d=$((${EPOCHREALTIME//[.,]/} - t0))
  printf '%d.%03d\n' $((d / 1000)) $((d % 1000))
}
way_fg_read() { ask fg read_file; }
way_fg_bash() { ask fg bash; }
way_fg_sbread() { ask fg sb_read; }
way_fg_sbrun() { ask fg sb_run; }
way_fg_ping() { ask fg ping; }
way_fg_calc() { ask fg calculator; }
way_py_read() { ask py read_file; }
way_py_bash() { ask py bash; }
way_cli_read() {
  t0=${EPOCHREALTIME//[.,]/}
  docker exec "$RUNNER" cat /work/f >"$TMP/cli.out" || return 1
  lap
  [[ $(<"$TMP/cli.out") == "$CONTENT" ]]
}
way_cli_bash() {
  t0=${EPOCHREALTIME//[.,]/}
  docker exec "$RUNNER" true || return 1
  lap
}

# ---- rounds -----------------------------------------------------------------------------

ways=(fg_read cli_read py_read fg_bash cli_bash py_bash fg_sbread fg_sbrun fg_ping fg_calc)

echo "forgectl tool round trips: $n rounds, interleaved, each round in random order (ms per call)"
echo "  daemon $(docker version --format '{{.Server.Version}} (API {{.Server.APIVersion}})'), CLI $(docker version --format '{{.Client.Version}}')," \
  "docker-py $("$PY" -c 'import docker; print(docker.__version__)') ($PY), forgectl $("$FORGECTL" --version | cut -d' ' -f2)"
echo "  stack $STACK (no_internet, core), runner ${RUNNER:0:12}"
echo "  $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# The agent loop's first call starts the helper (exec create + start + ping): shown apart, never
# in a median.
first=$(way_fg_read) || die "the first read_file failed: $(tail -n 3 "$TMP/fg.log")"
echo "  open_stack_tools: $open_ms ms; first call (read_file, starts the helper): $first ms"

run_way() { "way_$1" >>"$2" 2>>"$TMP/$1.log" || { tail -n 5 "$TMP/$1.log" >&2; die "way $1 failed${3:-}"; }; }
for w in "${ways[@]}"; do run_way "$w" /dev/null; done  # warm-up, not recorded
# Each round runs the ways in a fresh random order (Fisher-Yates): the in-process calls are so short
# that what ran just before them (a docker exec or a helper call) shows, so no way keeps a neighbour.
k=${#ways[@]}
for ((r = 0; r < n; r++)); do
  printf '\r  round %d/%d' $((r + 1)) "$n" >&2
  order=("${ways[@]}")
  for ((j = k - 1; j > 0; j--)); do
    i=$((RANDOM % (j + 1)))
    w=${order[j]} order[j]=${order[i]} order[i]=$w
  done
  for w in "${order[@]}"; do run_way "$w" "$TMP/$w" " in round $((r + 1))"; done
done
printf '\r%*s\r' 30 '' >&2
echo "  load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

# table TITLE BASELINE TARGET_WAY MAX WAY=LABEL...: median [p25-p75] (statistics.quantiles,
# inclusive) per way with two decimals, ratios vs BASELINE with three (table.py's one decimal
# would print the in-process calls as 0.2 and 0.00x), and the target check.
table() {
  "$PY" - "$TMP" "$@" <<'PYEOF'
import statistics, sys
folder, title, base, target, limit, *ways = sys.argv[1:]
ways = [w.split("=", 1) for w in ways]
stats = {}
for way, _ in ways:
    with open(f"{folder}/{way}") as f:
        xs = [float(x) for x in f if x.strip()]
    p25, med, p75 = statistics.quantiles(xs, n=4, method="inclusive")
    stats[way] = (len(xs), med, p25, p75)
labels = dict(ways)
width = max(len(label) for _, label in ways)
print(f"\n{title}")
print(f"  {'way':<{width}}  {'n':>3}  {'median':>7}  {'p25-p75':>15}  vs {labels[base]}")
for way, label in ways:
    n, med, p25, p75 = stats[way]
    print(f"  {label:<{width}}  {n:>3}  {med:>7.2f}  {f'[{p25:.2f}-{p75:.2f}]':>15}  {med / stats[base][1]:.3f}x")
ratio = stats[target][1] / stats[base][1]
print(f"  target: {labels[target]} <= {float(limit):.2f}x {labels[base]}: {ratio:.3f}x"
      f" ({'met' if ratio <= float(limit) else 'MISSED'})")
PYEOF
}
table "read_file of a 14-byte workspace file" cli_read fg_read 0.10 \
  fg_read="forgectl executor->call read_file" fg_sbread="  sandbox read_file alone (helper read)" \
  fg_ping="  helper channel ping alone" fg_calc="  executor alone (calculator 1+1, host)" \
  cli_read="docker exec R cat /work/f (CLI)" py_read="docker-py exec_run cat"
table "bash {\"command\":\"true\"}" cli_bash fg_bash 0.10 \
  fg_bash="forgectl executor->call bash" fg_sbrun="  sandbox run sh -c true alone (helper run)" \
  fg_ping="  helper channel ping alone" fg_calc="  executor alone (calculator 1+1, host)" \
  cli_bash="docker exec R true (CLI)" py_bash="docker-py exec_run true"

exec 3>&- 4<&-  # the forgectl server's stdin ends: it reports its helper starts
wait "$FG_PID" || true
FG_PID=
grep -h "^helper" "$TMP/fg.log" | sed 's/^/  forgectl: /'
exit 0
