#!/usr/bin/env bash
# bench/scale.sh [-T TURNS] [-S TURN_S] [-r N:C[,N:C...]] [--no-py]: many model-bound trials on one host.
# N trials of examples/tasks/files-basic whose model (bench/scale_llm.py, a local scripted OpenAI-compatible
# server) answers each of T turns after S seconds, at concurrency C, through `forgectl run`; then the same
# sandboxes and turns through a docker-py thread pool of C (bench/pysweep.py TRIALS C RUN FILE T S). For each:
# wall time, efficiency (waves × T × S / wall, waves = ceil(N / C)), claim-to-first-tool-call p50/p95, peak RSS,
# peak threads and CPU of the process, the daemon's CPU (dockerd + containerd), infra errors. See bench/README.md.
# Also: `bench/run.sh scale`.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BUILD=${FORGECTL_BUILD:-$ROOT/build}
SOCK=${FORGECTL_BENCH_SOCKET:-/var/run/docker.sock}
FORGECTL=$BUILD/src/cli/forgectl
TASK=$ROOT/examples/tasks/files-basic
GNU_TIME=/usr/bin/time

usage() {
  echo "usage: bench/scale.sh [-T TURNS] [-S TURN_S] [-r N:C[,N:C...]] [--no-py]"
  echo "  defaults: T 5, S 6, runs 32:16,128:64,256:128 (each N trials at concurrency C); --no-py skips docker-py"
}
die() { echo "bench/scale.sh: $*" >&2; exit 1; }

turns=5 turn_s=6 runs=32:16,128:64,256:128 py_too=1
while (($#)); do
  case $1 in
    -T) turns=${2:-}; shift ;;
    -S) turn_s=${2:-}; shift ;;
    -r) runs=${2:-}; shift ;;
    --no-py) py_too=0 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
