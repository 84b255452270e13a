#!/usr/bin/env bash
# bench/sweep.sh [-n N] [-t TRIALS] [-c CONCURRENCY]: the cost of a sweep per trial.
# `forgectl run examples/tasks/files-basic --agent oracle --trials 12 --concurrency 4` vs bench/pysweep.py,
# which makes the same daemon calls by hand with docker-py on a pool of 4 threads, and bench/pysweep.py
# --declared, which brings up the stack the task declares (network, json-db, runner) as compose or
# Tolokaforge would: the reference of the issue's target. All run in one session, alternating. Prints median [p25-p75] tables with the ratios forgectl/docker-py: wall time per
# trial, and the process's peak RSS (`/usr/bin/time -v`). See bench/README.md. Also: `bench/run.sh sweep`.
# shellcheck disable=SC2317  # the way_* functions and traps are called indirectly
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BUILD=${FORGECTL_BUILD:-$ROOT/build}
SOCK=${FORGECTL_BENCH_SOCKET:-/var/run/docker.sock}
FORGECTL=$BUILD/src/cli/forgectl
TASK=$ROOT/examples/tasks/files-basic
GNU_TIME=/usr/bin/time

usage() {
  echo "usage: bench/sweep.sh [-n N] [-t TRIALS] [-c CONCURRENCY]"
  echo "  N runs of each way (default 3, at least 2) after one unrecorded warm-up run each;"
  echo "  each run is TRIALS trials (default 12) at CONCURRENCY at once (default 4)"
}
die() { echo "bench/sweep.sh: $*" >&2; exit 1; }

