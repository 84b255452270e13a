#!/usr/bin/env bash
# bench/fork.sh [-t TRIALS] [-c CONCURRENCY] [-s SETUP_S]: set up once, fork many (docs/sweeps.md "Forks").
# `forgectl run TASK --agent oracle --trials 20 --concurrency 4` of a task written here whose setup_script
# sleeps 5 s (a json-db fixture, a bash oracle), with forks (the default) and with --no-fork, alternating,
# in one run of this script with this tree's binary ($FORGECTL, default build/src/cli/forgectl). Prints
# each run's wall time (the forgectl process's), the setup phase's p50 per way (phases_s.setup or
# ahead_setup), how many trials forked, and the fork/no-fork wall ratio. Needs forgectl-exec beside it.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BIN=${FORGECTL:-$ROOT/build/src/cli/forgectl}
trials=20 conc=4 setup=5
while (($#)); do
  case $1 in
    -t) trials=$2; shift ;;
    -c) conc=$2; shift ;;
    -s) setup=$2; shift ;;
    -h | --help) sed -n 2,7p "$0"; exit 0 ;;
    *) echo "usage: bench/fork.sh [-t TRIALS] [-c CONCURRENCY] [-s SETUP_S]" >&2; exit 2 ;;
  esac
  shift
done
[[ -x $BIN ]] || { echo "bench/fork.sh: no binary $BIN" >&2; exit 1; }
helper=$(dirname "$(dirname "$BIN")")/helper/forgectl-exec
[[ -x $helper ]] || helper=$(dirname "$BIN")/forgectl-exec

WORK=$(mktemp -d /tmp/forgectl-fork-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
task=$WORK/fork_bench
mkdir -p "$task/fixtures"
cat >"$task/task.yaml" <<YAML
task_id: fork_bench
name: fork bench
category: bench
description: "A slow setup."
initial_user_message: "Go."
initial_state: {json_db: fixtures/db.json}
tools:
  agent: {enabled: [bash]}
  user: {enabled: []}
user_simulator: {mode: scripted, scripted_flow: [{default: "Thanks. ###STOP###"}]}
grading: grading.yaml
solution:
  tool_calls:
    - {name: bash, arguments: {command: "cat setup.txt > answer.txt"}}
environment:
  network_policy: no_internet
  setup_script: setup.sh
YAML
printf 'sleep %s\necho set-up $(date +%%s%%N) > setup.txt\n' "$setup" >"$task/setup.sh"
echo '{"notes": [{"id": 1, "text": "from-setup"}]}' >"$task/fixtures/db.json"
cat >"$task/grading.yaml" <<'YAML'
combine: {method: weighted, pass_threshold: 0.99}
state_checks:
  jsonpaths:
    - {path: "$.db.notes[0].text", equals: "from-setup"}
    - {path_glob: "/env/fs/agent-visible/answer.txt", contains_ci: "set-up"}
YAML

run() {  # run WAY [FLAGS...]
  local way=$1 out=$WORK/$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  FORGECTL_EXEC_HELPER=$helper "$BIN" run "$task" --agent oracle --trials "$trials" --concurrency "$conc" \
    --out "$out" --progress plain "$@" >"$out.log" 2>&1 || { echo "bench/fork.sh: $way failed:" >&2; tail -20 "$out.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  python3 - "$out" "$way" "$t0" "$t1" <<'PY'
import json, statistics, sys
out, way = sys.argv[1], sys.argv[2]
wall = float(sys.argv[4]) - float(sys.argv[3])
setups, forked, passed = [], 0, 0
for line in open(out + "/trials.jsonl"):
    t = json.loads(line)
    p = t.get("phases_s", {})
    setups.append(p.get("setup", p.get("ahead_setup", 0)))
    forked += (t.get("snapshot") or {}).get("source") == "forked"
    passed += t.get("score", 0) >= 0.99
print(f"{way:8} wall {wall:7.1f} s  setup p50 {statistics.median(setups):6.2f} s  "
      f"forked {forked}/{len(setups)}  passed {passed}")
print(f"WALL {way} {wall}", file=sys.stderr)
PY
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
{ run fork; run no-fork --no-fork; run fork2; run no-fork2 --no-fork; } 2>"$WORK/walls"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$WORK/walls" <<'PY'
import sys
w = {}
for line in open(sys.argv[1]):
    if line.startswith("WALL "):
        _, way, s = line.split()
        w[way.rstrip("2")] = w.get(way.rstrip("2"), 0) + float(s)
if w.get("no-fork"):
    print(f"fork / no-fork wall: {w['fork'] / w['no-fork']:.2f}")
PY
