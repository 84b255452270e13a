#!/usr/bin/env bash
# bench/runtime.sh [-n N] [-t T]: the sandbox's OCI runtime compared like for like in one run —
# runc, crun (only where the host lets crun apply limits: forgectl's own preflight decides) and
# runsc (gVisor). Per runtime:
#   tool call   N round trips of `bash true` and of `read_file` through forgectl's helper
#               (bench/tool_bench against a stack brought up with `forgectl up --runtime R`), and
#               `docker exec R-runner true` (the CLI) as the reference;
#   container   N of `docker run --rm --runtime R forgectl/runner:local true` (the CLI's whole
#               container lifecycle, no forgectl);
#   trial       T oracle trials of examples/tasks/files-basic (`forgectl run --runtime R
#               --trials T --concurrency 1`), the run's wall time divided by T.
# The CLI rounds are interleaved across runtimes (each round runs every runtime once, in random
# order); the tool calls run one runtime after the other. Prints median [p25-p75] in ms. Needs the runtimes registered
# (scripts/ensure-docker.sh) and forgectl's images (forgectl images build).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BUILD=${FORGECTL_BUILD:-$ROOT/build}
FORGECTL=$BUILD/src/cli/forgectl
TOOLB=$BUILD/bench/tool_bench
IMAGE=forgectl/runner:local
CONTENT=forgectl-bench

n=20 t=3
while getopts n:t:h o; do
  case $o in
    n) n=$OPTARG ;;
    t) t=$OPTARG ;;
    *) echo "usage: bench/runtime.sh [-n ROUNDS] [-t TRIALS]" >&2; exit 2 ;;
  esac
done
die() { echo "bench/runtime.sh: $*" >&2; exit 1; }
[[ -x $FORGECTL && -x $TOOLB ]] || die "build first (scripts/build.sh)"

TMP=$(mktemp -d /tmp/forgectl-runtime-bench.XXXXXX)
declare -A STACK RUNNER
cleanup() {
  local rt
  for rt in "${!STACK[@]}"; do "$FORGECTL" down "${STACK[$rt]}" >/dev/null 2>&1 || true; done
  jobs -p | xargs -r kill 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

# Which runtimes this host can run forgectl's sandboxes under: forgectl up's own preflight says.
runtimes=()
for rt in runc crun runsc; do
  # The runner alone: what the runtime changes is the runner's start and its calls.
  printf 'network_policy: no_internet\nstack: none\n' >"$TMP/$rt.yaml"
  if s=$("$FORGECTL" up --runtime "$rt" "$TMP/$rt.yaml" 2>"$TMP/$rt.up"); then
    STACK[$rt]=$s
    RUNNER[$rt]=$(docker ps -q --no-trunc --filter "label=io.forgectl.stack=$s" --filter label=io.forgectl.role=runner)
    "$FORGECTL" exec "$s" -- sh -c "printf %s $CONTENT > /work/f" || die "cannot write /work/f under $rt"
    runtimes+=("$rt")
  else
    echo "$rt: skipped: $(tail -n 3 "$TMP/$rt.up" | tr '\n' ' ')" >&2
  fi
done
((${#runtimes[@]})) || die "no runtime could bring a stack up"

lap() { local d=$((${EPOCHREALTIME//[.,]/} - t0)); printf '%d.%03d\n' $((d / 1000)) $((d % 1000)); }

# Tool calls: one tool_bench per runtime in turn (a request per line in, its duration in ms out).
for rt in "${runtimes[@]}"; do
  mkfifo "$TMP/$rt.in" "$TMP/$rt.out"
  "$TOOLB" serve "${STACK[$rt]}" "$CONTENT" <"$TMP/$rt.in" >"$TMP/$rt.out" 2>"$TMP/$rt.log" &
  exec 3>"$TMP/$rt.in" 4<"$TMP/$rt.out"
  read -r ready <&4 || ready=
  [[ $ready == ready* ]] || die "tool_bench under $rt did not start: $ready $(cat "$TMP/$rt.log")"
  for ((i = 0; i < n; i++)); do
    for req in bash read_file; do
      echo "$req" >&3
      read -r a <&4
      [[ $a != ERR* ]] || die "$rt: $a"
      echo "$a" >>"$TMP/$rt.tool_${req%_file}"
    done
  done
  exec 3>&- 4<&-
  wait
done

# The CLI references, interleaved: each round runs every runtime once, in random order.
for ((i = 0; i < n; i++)); do
  for rt in $(printf '%s\n' "${runtimes[@]}" | shuf); do
    t0=${EPOCHREALTIME//[.,]/}; docker exec "${RUNNER[$rt]}" true; lap >>"$TMP/$rt.cli_exec"
    t0=${EPOCHREALTIME//[.,]/}; docker run --rm --runtime "$rt" --network none "$IMAGE" true; lap >>"$TMP/$rt.cli_run"
  done
done

for rt in "${runtimes[@]}"; do
  out=$TMP/$rt.run
  t0=${EPOCHREALTIME//[.,]/}
  if "$FORGECTL" run "$ROOT/examples/tasks/files-basic" --agent oracle --runtime "$rt" --trials "$t" \
    --concurrency 1 --out "$out" >"$TMP/$rt.runlog" 2>&1; then
    # The sweep's wall time per trial (up, agent, grading, down, the run's own start shared out).
    echo "$(((${EPOCHREALTIME//[.,]/} - t0) / 1000 / t))" >"$TMP/$rt.trial"
  else
    echo "$rt: forgectl run failed: $(tail -n 3 "$TMP/$rt.runlog")" >&2
  fi
done

stats() {  # median [p25-p75] of a file of numbers
  [[ -s $1 ]] || { echo "-"; return; }
  sort -n "$1" | awk '{a[NR]=$1} END {printf "%.1f [%.1f-%.1f]", a[int((NR+1)/2)], a[int((NR+3)/4)], a[int((3*NR+3)/4)]}'
}
printf '%-34s' "ms, median [p25-p75]"
for rt in "${runtimes[@]}"; do printf '%-24s' "$rt"; done
echo
for row in "tool_bash:tool call bash (forgectl)" "tool_read:tool call read_file (forgectl)" \
  "cli_exec:docker exec true (CLI)" "cli_run:docker run --rm true (CLI)" "trial:sweep per trial (files-basic)"; do
  printf '%-34s' "${row#*:}"
  for rt in "${runtimes[@]}"; do printf '%-24s' "$(stats "$TMP/$rt.${row%%:*}")"; done
  echo
done
echo "($n interleaved rounds; $t trials per runtime; $(nproc) CPUs; $(docker info --format 'cgroup v{{.CgroupVersion}}'))"