n=3 trials=12 conc=4
while (($#)); do
  case $1 in
    -n) n=${2:-}; shift ;;
    -n*) n=${1#-n} ;;
    -t) trials=${2:-}; shift ;;
    -t*) trials=${1#-t} ;;
    -c) conc=${2:-}; shift ;;
    -c*) conc=${1#-c} ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
if ! [[ $n =~ ^[0-9]+$ && $trials =~ ^[0-9]+$ && $conc =~ ^[0-9]+$ ]] || ((n < 2 || trials < 1 || conc < 1)); then
  usage >&2
  exit 2
fi

export DOCKER_HOST=unix://$SOCK  # both ways talk to the same daemon
PY=
for p in ${FORGECTL_BENCH_PYTHON:-} /usr/bin/python3 python3; do
  if "$p" -c 'import docker' 2>/dev/null; then PY=$p; break; fi
done
[[ -n $PY ]] || die "no python3 with docker-py (python3-docker); set FORGECTL_BENCH_PYTHON"
command -v docker >/dev/null || die "the docker CLI is missing"

# ---- set-up -------------------------------------------------------------------------------

# GNU time reports the peak RSS; Debian's package is `time` (bash's builtin cannot).
if ! "$GNU_TIME" -v true >/dev/null 2>&1; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "bench/sweep.sh: installing GNU time (apt-get install time)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null ||
      { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null; } ||
      die "could not install GNU time"
  fi
  "$GNU_TIME" -v true >/dev/null 2>&1 || die "$GNU_TIME (GNU time, Debian package 'time') is missing"
fi

# FORGECTL_BENCH_NO_BUILD=1: use the binaries as they are (another build of the same tree is running).
if [[ ${FORGECTL_BENCH_NO_BUILD:-} != 1 ]]; then
  for try in 1 2 3 4; do
    if ninja -C "$BUILD" src/cli/forgectl src/helper/forgectl-exec >"${TMPDIR:-/tmp}/forgectl-sweepbench-ninja.$$" 2>&1; then
      break
    fi
    ((try < 4)) || { tail -n 20 "${TMPDIR:-/tmp}/forgectl-sweepbench-ninja.$$" >&2; die "build failed (ninja -C $BUILD)"; }
    sleep 15
  done
  rm -f "${TMPDIR:-/tmp}/forgectl-sweepbench-ninja.$$"
fi
[[ -x $FORGECTL && -x $BUILD/src/helper/forgectl-exec ]] || die "$FORGECTL or its helper is missing; build them (ninja -C $BUILD)"
if ! docker image inspect forgectl/runner:local >/dev/null 2>&1 || ! docker image inspect forgectl/services:local >/dev/null 2>&1; then
  "$FORGECTL" images build || die "could not build forgectl's local images"
fi

TMP=$(mktemp -d /tmp/forgectl-sweepbench.XXXXXX)
RUN=$$  # io.forgectl.bench.run of the docker-py objects
# Time a copy of the binaries (a rebuild of the shared build directory must not change them mid-run);
# forgectl-exec sits beside forgectl, where forgectl looks for it.
mkdir "$TMP/bin" "$TMP/runs" "$TMP/time" "$TMP/rss" "$TMP/own"
cp "$FORGECTL" "$BUILD/src/helper/forgectl-exec" "$TMP/bin/" || die "cannot copy the binaries to $TMP/bin"
FORGECTL_SRC=$FORGECTL FORGECTL=$TMP/bin/forgectl
# forgectl removes its own stacks, also on SIGINT (its leak audit checks); the docker-py objects are
# found by label.
sweep_py() {
  docker ps -aq --filter "label=io.forgectl.bench.run=$RUN" | xargs -r docker rm -f -v >/dev/null 2>&1 || true
  docker network ls -q --filter "label=io.forgectl.bench.run=$RUN" | xargs -r docker network rm >/dev/null 2>&1 || true
}
cleanup() {
  sweep_py
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

# ---- the ways: each runs one sweep of $1 trials and appends ms per trial, peak RSS (MiB) and the ----
# ---- way's own clock (ms per trial) to $TMP/{time,rss,own}/WAY (when $2 is "record")            ----

lap() {  # elapsed ms since $t0, from $EPOCHREALTIME (no subprocess)
  local d=$((${EPOCHREALTIME//[.,]/} - t0))
  printf '%d.%03d' $((d / 1000)) $((d % 1000))
}
seq_no=0
# record WAY TRIALS WALL_MS TIMEFILE OWN_SECONDS
record() {
  local rss
  rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$4")
  [[ -n $rss ]] || die "no peak RSS in $4"
  awk -v w="$3" -v t="$2" 'BEGIN { printf "%.3f\n", w / t }' >>"$TMP/time/$1"
  awk -v k="$rss" 'BEGIN { printf "%.3f\n", k / 1024 }' >>"$TMP/rss/$1"
  awk -v s="$5" -v t="$2" 'BEGIN { printf "%.3f\n", s * 1000 / t }' >>"$TMP/own/$1"
}

# The sweep as a user runs it. Passes only when every trial was graded and passed (no infra errors).
way_fg() {
  local out=$TMP/runs/fg-$((++seq_no)) wall own passed
  t0=${EPOCHREALTIME//[.,]/}
  "$GNU_TIME" -v -o "$TMP/fg.time" "$FORGECTL" run "$TASK" --agent oracle --trials "$1" --concurrency "$conc" \
    --out "$out" --progress plain >"$TMP/fg.log" 2>&1 || { tail -n 20 "$TMP/fg.log" >&2; die "forgectl run failed"; }
  wall=$(lap)
  passed=$(grep -c '"binary_pass":true' "$out/trials.jsonl" || true)
  ((passed == $1)) || { tail -n 20 "$TMP/fg.log" >&2; die "forgectl run: $passed of $1 trials passed"; }
  # Its own clock, from the summary line: "N/M graded trials passed; …; 11.3 s".
  own=$(sed -n 's/^.*graded trials passed.*; \([0-9.]*\) s$/\1/p' "$TMP/fg.log" | tail -n 1)
  [[ -n $own ]] || die "no duration in forgectl run's summary line"
  if [[ ${2:-} == record ]]; then
    record fg "$1" "$wall" "$TMP/fg.time" "$own"
    cp "$out/trials.jsonl" "$TMP/runs/fg-$seq_no.jsonl"
  fi
  rm -rf "$out"
}
way_py() {
  local wall own
  t0=${EPOCHREALTIME//[.,]/}
  "$GNU_TIME" -v -o "$TMP/py.time" "$PY" "$HERE/pysweep.py" "$1" "$conc" "$RUN" "$TASK/fixtures/problem.txt" \
    >"$TMP/py.log" 2>&1 || { tail -n 20 "$TMP/py.log" >&2; sweep_py; die "pysweep.py failed"; }
  wall=$(lap)
  own=$(awk '$1 == "trials" { print $6 }' "$TMP/py.log")
  [[ -n $own ]] || die "no summary line from pysweep.py"
  [[ ${2:-} != record ]] || record py "$1" "$wall" "$TMP/py.time" "$own"
}
way_pyd() {  # the task's declared stack (pysweep.py --declared)
  local wall own
  t0=${EPOCHREALTIME//[.,]/}
  "$GNU_TIME" -v -o "$TMP/pyd.time" "$PY" "$HERE/pysweep.py" "$1" "$conc" "$RUN" "$TASK/fixtures/problem.txt" --declared \
    >"$TMP/pyd.log" 2>&1 || { tail -n 20 "$TMP/pyd.log" >&2; sweep_py; die "pysweep.py --declared failed"; }
  wall=$(lap)
  own=$(awk '$1 == "trials" { print $6 }' "$TMP/pyd.log")
  [[ -n $own ]] || die "no summary line from pysweep.py --declared"
  [[ ${2:-} != record ]] || record pyd "$1" "$wall" "$TMP/pyd.time" "$own"
}

# ---- rounds -------------------------------------------------------------------------------

echo "forgectl sweep cost: $n runs per way of $trials trials at concurrency $conc, alternating (per trial: ms; peak RSS: MiB)"
echo "  daemon $(docker version --format '{{.Server.Version}} (API {{.Server.APIVersion}})')," \
  "docker-py $("$PY" -c 'import docker; print(docker.__version__)') ($PY), forgectl $("$FORGECTL" --version | cut -d' ' -f2)" \
  "(a copy of $FORGECTL_SRC), host firewall ${FORGECTL_HOST_FIREWALL:-on}"
echo "  $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# One unrecorded warm-up run per way ($conc trials: page cache, image layers, first-call costs),
# then N rounds; the way that goes first alternates.
way_fg "$conc"
way_py "$conc"
way_pyd "$conc"
for ((r = 0; r < n; r++)); do
  printf '\r  round %d/%d' $((r + 1)) "$n" >&2
  if ((r % 2 == 0)); then way_fg "$trials" record; way_py "$trials" record; way_pyd "$trials" record
  else way_pyd "$trials" record; way_py "$trials" record; way_fg "$trials" record; fi
done
printf '\r%*s\r' 30 '' >&2
echo "  load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

FG="forgectl run (oracle, files-basic)" PYM="docker-py pool of $conc, forgectl's sandbox (pysweep.py)"
PYD="docker-py pool of $conc, the declared stack (pysweep.py --declared)"
"$PY" "$HERE/table.py" "sweep: wall time per trial, ms (the process's wall time / $trials trials)" "$TMP/time" pyd \
  fg="$FG" py="$PYM" pyd="$PYD" --target fg:pyd:0.6
"$PY" "$HERE/table.py" "sweep: the same, like for like (the sandbox forgectl gives this task, made by docker-py)" \
  "$TMP/time" py fg="$FG" py="$PYM"
"$PY" "$HERE/table.py" "sweep: each way's own clock per trial, ms (forgectl's summary line; pysweep.py's pool, no interpreter start)" \
  "$TMP/own" pyd fg="$FG" py="$PYM" pyd="$PYD"
"$PY" "$HERE/table.py" "sweep: peak RSS of the process, MiB (/usr/bin/time -v)" "$TMP/rss" pyd \
  fg="$FG" py="$PYM" pyd="$PYD"

# Where forgectl's trial time goes: the medians of phases_s over every recorded trial.
cat "$TMP"/runs/fg-*.jsonl | "$PY" -c '
import json, statistics, sys
phases = {}
for line in sys.stdin:
    for k, v in json.loads(line).get("phases_s", {}).items():
        phases.setdefault(k, []).append(v * 1000)
order = [k for k in ("reserve", "up", "setup", "agent", "grade", "down") if k in phases]
order += sorted(k for k in phases if k not in order)
cells = []
for k in order:
    p25, med, p75 = statistics.quantiles(phases[k], n=4, method="inclusive")
    cells.append(f"{k} {med:.0f} [{p25:.0f}-{p75:.0f}]")
print(f"\nforgectl: phases of one trial (phases_s of trials.jsonl), ms median [p25-p75] over {len(phases[order[0]])} trials")
print("  " + "   ".join(cells))
'
exit 0
