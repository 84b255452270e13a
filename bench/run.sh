#!/usr/bin/env bash
# bench/run.sh [exec|lifecycle|all] [-n N] [-b B]: forgectl's engine vs the docker CLI, docker-py and raw curl,
# run interleaved round-robin against the local daemon; prints median [p25-p75] tables with ratios.
# shellcheck disable=SC2317  # the way_* functions and traps are called indirectly
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BUILD=${FORGECTL_BUILD:-$ROOT/build}
SOCK=${FORGECTL_BENCH_SOCKET:-/var/run/docker.sock}
IMAGE=forgectl/runner:local
LABEL=io.forgectl.bench=1
API=http://docker/v1.41
BENCH=$BUILD/bench/engine_bench
FORGECTL=$BUILD/src/cli/forgectl

usage() {
  echo "usage: bench/run.sh [exec|lifecycle|all] [-n N] [-b B]"
  echo "  N rounds (default 20, at least 4); each round runs every way once, B operations in one process (default 1)"
}
die() { echo "bench/run.sh: $*" >&2; exit 1; }

what=all n=20 b=1
while (($#)); do
  case $1 in
    exec | lifecycle | all) what=$1 ;;
    -n) n=${2:-}; shift ;;
    -n*) n=${1#-n} ;;
    -b) b=${2:-}; shift ;;
    -b*) b=${1#-b} ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
if ! [[ $n =~ ^[0-9]+$ && $b =~ ^[0-9]+$ ]] || ((n < 4 || b < 1)); then usage >&2; exit 2; fi

export DOCKER_HOST=unix://$SOCK  # every way talks to the same daemon
PY=
for p in ${FORGECTL_BENCH_PYTHON:-} /usr/bin/python3 python3; do
  if "$p" -c 'import docker' 2>/dev/null; then PY=$p; break; fi
done
[[ -n $PY ]] || die "no python3 with docker-py (python3-docker); set FORGECTL_BENCH_PYTHON"
command -v curl >/dev/null || die "curl is missing"
command -v docker >/dev/null || die "the docker CLI is missing"

# ---- set-up and teardown ----------------------------------------------------------------

ninja -C "$BUILD" src/cli/forgectl bench/engine_bench >/dev/null || die "build failed (ninja -C $BUILD)"
if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  "$FORGECTL" images build || die "could not build $IMAGE"
fi

TMP=$(mktemp -d /tmp/forgectl-bench.XXXXXX)
BOX=forgectl-bench-$$
cleanup() {
  docker rm -f "$BOX" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
# Interrupted mid-round: also sweep what a way had created and not yet removed.
sweep() {
  trap - EXIT INT TERM
  echo >&2
  cleanup
  docker ps -aq --filter "label=$LABEL" --filter status=created --filter status=exited | xargs -r docker rm -f >/dev/null 2>&1 || true
  docker network ls -q --filter "label=$LABEL" | xargs -r docker network rm >/dev/null 2>&1 || true
  exit 130
}
trap cleanup EXIT
trap sweep INT TERM

# ---- the ways: each takes a count and prints one duration in ms per line ---------------

CURL=(curl -sS --fail-with-body --unix-socket "$SOCK")
JSON=(-H 'Content-Type: application/json')

# Elapsed ms since $t0 (microseconds from $EPOCHREALTIME, no subprocess).
lap() {
  local d=$((${EPOCHREALTIME//[.,]/} - t0))
  printf '%d.%03d\n' $((d / 1000)) $((d % 1000))
}

way_exec_forgectl() { "$BENCH" exec "$1" "$BOX"; }
way_exec_helper() { "$BENCH" exec-helper "$1" "$BOX"; }
way_exec_py() { "$PY" "$HERE/pyclient.py" exec "$1" "$BOX"; }
way_exec_cli() {
  local i
  for ((i = 0; i < $1; i++)); do
    t0=${EPOCHREALTIME//[.,]/}
    docker exec "$BOX" true || return 1
    lap
  done
}
way_exec_curl() {
  local i id out
  for ((i = 0; i < $1; i++)); do
    t0=${EPOCHREALTIME//[.,]/}
    id=$("${CURL[@]}" "${JSON[@]}" -d '{"AttachStdout":true,"AttachStderr":true,"Tty":false,"Cmd":["true"]}' \
      "$API/containers/$BOX/exec") || return 1
    id=${id#*\"Id\":\"} id=${id%%\"*}
    "${CURL[@]}" "${JSON[@]}" -d '{"Detach":false,"Tty":false}' -o /dev/null "$API/exec/$id/start" || return 1
    out=$("${CURL[@]}" "$API/exec/$id/json") || return 1
    [[ $out == *'"ExitCode":0'* ]] || return 1
    lap
  done
}

way_run_forgectl() { "$BENCH" run "$1"; }
way_run_py() { "$PY" "$HERE/pyclient.py" run "$1"; }
way_run_cli() {
  local i
  for ((i = 0; i < $1; i++)); do
    t0=${EPOCHREALTIME//[.,]/}
    docker run --rm --network none --label "$LABEL" "$IMAGE" true || return 1
    lap
  done
}
way_run_curl() {
  local i id out
  for ((i = 0; i < $1; i++)); do
    t0=${EPOCHREALTIME//[.,]/}
    id=$("${CURL[@]}" "${JSON[@]}" -d "{\"Image\":\"$IMAGE\",\"Cmd\":[\"true\"],\"Labels\":{\"${LABEL%=*}\":\"1\"},\"HostConfig\":{\"NetworkMode\":\"none\"}}" \
      "$API/containers/create") || return 1
    id=${id#*\"Id\":\"} id=${id%%\"*}
    "${CURL[@]}" -X POST "$API/containers/$id/start" || return 1
    out=$("${CURL[@]}" -X POST "$API/containers/$id/wait") || return 1
    "${CURL[@]}" -X DELETE "$API/containers/$id?force=1&v=1" || return 1
    [[ $out == *'"StatusCode":0'* ]] || return 1
    lap
  done
}

way_net_forgectl() { "$BENCH" network "$1"; }
way_net_py() { "$PY" "$HERE/pyclient.py" network "$1"; }
way_net_cli() {
  local i name
  for ((i = 0; i < $1; i++)); do
    name=forgectl-bench-cli-$$-$i
    t0=${EPOCHREALTIME//[.,]/}
    docker network create --internal --label "$LABEL" "$name" >/dev/null && docker network rm "$name" >/dev/null || return 1
    lap
  done
}
way_net_cli_bridge() {
  local i name
  for ((i = 0; i < $1; i++)); do
    name=forgectl-bench-cli-$$-$i
    t0=${EPOCHREALTIME//[.,]/}
    docker network create --label "$LABEL" "$name" >/dev/null && docker network rm "$name" >/dev/null || return 1
    lap
  done
}
way_net_curl() {
  local i id
  for ((i = 0; i < $1; i++)); do
    t0=${EPOCHREALTIME//[.,]/}
    id=$("${CURL[@]}" "${JSON[@]}" -d "{\"Name\":\"forgectl-bench-curl-$$-$i\",\"CheckDuplicate\":true,\"Driver\":\"bridge\",\"Internal\":true,\"Labels\":{\"${LABEL%=*}\":\"1\"}}" \
      "$API/networks/create") || return 1
    id=${id#*\"Id\":\"} id=${id%%\"*}
    "${CURL[@]}" -X DELETE "$API/networks/$id" || return 1
    lap
  done
}

# ---- rounds -----------------------------------------------------------------------------

ways=()
[[ $what == lifecycle ]] || ways+=(exec_forgectl exec_helper exec_cli exec_py exec_curl)
[[ $what == exec ]] || ways+=(run_forgectl run_cli run_py run_curl net_forgectl net_cli net_py net_curl net_cli_bridge)

if [[ $what != lifecycle ]]; then
  docker run -d --name "$BOX" --label "$LABEL" --network none "$IMAGE" sleep 86400 >/dev/null || die "cannot start $BOX"
fi

echo "forgectl engine benchmarks: $what, $n rounds x $b per way, interleaved round-robin (ms per operation)"
echo "  daemon $(docker version --format '{{.Server.Version}} (API {{.Server.APIVersion}})'), CLI $(docker version --format '{{.Client.Version}}')," \
  "docker-py $("$PY" -c 'import docker; print(docker.__version__)') ($PY), $(curl --version | head -1 | cut -d' ' -f1-2)"
echo "  $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# One unrecorded warm-up run per way (page cache, first-call costs), then rounds that rotate the
# starting way so that no way always follows the same neighbour.
# A way's stderr goes to $TMP/$w.log, shown when it fails.
run_way() { "way_$1" "$b" >>"$2" 2>>"$TMP/$1.log" || { tail -n 5 "$TMP/$1.log" >&2; die "way $1 failed${3:-}"; }; }
for w in "${ways[@]}"; do run_way "$w" /dev/null; done
k=${#ways[@]}
for ((r = 0; r < n; r++)); do
  printf '\r  round %d/%d' $((r + 1)) "$n" >&2
  for ((j = 0; j < k; j++)); do
    w=${ways[(r + j) % k]}
    run_way "$w" "$TMP/$w" " in round $((r + 1))"
  done
done
printf '\r%*s\r' 30 '' >&2
echo "  load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

if [[ $what != lifecycle ]]; then
  "$PY" "$HERE/table.py" "exec: one round trip of \`true\` in a running container" "$TMP" exec_cli \
    exec_forgectl="forgectl engine::exec_run" exec_helper="forgectl exec_run + helper" \
    exec_cli="docker exec (CLI)" exec_py="docker-py exec_run" exec_curl="curl x3 (create, start, inspect)" \
    --target exec_forgectl:exec_cli:0.70
  awk '/^connects/ { c += $2; r += $4 } END { if (r) printf "  forgectl: %d new connections over %d exec_run calls\n", c, r }' \
    "$TMP/exec_forgectl.log"
fi
if [[ $what != exec ]]; then
  "$PY" "$HERE/table.py" "lifecycle (a): create + start + wait + remove, \`true\`, NetworkMode none" "$TMP" run_cli \
    run_forgectl="forgectl engine" run_cli="docker run --rm (CLI)" run_py="docker-py (low-level API)" \
    run_curl="curl x4 (create, start, wait, delete)" \
    --target run_forgectl:run_py,run_curl:1.05
  "$PY" "$HERE/table.py" "lifecycle (b): create + remove an internal network" "$TMP" net_cli \
    net_forgectl="forgectl engine" net_cli="docker network create + rm (CLI)" net_py="docker-py" \
    net_curl="curl x2 (create, delete)" net_cli_bridge="CLI, plain bridge (the §11 baseline)" \
    --target net_forgectl:net_cli:0.60 --target net_forgectl:net_cli_bridge:0.60
fi
exit 0
