#!/usr/bin/env bash
# bench/run.sh [exec|lifecycle|stack|all] [-n N] [-b B] | bench/run.sh sweep [-n N] [-t T] [-c C]: forgectl's engine (and, for `stack`, its CLI) vs the docker
# CLI or docker-compose, docker-py and raw curl, run interleaved round-robin against the local daemon; prints
# median [p25-p75] tables with ratios.
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
  echo "usage: bench/run.sh [exec|lifecycle|stack|all] [-n N] [-b B]"
  echo "  N rounds (default 20, at least 4); each round runs every way once, B operations in one process (default 1)"
  echo "       bench/run.sh sweep [-n N] [-t TRIALS] [-c CONCURRENCY]   (bench/sweep.sh; not part of all)"
  echo "       bench/run.sh scale [-T TURNS] [-S TURN_S] [-r N:C,...] [--no-py]   (bench/scale.sh; not part of all)"
}
die() { echo "bench/run.sh: $*" >&2; exit 1; }

# sweep: a whole `forgectl run` vs docker-py by hand; its own driver, with its own options.
if [[ ${1:-} == sweep ]]; then
  shift
  exec "$HERE/sweep.sh" "$@"
fi
# scale: model-bound trials at high concurrency vs a docker-py pool; its own driver too.
if [[ ${1:-} == scale ]]; then
  shift
  exec "$HERE/scale.sh" "$@"
fi

