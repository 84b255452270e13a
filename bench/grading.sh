#!/usr/bin/env bash
# bench/grading.sh [-t TRIALS] [-c CONCURRENCY] [-k TASK]...: the grade phase of a trial, before and after, in one run.
# `forgectl run TASK --agent oracle --trials 12 --concurrency 2` for examples/tasks/library-loans (a Python
# tool server, golden replay), examples/tasks/script-tests (test scripts in a grader container), and two
# tasks written here: checks-loans (library-loans graded by a checks.py alone) and harbor-marker (a Harbor
# task FROM forgectl/runner:local, its verifier in a grader container), with the previous binary
# ($FORGECTL_BEFORE, default /work/main/build/src/cli/forgectl) and this tree's ($FORGECTL_AFTER, default
# build/src/cli/forgectl), alternating. Prints the grade phase's p50 [p25-p75] and p95 per task and binary
# from trials.jsonl's phases_s.grade (and ahead_grader's p50 when graders were made ahead), the load average
# before and after, and the issue's targets (library-loans <= 300 ms, script-tests <= 500 ms, after).
# -k TASK (repeatable) runs only those of the four tasks.
# Each binary needs its forgectl-exec beside it.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BEFORE=${FORGECTL_BEFORE:-/work/main/build/src/cli/forgectl}
AFTER=${FORGECTL_AFTER:-$ROOT/build/src/cli/forgectl}
trials=12 conc=2 tasks=()
while (($#)); do
  case $1 in
    -t) trials=$2; shift ;;
    -c) conc=$2; shift ;;
    -k) tasks+=("$2"); shift ;;
    -h | --help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "usage: bench/grading.sh [-t TRIALS] [-c CONCURRENCY] [-k TASK]..." >&2; exit 2 ;;
  esac
  shift
done
for b in "$BEFORE" "$AFTER"; do
  [[ -x $b ]] || { echo "bench/grading.sh: no binary $b" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/forgectl-grading-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

run() {  # run WAY BIN TASK
  local out=$WORK/$1-$(basename "$3")
  local helper
  helper=$(dirname "$2")/forgectl-exec
  [[ -x $helper ]] || helper=$(dirname "$(dirname "$2")")/helper/forgectl-exec
  FORGECTL_EXEC_HELPER=$helper "$2" run "$3" --agent oracle --trials "$trials" --concurrency "$conc" \
    --out "$out" --progress plain >"$out.log" 2>&1 || { echo "bench/grading.sh: $1 on $3 failed:" >&2; tail -20 "$out.log" >&2; exit 1; }
  echo "$out"
}

# checks-loans: the library-loans task graded by checks.py alone (the checkout succeeded once).
cp -r "$ROOT/examples/tasks/library-loans" "$WORK/checks-loans"
cat >"$WORK/checks-loans/grading.yaml" <<'YAML'
combine: {method: weighted, pass_threshold: 0.99}
custom_checks: {file: checks.py, interface_version: "1.0"}
YAML
cat >"$WORK/checks-loans/checks.py" <<'PY'
from tolokaforge.core.grading.checks_interface import CheckFailed, CheckPassed, check, init

_ctx = None


@init(interface_version="1.0")
def setup(ctx):
    global _ctx
    _ctx = ctx


@check
def lent():
    calls = [c for c in _ctx.tool_calls if c.name == "checkout_book" and c.status == "success"]
    return CheckPassed("lent") if len(calls) == 1 else CheckFailed(f"{len(calls)} checkouts")
PY
# harbor-marker: a Harbor task whose oracle leaves a file its verifier looks for.
mkdir -p "$WORK/harbor-marker/environment" "$WORK/harbor-marker/tests" "$WORK/harbor-marker/solution"
printf 'version = "1.0"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n[environment]\nnetwork_mode = "no-network"\n' \
  >"$WORK/harbor-marker/task.toml"
echo "Write 42 to answer.txt." >"$WORK/harbor-marker/instruction.md"
printf 'FROM forgectl/runner:local\nWORKDIR /work\nUSER 1000:1000\n' >"$WORK/harbor-marker/environment/Dockerfile"
echo 'echo 42 > answer.txt' >"$WORK/harbor-marker/solution/solve.sh"
echo 'if grep -q 42 answer.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt' \
  >"$WORK/harbor-marker/tests/test.sh"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()
((${#tasks[@]})) || tasks=(library-loans script-tests checks-loans harbor-marker)
for task in "${tasks[@]}"; do
  dir=$ROOT/examples/tasks/$task
  [[ -d $dir ]] || dir=$WORK/$task
  for way in before after; do
    bin=$BEFORE
    [[ $way == after ]] && bin=$AFTER
    rows+=("$task $way $(run "$way" "$bin" "$dir")")
  done
done
echo "load average (1, 5, 15 min): $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after"

python3 - "$trials" "${rows[@]}" <<'PY'
import json, statistics, sys
trials = int(sys.argv[1])
targets = {"library-loans": 300, "script-tests": 500}
print(f"grade phase, {trials} oracle trials per run (ms): p50 [p25-p75] p95, passed")
res = {}
for row in sys.argv[2:]:
    task, way, out = row.split(" ", 2)
    recs = [json.loads(l) for l in open(out + "/trials.jsonl") if l.strip()]
    g = sorted(r["phases_s"]["grade"] * 1000 for r in recs if "grade" in r.get("phases_s", {}))
    q = statistics.quantiles(g, n=4) if len(g) > 1 else [g[0]] * 3
    p95 = statistics.quantiles(g, n=20, method="inclusive")[18] if len(g) > 1 else g[0]
    passed = sum(r["binary_pass"] for r in recs)
    sources = {}
    for r in recs:
        s = r.get("golden", {}).get("source")
        if s: sources[s] = sources.get(s, 0) + 1
    res[(task, way)] = q[1]
    extra = " golden: " + ", ".join(f"{k} {v}" for k, v in sorted(sources.items())) if sources else ""
    ahead = [r["phases_s"]["ahead_grader"] * 1000 for r in recs if "ahead_grader" in r.get("phases_s", {})]
    if ahead: extra += f" ahead_grader p50 {statistics.median(ahead):.0f} ms ({len(ahead)} trials)"
    print(f"  {task:14s} {way:6s} {q[1]:8.0f} [{q[0]:.0f}-{q[2]:.0f}] {p95:.0f}  {passed}/{len(recs)}{extra}")
for task, t in targets.items():
    if (task, "after") in res:
        a, b = res[(task, "after")], res.get((task, "before"))
        verdict = "met" if a <= t else "NOT met"
        print(f"  target {task} <= {t} ms: {verdict} ({a:.0f} ms; before {b:.0f} ms)")
PY
