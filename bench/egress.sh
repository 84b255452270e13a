#!/usr/bin/env bash
# bench/egress.sh [-n ROUNDS]: what the trial's resolver and egress ledger cost under limited_internet,
# before and after, in one run. With the previous binary ($FORGECTL_BEFORE, no resolver, no ledger) and
# this tree's ($FORGECTL_AFTER), alternating, on examples/tasks/pinned-package (limited_internet, its
# upstream reached through the egress proxy):
#   - stack setup: `forgectl up --json`'s took_ms (then `down`), ROUNDS times each;
#   - a proxied request: 20 plain-HTTP GETs through the egress proxy from the runner, timed inside it;
#   - a whole trial: `forgectl run --agent oracle --trials 2 --concurrency 2`, ROUNDS/2 sweeps per binary,
#     alternating; phases_s.up (or ahead_up) and the sum of the trial's phases (the ledger is read at down).
# Prints p50 per binary and the ratio after/before; the issue's target is <= 1.1x.
# Each binary needs its forgectl-exec beside it (or in ../helper/).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BEFORE=${FORGECTL_BEFORE:-}
AFTER=${FORGECTL_AFTER:-$ROOT/build/src/cli/forgectl}
rounds=8
while (($#)); do
  case $1 in
    -n) rounds=$2; shift ;;
    -h | --help) sed -n 2,11p "$0"; exit 0 ;;
    *) echo "usage: bench/egress.sh [-n ROUNDS]" >&2; exit 2 ;;
  esac
  shift
done
[[ -n $BEFORE ]] || { echo "bench/egress.sh: set FORGECTL_BEFORE to the previous forgectl binary" >&2; exit 2; }
for b in "$BEFORE" "$AFTER"; do
  [[ -x $b ]] || { echo "bench/egress.sh: no binary $b" >&2; exit 1; }
done
TASK=$ROOT/examples/tasks/pinned-package
WORK=$(mktemp -d /tmp/forgectl-egress-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

helper_of() {
  local h
  h=$(dirname "$1")/forgectl-exec
  [[ -x $h ]] || h=$(dirname "$(dirname "$1")")/helper/forgectl-exec
  echo "$h"
}

# One `up`: its took_ms and 20 proxied GETs' time (ms, inside the runner), then `down`.
up_once() {  # up_once BIN → "took_ms get_ms"
  local bin=$1 json name runner t
  json=$(FORGECTL_EXEC_HELPER=$(helper_of "$bin") "$bin" up "$TASK" --json 2>"$WORK/up.err") ||
    { echo "bench/egress.sh: up with $bin failed:" >&2; tail -5 "$WORK/up.err" >&2; exit 1; }
  name=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["name"])' "$json")
  runner=$name-runner
  # busybox time: "real\t0m 0.12s"
  t=$(docker exec "$runner" sh -c 'for i in 1 2 3; do printf "GET http://pkgs.example.test/simple/ HTTP/1.0\r\n\r\n" | nc egress-proxy 3128 >/dev/null; done;
      ( time sh -c "for i in \$(seq 20); do printf \"GET http://pkgs.example.test/simple/ HTTP/1.0\r\n\r\n\" | nc egress-proxy 3128 >/dev/null; done" ) 2>&1' |
    sed -n 's/^real[^0-9]*\([0-9]*\)m \([0-9.]*\)s.*/\1 \2/p' | awk '{print ($1*60+$2)*1000}')
  FORGECTL_EXEC_HELPER=$(helper_of "$bin") "$bin" down "$name" >/dev/null 2>&1
  echo "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["took_ms"])' "$json") $t"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$WORK/up.txt"
for ((i = 0; i < rounds; i++)); do
  for way in before after; do
    bin=$BEFORE
    [[ $way == after ]] && bin=$AFTER
    echo "$way $(up_once "$bin")" >>"$WORK/up.txt"
  done
done
# The sweeps alternate too, two trials at a time, so a drift in the machine's load falls on both.
for ((i = 0; i < (rounds + 1) / 2; i++)); do
  for way in before after; do
    bin=$BEFORE
    [[ $way == after ]] && bin=$AFTER
    out="$WORK/run-$way-$i"
    FORGECTL_EXEC_HELPER=$(helper_of "$bin") "$bin" run "$TASK" --agent oracle --trials 2 --concurrency 2 \
      --out "$out" --progress plain >"$out.log" 2>&1 ||
      { echo "bench/egress.sh: $way run failed:" >&2; tail -20 "$out.log" >&2; exit 1; }
  done
done
echo "load average (1, 5, 15 min): $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after"
python3 - "$WORK" "$rounds" <<'PY'
import glob, json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
up = {"before": [], "after": []}
get = {"before": [], "after": []}
for line in open(work + "/up.txt"):
    way, took, t = line.split()
    up[way].append(float(took)); get[way].append(float(t) / 20)
def wall(r):  # the trial's recorded phases, summed (started_at/finished_at have whole seconds)
    return sum(v for k, v in r["phases_s"].items() if not k.startswith("claim_")) * 1000
trial = {}
for way in ("before", "after"):
    recs = [json.loads(l) for f in sorted(glob.glob(f"{work}/run-{way}-*/trials.jsonl")) for l in open(f) if l.strip()]
    # A trial the warm pool brought up ahead has its up as ahead_up.
    ups = [r["phases_s"].get("up", r["phases_s"].get("ahead_up", 0)) * 1000 for r in recs]
    trial[way] = (ups, [wall(r) for r in recs], sum(r["binary_pass"] for r in recs), len(recs))
def row(name, b, a):
    mb, ma = statistics.median(b), statistics.median(a)
    print(f"  {name:34s} before {mb:8.1f}  after {ma:8.1f}  ratio {ma / mb:5.2f}x  (target <= 1.1x)")
print(f"limited_internet, examples/tasks/pinned-package, {rounds} rounds each (ms, p50):")
row("stack setup (up took_ms)", up["before"], up["after"])
row("proxied GET through the proxy", get["before"], get["after"])
row("trial: up phase", trial["before"][0], trial["after"][0])
row("trial: its phases, summed", trial["before"][1], trial["after"][1])
for way in ("before", "after"):
    print(f"  {way}: {trial[way][2]}/{trial[way][3]} trials passed")
PY