what=all n=20 b=1
while (($#)); do
  case $1 in
    exec | lifecycle | stack | all) what=$1 ;;
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
if [[ $what == stack || $what == all ]]; then
  command -v docker-compose >/dev/null || die "docker-compose (v1, Debian's docker-compose) is missing"
fi

# ---- set-up and teardown ----------------------------------------------------------------

# Other work may be running ninja in the same build directory; a clash fails one of the two, so try
# again a few times before giving up.
for try in 1 2 3 4; do
  if ninja -C "$BUILD" src/cli/forgectl src/helper/forgectl-exec bench/engine_bench >"${TMPDIR:-/tmp}/forgectl-bench-ninja.$$" 2>&1; then
    break
  fi
  ((try < 4)) || { tail -n 20 "${TMPDIR:-/tmp}/forgectl-bench-ninja.$$" >&2; die "build failed (ninja -C $BUILD)"; }
  sleep 15
done
rm -f "${TMPDIR:-/tmp}/forgectl-bench-ninja.$$"
if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  "$FORGECTL" images build || die "could not build $IMAGE"
fi

TMP=$(mktemp -d /tmp/forgectl-bench.XXXXXX)
BOX=forgectl-bench-$$
# Time a snapshot of the binaries: a rebuild in $BUILD during the run (other work sharing the build
# directory) must neither remove them mid-round nor mix two versions in one table. forgectl-exec
# sits beside forgectl, where up looks for it.
mkdir "$TMP/bin"
cp "$FORGECTL" "$BUILD/src/helper/forgectl-exec" "$BENCH" "$TMP/bin/" || die "cannot copy the binaries to $TMP/bin"
FORGECTL_SRC=$FORGECTL FORGECTL=$TMP/bin/forgectl BENCH=$TMP/bin/engine_bench
cleanup() {
  docker rm -f "$BOX" >/dev/null 2>&1 || true
  sweep_stacks
  rm -rf "$TMP"
}
# What a stack way left behind (it failed or was interrupted between up and down): forgectl's
# stacks by name (that also removes their firewall rules), compose projects and the docker-py and
# curl objects by this run's label.
sweep_stacks() {
  [[ -d $TMP/stack ]] || return 0
  local s
  for s in $("$FORGECTL" ps 2>/dev/null | awk -v p="fg-bench-stack-$$-" 'index($1, p) == 1 { print $1 }'); do
    "$FORGECTL" down "$s" >/dev/null 2>&1 || true
  done
  docker ps -aq --filter "label=io.forgectl.bench.run=$$" | xargs -r docker rm -f -v >/dev/null 2>&1 || true
  docker network ls -q --filter "label=io.forgectl.bench.run=$$" | xargs -r docker network rm >/dev/null 2>&1 || true
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

# ---- stack: up + down of a 3-service no_internet stack; each way prints "up down" (ms) per line ----
# forgectl's stack also has its runner (a 4th container) and a host firewall rule; the "+ runner"
# variants of the other ways start the same 4th container, for a like-for-like comparison.

STACK_RUN=$$  # the value of io.forgectl.bench.run: what sweep_stacks removes
stack_seq=0   # makes each compose project and curl stack name unique

# The task forgectl brings up: task.yaml (the manifest) and compose.yaml, 3 services, no healthchecks.
# No bench labels: io.forgectl.* are forgectl's own; sweep_stacks finds these stacks by name.
write_forgectl_task() {
  mkdir -p "$1"
  printf 'task_id: bench-stack-%s\nenvironment:\n  network_policy: no_internet\n  compose_file: compose.yaml\n' "$$" \
    >"$1/task.yaml"
  {
    echo "services:"
    for s in s1 s2 s3; do
      printf '  %s:\n    image: %s\n    command: ["sleep", "3600"]\n' "$s" "$IMAGE"
    done
  } >"$1/compose.yaml"
}

# The docker-compose equivalent, with as much of forgectl's hardening as compose expresses
# (policy/hardening.cc, stack/specs.cc): init, cap_drop ALL, no-new-privileges, pids, memory =
# memswap, 1 cpu, the fast DNS options, one internal network. K=4 adds forgectl's runner as a 4th
# service, with its two anonymous volumes (the helper directory and the workdir).
write_compose_file() {
  local k=$1 f=$2 s
  mkdir -p "$(dirname "$f")"
  {
    echo 'version: "2.4"'
    echo "services:"
    for s in s1 s2 s3 runner; do
      [[ $s != runner ]] || ((k >= 4)) || continue
      printf '  %s:\n    image: %s\n    init: true\n    cap_drop: [ALL]\n' "$s" "$IMAGE"
      if [[ $s == runner ]]; then
        printf '    command: ["sleep", "2147483647"]\n    working_dir: /work\n    cap_add: [NET_BIND_SERVICE]\n'
        printf '    volumes: [/.forgectl, /work]\n'
        printf '    mem_limit: 2g\n    memswap_limit: 2g\n    pids_limit: 512\n'
      else
        printf '    command: ["sleep", "3600"]\n    mem_limit: 1g\n    memswap_limit: 1g\n    pids_limit: 256\n'
      fi
      printf '    cpus: 1.0\n    security_opt: ["no-new-privileges:true"]\n    dns_opt: ["timeout:1", "attempts:1"]\n'
      printf '    labels: {io.forgectl.bench: "1", io.forgectl.bench.run: "%s"}\n    networks: [internal]\n' "$STACK_RUN"
    done
    printf 'networks:\n  internal:\n    internal: true\n'
    printf '    labels: {io.forgectl.bench: "1", io.forgectl.bench.run: "%s"}\n' "$STACK_RUN"
  } >"$f"
}

# forgectl as a user runs it: `forgectl up DIR` (prints the stack name), then `forgectl down NAME`.
way_stack_forgectl() {
  local i name up
  for ((i = 0; i < $1; i++)); do
    t0=${EPOCHREALTIME//[.,]/}
    name=$("$FORGECTL" up "$TMP/stack/task") || return 1
    up=$(lap)
    t0=${EPOCHREALTIME//[.,]/}
    "$FORGECTL" down "$name" >/dev/null || return 1
    echo "$up $(lap)"
  done
}
# The same through stack::up_stack and stack::remove_stack in one process (no process start, no
# connect, no manifest load); its phases go to its log.
# up puts forgectl-exec into the runner; engine_bench finds it only through FORGECTL_EXEC_HELPER.
HELPER=${FORGECTL_EXEC_HELPER:-$TMP/bin/forgectl-exec}
way_stack_engine() { FORGECTL_EXEC_HELPER=$HELPER "$BENCH" stack "$1" "$TMP/stack/task"; }
# The prototype of the suggested src changes (bench/README.md): the runner started with the
# services, no helper copy into forgectl's own runner image, the firewall rule removed during the
# network delete.
way_stack_whatif() { FORGECTL_EXEC_HELPER=$HELPER "$BENCH" stack-whatif "$1" "$TMP/stack/task"; }
# `down` as a user types it; with the runner, `down -v`, or its anonymous volumes would be left
# behind (forgectl, docker-py and curl remove containers with v=1).
stack_compose() {
  local k=$1 i p up f=$TMP/stack/compose$1/docker-compose.yml down=(down)
  ((k < 4)) || down+=(-v)
  for ((i = 0; i < $2; i++)); do
    p=fgb$$c${k}n$((++stack_seq))
    t0=${EPOCHREALTIME//[.,]/}
    docker-compose -f "$f" -p "$p" up -d || return 1
    up=$(lap)
    t0=${EPOCHREALTIME//[.,]/}
    docker-compose -f "$f" -p "$p" "${down[@]}" || return 1
    echo "$up $(lap)"
  done
}
way_stack_compose3() { stack_compose 3 "$1"; }
way_stack_compose4() { stack_compose 4 "$1"; }
way_stack_py3() { "$PY" "$HERE/pyclient.py" stack "$1" 3 "$STACK_RUN"; }
way_stack_py4() { "$PY" "$HERE/pyclient.py" stack "$1" 4 "$STACK_RUN"; }
way_stack_py4par() { "$PY" "$HERE/pyclient.py" stack "$1" 4 "$STACK_RUN" parallel; }
# curl: one process per call, the docker-py sequence with the HostConfig forgectl sends.
stack_curl() {
  local k=$1 i s st net id ids up lbl body members=(s1 s2 s3)
  ((k < 4)) || members+=(runner)
  for ((i = 0; i < $2; i++)); do
    st=fgb-curl$$-$((++stack_seq)) net=fgb-curl$$-$stack_seq-internal
    lbl="{\"io.forgectl.bench\":\"1\",\"io.forgectl.bench.run\":\"$STACK_RUN\",\"io.forgectl.bench.stack\":\"$st\"}"
    t0=${EPOCHREALTIME//[.,]/}
    "${CURL[@]}" "${JSON[@]}" -o /dev/null \
      -d "{\"Name\":\"$net\",\"CheckDuplicate\":true,\"Driver\":\"bridge\",\"Internal\":true,\"Labels\":$lbl}" \
      "$API/networks/create" || return 1
    for s in "${members[@]}"; do
      if [[ $s == runner ]]; then
        body='"Cmd":["sleep","2147483647"],"WorkingDir":"/work","Volumes":{"/.forgectl":{},"/work":{}},"HostConfig":{"CapAdd":["NET_BIND_SERVICE"],"PidsLimit":512,"Memory":2147483648,"MemorySwap":2147483648,'
      else
        body='"Cmd":["sleep","3600"],"HostConfig":{"PidsLimit":256,"Memory":1073741824,"MemorySwap":1073741824,'
      fi
      body+="\"NetworkMode\":\"$net\",\"Init\":true,\"CapDrop\":[\"ALL\"],\"SecurityOpt\":[\"no-new-privileges:true\"],"
      body+="\"NanoCpus\":1000000000,\"DnsOptions\":[\"timeout:1\",\"attempts:1\"]},"
      body+="\"NetworkingConfig\":{\"EndpointsConfig\":{\"$net\":{\"Aliases\":[\"$s\"]}}}"
      id=$("${CURL[@]}" "${JSON[@]}" -d "{\"Image\":\"$IMAGE\",\"Labels\":$lbl,$body}" "$API/containers/create?name=$st-$s") ||
        return 1
      id=${id#*\"Id\":\"} id=${id%%\"*}
      "${CURL[@]}" -X POST "$API/containers/$id/start" || return 1
    done
    up=$(lap)
    t0=${EPOCHREALTIME//[.,]/}
    ids=$("${CURL[@]}" "$API/containers/json?all=1&filters=%7B%22label%22%3A%5B%22io.forgectl.bench.stack%3D$st%22%5D%7D") ||
      return 1
    while [[ $ids == *'"Id":"'* ]]; do
      ids=${ids#*\"Id\":\"} id=${ids%%\"*}
      "${CURL[@]}" -X DELETE "$API/containers/$id?force=1&v=1" || return 1
    done
    "${CURL[@]}" -X DELETE "$API/networks/$net" || return 1
    echo "$up $(lap)"
  done
}
way_stack_curl3() { stack_curl 3 "$1"; }
way_stack_curl4() { stack_curl 4 "$1"; }

# ---- rounds -----------------------------------------------------------------------------

ways=()
has() { [[ $what == all || $what == "$1" ]]; }
! has exec || ways+=(exec_forgectl exec_helper exec_cli exec_py exec_curl)
! has lifecycle || ways+=(run_forgectl run_cli run_py run_curl net_forgectl net_cli net_py net_curl net_cli_bridge)
stack_ways=(stack_forgectl stack_engine stack_whatif stack_compose3 stack_compose4 stack_py3 stack_py4 stack_curl3 stack_curl4 stack_py4par)
! has stack || ways+=("${stack_ways[@]}")

if has stack; then
  write_forgectl_task "$TMP/stack/task"
  write_compose_file 3 "$TMP/stack/compose3/docker-compose.yml"
  write_compose_file 4 "$TMP/stack/compose4/docker-compose.yml"
fi
if has exec; then
  docker run -d --name "$BOX" --label "$LABEL" --network none "$IMAGE" sleep 86400 >/dev/null || die "cannot start $BOX"
fi

echo "forgectl engine benchmarks: $what, $n rounds x $b per way, interleaved round-robin (ms per operation)"
echo "  daemon $(docker version --format '{{.Server.Version}} (API {{.Server.APIVersion}})'), CLI $(docker version --format '{{.Client.Version}}')," \
  "docker-py $("$PY" -c 'import docker; print(docker.__version__)') ($PY), $(curl --version | head -1 | cut -d' ' -f1-2)"
! has stack || echo "  docker-compose $(docker-compose version --short 2>/dev/null), forgectl $("$FORGECTL" --version | cut -d' ' -f2)" \
  "(a copy of $FORGECTL_SRC), host firewall ${FORGECTL_HOST_FIREWALL:-on}"
echo "  $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# One unrecorded warm-up run per way (page cache, first-call costs), then rounds that rotate the
# starting way so that no way always follows the same neighbour.
# A way's stderr goes to $TMP/$w.log, shown when it fails.
run_way() { "way_$1" "$b" >>"$2" 2>>"$TMP/$1.log" || { tail -n 5 "$TMP/$1.log" >&2; die "way $1 failed${3:-}"; }; }
for w in "${ways[@]}"; do run_way "$w" /dev/null; done
for w in stack_engine stack_whatif; do [[ ! -e $TMP/$w.log ]] || : >"$TMP/$w.log"; done  # recorded rounds' phases only
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

if has exec; then
  "$PY" "$HERE/table.py" "exec: one round trip of \`true\` in a running container" "$TMP" exec_cli \
    exec_forgectl="forgectl engine::exec_run" exec_helper="forgectl exec_run + helper" \
    exec_cli="docker exec (CLI)" exec_py="docker-py exec_run" exec_curl="curl x3 (create, start, inspect)" \
    --target exec_forgectl:exec_cli:0.70
  awk '/^connects/ { c += $2; r += $4 } END { if (r) printf "  forgectl: %d new connections over %d exec_run calls\n", c, r }' \
    "$TMP/exec_forgectl.log"
fi
if has lifecycle; then
  "$PY" "$HERE/table.py" "lifecycle (a): create + start + wait + remove, \`true\`, NetworkMode none" "$TMP" run_cli \
    run_forgectl="forgectl engine" run_cli="docker run --rm (CLI)" run_py="docker-py (low-level API)" \
    run_curl="curl x4 (create, start, wait, delete)" \
    --target run_forgectl:run_py,run_curl:1.05
  "$PY" "$HERE/table.py" "lifecycle (b): create + remove an internal network" "$TMP" net_cli \
    net_forgectl="forgectl engine" net_cli="docker network create + rm (CLI)" net_py="docker-py" \
    net_curl="curl x2 (create, delete)" net_cli_bridge="CLI, plain bridge (the §11 baseline)" \
    --target net_forgectl:net_cli:0.60 --target net_forgectl:net_cli_bridge:0.60
fi
if has stack; then
  mkdir -p "$TMP/up" "$TMP/down"
  for w in "${stack_ways[@]}"; do
    awk '{ print $1 }' "$TMP/$w" >"$TMP/up/$w"
    awk '{ print $2 }' "$TMP/$w" >"$TMP/down/$w"
  done
  labels=(stack_forgectl="forgectl CLI (3 + runner, firewall)" stack_engine="forgectl in-process (up_stack)"
    stack_whatif="prototype: suggested src changes"
    stack_compose3="docker-compose (3)" stack_compose4="docker-compose (3 + runner)"
    stack_py3="docker-py sequential (3)" stack_py4="docker-py sequential (3 + runner)"
    stack_curl3="curl sequential (3)" stack_curl4="curl sequential (3 + runner)"
    stack_py4par="docker-py parallel (3 + runner)")
  targets=(--target stack_forgectl:stack_compose4:0.50 --target stack_forgectl:stack_py4:0.70
    --target stack_forgectl:stack_compose3:0.50 --target stack_forgectl:stack_py3:0.70)
  "$PY" "$HERE/table.py" "stack up: 3 services, no_internet (forgectl up DIR | docker-compose up -d | the calls)" \
    "$TMP/up" stack_compose4 "${labels[@]}" "${targets[@]}"
  "$PY" "$HERE/table.py" "stack down: the same stack (forgectl down NAME | docker-compose down | list + rm -f + net rm)" \
    "$TMP/down" stack_compose4 "${labels[@]}" "${targets[@]}"
  "$PY" "$HERE/table.py" --phases "forgectl in-process (up_stack, remove_stack): where the time goes, ms median [p25-p75]" \
    "$TMP/stack_engine.log"
  "$PY" "$HERE/table.py" --phases "prototype of the suggested changes (engine_bench stack-whatif), ms median [p25-p75]" \
    "$TMP/stack_whatif.log"
fi
exit 0