[[ $turns =~ ^[0-9]+$ ]] && ((turns >= 3)) || die "-T: at least 3 turns (read, write, answer)"
[[ $turn_s =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "-S: seconds per turn"
[[ $runs =~ ^[0-9]+:[0-9]+(,[0-9]+:[0-9]+)*$ ]] || die "-r: N:C[,N:C...]"

export DOCKER_HOST=unix://$SOCK
PY=
for p in ${FORGECTL_BENCH_PYTHON:-} /usr/bin/python3 python3; do
  if "$p" -c 'import docker' 2>/dev/null; then PY=$p; break; fi
done
[[ -n $PY ]] || die "no python3 with docker-py (python3-docker); set FORGECTL_BENCH_PYTHON"
"$GNU_TIME" -v true >/dev/null 2>&1 || die "$GNU_TIME (GNU time, Debian package 'time') is missing"
if [[ ${FORGECTL_BENCH_NO_BUILD:-} != 1 ]]; then
  flock /tmp/forgectl-build.lock ninja -C "$BUILD" -j2 src/cli/forgectl src/helper/forgectl-exec >/dev/null ||
    die "build failed (ninja -C $BUILD)"
fi
[[ -x $FORGECTL && -x $BUILD/src/helper/forgectl-exec ]] || die "$FORGECTL or its helper is missing"
docker image inspect forgectl/runner:local >/dev/null 2>&1 || "$FORGECTL" images build || die "no forgectl/runner:local"

TMP=$(mktemp -d /tmp/forgectl-scalebench.XXXXXX)
RUN=$$
mkdir "$TMP/bin"
cp "$FORGECTL" "$BUILD/src/helper/forgectl-exec" "$TMP/bin/"
FORGECTL=$TMP/bin/forgectl
LLM_PID=
sweep_py() {
  docker ps -aq --filter "label=io.forgectl.bench.run=$RUN" | xargs -r docker rm -f -v >/dev/null 2>&1 || true
}
cleanup() {
  [[ -z $LLM_PID ]] || kill "$LLM_PID" 2>/dev/null || true
  sweep_py
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'trap - EXIT INT TERM; cleanup; exit 130' INT TERM

"$PY" "$HERE/scale_llm.py" "$TMP/port" "$turn_s" "$turns" &
LLM_PID=$!
for _ in $(seq 50); do [[ -s $TMP/port ]] && break; sleep 0.1; done
[[ -s $TMP/port ]] || die "the fake model did not start"
cat >"$TMP/run.yaml" <<EOF
models:
  agent: {provider: openai_compatible, name: scale-bench, base_url: "http://127.0.0.1:$(cat "$TMP/port")/v1", api_key_env: SCALE_BENCH_KEY}
orchestrator:
  max_turns: $((turns + 2))
  max_attempt_retries: 0
  timeouts: {turn_s: $((${turn_s%.*} * 4 + 30)), episode_s: 30m}
EOF
export SCALE_BENCH_KEY=bench

# CPU seconds (user + system) of a process, from /proc/PID/stat.
cpu_of() {
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0
}
daemon_cpu() {
  local total=0 p
  for p in $(pidof dockerd containerd); do total=$(awk -v a="$total" -v b="$(cpu_of "$p")" 'BEGIN { print a + b }'); done
  echo "$total"
}
# Samples a process's threads and RSS every 0.2 s until it ends; prints "peak_threads peak_rss_mib".
sample() {
  local pid=$1 t=0 r=0 line
  while [[ -d /proc/$pid ]]; do
    line=$(awk '/^Threads:/ { t = $2 } /^VmRSS:/ { r = $2 } END { print t, r }' "/proc/$pid/status" 2>/dev/null || true)
    set -- $line
    (( ${1:-0} > t )) && t=$1
    (( ${2:-0} > r )) && r=$2
    sleep 0.2
  done
  echo "$t $((r / 1024))"
}

results=$TMP/results
: >"$results"
# One forgectl run: N C → a result line.
way_fg() {
  local n=$1 c=$2 out=$TMP/out-fg-$1-$2 d0 d1 t0 wall pid peaks
  d0=$(daemon_cpu)
  t0=${EPOCHREALTIME//[.,]/}
  FORGECTL_EXEC_HELPER=$TMP/bin/forgectl-exec "$GNU_TIME" -v -o "$TMP/fg.time" "$FORGECTL" run "$TASK" --config "$TMP/run.yaml" \
    --trials "$n" --concurrency "$c" --out "$out" --progress plain >"$TMP/fg.log" 2>&1 &
  pid=$!
  sleep 0.3
  peaks=$(sample "$(pgrep -P "$pid" -x forgectl | head -n 1 || echo "$pid")")
  wait "$pid" || { tail -n 30 "$TMP/fg.log" >&2; echo "bench/scale.sh: forgectl run failed (N=$n C=$c)" >&2; }
  wall=$(( (${EPOCHREALTIME//[.,]/} - t0) / 1000 ))
  d1=$(daemon_cpu)
  "$PY" - "$out/trials.jsonl" "$TMP/fg.time" "$n" "$c" "$turns" "$turn_s" "$wall" "$d0" "$d1" "$peaks" "$TMP/fg.log" >>"$results" <<'PYEOF'
import json, math, re, statistics, sys
trials, timef, n, c, turns, turn_s, wall_ms, d0, d1, peaks, log = sys.argv[1:]
n, c, turns, turn_s, wall = int(n), int(c), int(turns), float(turn_s), int(wall_ms) / 1000
recs = [json.loads(l) for l in open(trials)] if trials else []
infra = sum(1 for r in recs if r.get("outcome") != "graded")
passed = sum(1 for r in recs if r.get("binary_pass"))
ready = sorted(r["phases_s"]["claim_to_ready"] * 1000 for r in recs if "claim_to_ready" in r.get("phases_s", {}))
first = sorted(r["phases_s"]["claim_to_first_tool"] * 1000 - turn_s * 1000 for r in recs if "claim_to_first_tool" in r.get("phases_s", {}))
t = open(timef).read()
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) / 1024
cpu = float(re.search(r"User time \(seconds\): ([\d.]+)", t).group(1)) + float(re.search(r"System time \(seconds\): ([\d.]+)", t).group(1))
own = re.findall(r"graded trials passed.*; ([\d.]+) s$", open(log).read(), re.M)
pool = re.findall(r"warm pool: (.*)", open(log).read())
pq = lambda xs, q: xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")
waves = math.ceil(n / c)
ideal = waves * turns * turn_s
threads, prss = peaks.split()
print(json.dumps({"way": "forgectl", "n": n, "c": c, "wall": wall, "own": float(own[-1]) if own else None,
                  "eff": ideal / wall, "eff_own": ideal / float(own[-1]) if own else None,
                  "ready_p50": pq(ready, .5), "ready_p95": pq(ready, .95), "first_p50": pq(first, .5), "first_p95": pq(first, .95),
                  "rss": rss, "threads": int(threads), "cpu": cpu, "daemon_cpu": float(d1) - float(d0),
                  "infra": infra + (n - len(recs)), "passed": passed, "pool": pool[-1] if pool else ""}))
PYEOF
  rm -rf "$out"
}
way_py() {
  local n=$1 c=$2 d0 d1 t0 wall pid peaks
  d0=$(daemon_cpu)
  t0=${EPOCHREALTIME//[.,]/}
  "$GNU_TIME" -v -o "$TMP/py.time" "$PY" "$HERE/pysweep.py" "$n" "$c" "$RUN" "$TASK/fixtures/problem.txt" "$turns" "$turn_s" \
    >"$TMP/py.log" 2>&1 &
  pid=$!
  sleep 0.3
  peaks=$(sample "$(pgrep -P "$pid" | head -n 1 || echo "$pid")")
  wait "$pid" || { tail -n 20 "$TMP/py.log" >&2; sweep_py; }
  wall=$(( (${EPOCHREALTIME//[.,]/} - t0) / 1000 ))
  d1=$(daemon_cpu)
  "$PY" - "$TMP/py.log" "$TMP/py.time" "$n" "$c" "$turns" "$turn_s" "$wall" "$d0" "$d1" "$peaks" >>"$results" <<'PYEOF'
import json, math, re, sys
logf, timef, n, c, turns, turn_s, wall_ms, d0, d1, peaks = sys.argv[1:]
n, c, turns, turn_s, wall = int(n), int(c), int(turns), float(turn_s), int(wall_ms) / 1000
log = open(logf).read()
m = re.search(r"trials (\d+) ok (\d+) seconds ([\d.]+)", log)
f = re.search(r"first_tool_ms ([\d.]+) ([\d.]+)", log)
t = open(timef).read()
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) / 1024
cpu = float(re.search(r"User time \(seconds\): ([\d.]+)", t).group(1)) + float(re.search(r"System time \(seconds\): ([\d.]+)", t).group(1))
waves = math.ceil(n / c)
ideal = waves * turns * turn_s
own = float(m.group(3)) if m else None
threads, prss = peaks.split()
print(json.dumps({"way": "docker-py", "n": n, "c": c, "wall": wall, "own": own, "eff": ideal / wall,
                  "eff_own": ideal / own if own else None, "ready_p50": float("nan"), "ready_p95": float("nan"),
                  "first_p50": float(f.group(1)) if f else float("nan"), "first_p95": float(f.group(2)) if f else float("nan"),
                  "rss": rss, "threads": int(threads), "cpu": cpu, "daemon_cpu": float(d1) - float(d0),
                  "infra": n - int(m.group(2)) if m else n, "passed": int(m.group(2)) if m else 0, "pool": ""}))
PYEOF
}

echo "forgectl at scale: files-basic, a scripted model of $turns turns × ${turn_s} s, runs $runs"
echo "  daemon $(docker version --format '{{.Server.Version}}'), $(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)," \
  "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
way_fg 4 4  # warm-up, not recorded (the services image, page cache)
: >"$results"
for nc in ${runs//,/ }; do
  n=${nc%:*} c=${nc#*:}
  printf '  N=%s C=%s: forgectl…' "$n" "$c" >&2
  way_fg "$n" "$c"
  if ((py_too)); then printf ' docker-py…' >&2; way_py "$n" "$c"; fi
  printf '\n' >&2
done
echo "  load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" - "$results" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
hdr = ("  way          N    C  wall s   eff   own s  eff own  ready p50/p95 ms  1st tool p50/p95 ms  RSS MiB  threads  CPU s  daemon CPU s  infra")
print(hdr)
for r in rows:
    ready = f"{r['ready_p50']:.0f}/{r['ready_p95']:.0f}" if r["ready_p50"] == r["ready_p50"] else "-"
    first = f"{r['first_p50']:.0f}/{r['first_p95']:.0f}" if r["first_p50"] == r["first_p50"] else "-"
    print(f"  {r['way']:10} {r['n']:>4} {r['c']:>4} {r['wall']:>7.1f} {r['eff']:>5.2f} {r['own'] or 0:>7.1f} "
          f"{r['eff_own'] or 0:>8.2f} {ready:>16} {first:>20} {r['rss']:>8.1f} {r['threads']:>8} {r['cpu']:>6.1f} "
          f"{r['daemon_cpu']:>13.1f} {r['infra']:>6}")
for r in rows:
    if r["pool"]:
        print(f"  forgectl N={r['n']} C={r['c']}: warm pool: {r['pool']}")
by = {(r["way"], r["n"], r["c"]): r for r in rows}
for (w, n, c), r in by.items():
    p = by.get(("docker-py", n, c))
    if w == "forgectl" and p:
        print(f"  N={n} C={c}: forgectl/docker-py wall {r['wall'] / p['wall']:.2f}x, RSS {r['rss'] / p['rss']:.2f}x")
PYEOF
exit 0
