#!/usr/bin/env bash
# The README's two Quick start commands on a bare Debian 12 machine: a `debootstrap --variant=minbase
# bookworm` image (built once from this machine's Debian mirror, then cached by the daemon), a
# container of it with Docker running inside (no --privileged: the host's capabilities one by one,
# seccomp unconfined, a volume for /var/lib/docker, the cgroup filesystem), a copy of this checkout
# in it, and the commands read from the README's first code block under "Quick start", run in
# order. Prints one line per command with its exit code and, on failure, the last 30 lines of its
# output; exits non-zero when any command failed.
#
# The host's compiler cache (ccache, scripts/build.sh) is mounted where the bare machine's
# scripts/build.sh looks, so the bare machine still compiles everything from scratch, each compile
# a hit when the host already compiled the same preprocessed input (CI's own build just did): a
# header or library missing from the bare machine still fails its build. FRESH_DROP_PACKAGE shows
# that. Each build's hits and misses are among the printed step times.
#
#   FRESH_KEEP=1         keep the container and its volumes afterwards (to look inside)
#   FRESH_REBUILD=1      rebuild the base image even when the daemon has it
#   FRESH_APT_CACHE=0    do not keep downloaded .deb files in a volume between checks
#   FRESH_COMMAND_TIMEOUT=S  stop a command after S seconds (default 2700) and show its last lines
#   FRESH_CCACHE=0       no compiler cache from the host: the Quick start exactly as a user runs it
#   FRESH_DROP_PACKAGE=P the proof that the cache hides no missing package: P (a package of
#                        scripts/install-deps.sh) is taken out of the copy's install-deps.sh, and
#                        the check passes only when the Quick start then fails
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
top=$(pwd)

bash scripts/install-deps.sh
command -v debootstrap >/dev/null || step "apt-get install debootstrap" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends debootstrap
bash scripts/ensure-docker.sh

# --- the commands, from the README ---------------------------------------------------------------
mapfile -t commands < <(awk '
  /^## / { in_qs = ($0 ~ /^## Quick start/); next }
  in_qs && /^```/ { if (inblock) exit; inblock = 1; next }
  in_qs && inblock && NF { print }
' README.md)
if [ ${#commands[@]} -ne 2 ]; then
  echo "fresh-machine-check: expected 2 commands in the first code block under README.md's 'Quick start', found ${#commands[@]}" >&2
  exit 2
fi

# --- the base image ------------------------------------------------------------------------------
mirror=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /debian\/?$/) { print $i; exit } }' \
  /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 ~ /debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || { echo "fresh-machine-check: no Debian mirror found in /etc/apt/sources.list{,.d}" >&2; exit 2; }
image="forgectl-fresh/bookworm-minbase:$(printf '%s' "$mirror" | sha256sum | cut -c1-12)"
if [ "${FRESH_REBUILD:-0}" = 1 ] || ! docker image inspect "$image" >/dev/null 2>&1; then
  root=$(mktemp -d /var/tmp/forgectl-fresh-root.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  echo "fresh-machine-check: debootstrap --variant=minbase bookworm from $mirror (once; cached as $image)" >&2
  step "debootstrap" debootstrap --variant=minbase bookworm "$root" "$mirror"
  # What a freshly installed machine has: its mirror in sources.list, no package lists yet.
  echo "deb $mirror bookworm main" >"$root/etc/apt/sources.list"
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
  step "docker import" sh -c "tar -C '$root' -c . | docker import - '$image'"
  rm -rf "$root"
  trap - EXIT
fi

# --- the container -------------------------------------------------------------------------------
# Every capability the host's bounding set has.
names=(CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE
  NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT
  SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE
  AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ
  PERFMON BPF CHECKPOINT_RESTORE)
bnd=$((16#$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)))
caps=()
for i in "${!names[@]}"; do
  (( (bnd >> i) & 1 )) && caps+=(--cap-add "${names[$i]}")
done

run_id="fmc-$$-$(date +%s)"
docker_vol="$run_id-docker"
apt_vol=forgectl-fresh-apt-cache
cleanup() {
  if [ "${FRESH_KEEP:-0}" = 1 ]; then
    echo "fresh-machine-check: kept container $run_id and volume $docker_vol" >&2
    return
  fi
  docker rm -f "$run_id" >/dev/null 2>&1 || true
  docker volume rm -f "$docker_vol" >/dev/null 2>&1 || true
}
trap cleanup EXIT
mounts=(-v "$docker_vol:/var/lib/docker" -v /sys/fs/cgroup:/sys/fs/cgroup:rw)
# Downloaded .deb files only (never the package lists): the machine still starts without lists.
[ "${FRESH_APT_CACHE:-1}" = 1 ] && mounts+=(-v "$apt_vol:/var/cache/apt/archives")
if [ "${FRESH_CCACHE:-1}" = 1 ]; then
  ccache_env  # CCACHE_DIR as the host's scripts/build.sh has it; the bare machine's is its default
  mkdir -p "$CCACHE_DIR"
  mounts+=(-v "$CCACHE_DIR:/root/.cache/ccache")
  # Go's build cache for scripts/install-runsc.sh likewise (content-addressed: a hit needs the same
  # sources and toolchain; the bare machine still downloads and unpacks every package itself).
  gocache=/var/cache/forgectl/gvisor/gocache
  mkdir -p "$gocache"
  mounts+=(-v "$gocache:$gocache")
fi
start_machine() {
  docker run -d --name "$run_id" --hostname fresh-debian12 \
    "${caps[@]}" --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
    --sysctl net.ipv4.ip_forward=1 --cgroupns host \
    "${mounts[@]}" --tmpfs /run \
    -e container=docker "$image" sleep infinity
}
# An older daemon refuses capability names newer than itself ("unknown capability: \"CAP_BPF\""):
# drop each name it refuses and try again.
for _ in "${names[@]}"; do
  rc=0
  out=$(start_machine 2>&1) || rc=$?
  [ "$rc" -eq 0 ] && break
  unknown=$(printf '%s' "$out" | sed -n 's/.*unknown capability: "CAP_\([A-Z_]*\)".*/\1/p' | head -n 1)
  if [ -z "$unknown" ]; then
    echo "fresh-machine-check: step 'docker run (the bare machine)' failed (exit $rc):" >&2
    printf '%s\n' "$out" >&2
    exit "$rc"
  fi
  docker rm -f "$run_id" >/dev/null 2>&1 || true
  kept=()
  for ((j = 0; j < ${#caps[@]}; j += 2)); do
    [ "${caps[$((j + 1))]}" = "$unknown" ] || kept+=(--cap-add "${caps[$((j + 1))]}")
  done
  caps=("${kept[@]}")
done
# Keep the cached .deb files: apt deletes them after installing unless told otherwise.
docker exec "$run_id" sh -c 'echo "Binary::apt::APT::Keep-Downloaded-Packages \"true\";" >/etc/apt/apt.conf.d/01keep'

# A copy of the checkout as a user has it: tracked and new files, nothing ignored (no build/, no runs/).
step "copying the checkout" sh -c "git -C '$top' ls-files -z --cached --others --exclude-standard \
  | tar -C '$top' --null -T - -cf - | docker exec -i '$run_id' sh -c 'mkdir -p /root/forgectl && tar -C /root/forgectl -xf -'"
drop=${FRESH_DROP_PACKAGE:-}
if [ -n "$drop" ]; then
  # Every word of the packages=( … ) list but $drop, each line's two-space indent kept.
  without=$(awk -v p="$drop" '
    /^\)/ { in_list = 0 }
    in_list && /^  [a-z]/ { line = ""; for (i = 1; i <= NF; i++) if ($i != p) line = line " " $i; print " " line; next }
    /^packages=\(/ { in_list = 1 }
    { print }' scripts/install-deps.sh)
  if [ "$without" = "$(cat scripts/install-deps.sh)" ]; then
    echo "fresh-machine-check: FRESH_DROP_PACKAGE=$drop is not in scripts/install-deps.sh's packages" >&2
    exit 2
  fi
  printf '%s\n' "$without" | docker exec -i "$run_id" sh -c 'cat >/root/forgectl/scripts/install-deps.sh'
  echo "fresh-machine-check: $drop taken out of the copy's scripts/install-deps.sh; the Quick start must fail"
fi

# --- the commands --------------------------------------------------------------------------------
failed=0
n=0
budget=${FRESH_COMMAND_TIMEOUT:-2700}
for cmd in "${commands[@]}"; do
  n=$((n + 1))
  log="/root/command-$n.log"
  start=$(date +%s)
  rc=0
  # A bound per command, so a hang ends with the command's last lines instead of CI's own timeout.
  docker exec -e FORGECTL_STEP_TIMES="/root/steps-$n.log" "$run_id" \
    timeout --kill-after=30 "$budget" bash -c "cd /root/forgectl && ($cmd) >$log 2>&1" || rc=$?
  secs=$(($(date +%s) - start))
  [ "$rc" -eq 124 ] && echo "fresh-machine-check: [$n] stopped after FRESH_COMMAND_TIMEOUT=$budget s"
  echo "fresh-machine-check: [$n] $cmd → exit $rc (${secs} s)"
  # Where the time went: the scripts' steps (scripts/lib.sh, each suite's time among them), also
  # into the caller's FORGECTL_STEP_TIMES (.ci/run's table).
  steps=$(docker exec "$run_id" cat "/root/steps-$n.log" 2>/dev/null || true)
  printf '%s\n' "$steps" | sed 's/^/  /'
  docker exec "$run_id" sh -c "grep -E '^tests: ' $log" 2>/dev/null | sed 's/^/  /' || true
  if [ -n "${FORGECTL_STEP_TIMES:-}" ]; then
    echo "fresh-machine-check.sh: [$n] $cmd: $secs s" >>"$FORGECTL_STEP_TIMES"
    [ -z "$steps" ] || printf '%s\n' "$steps" | sed "s/^/  [$n] /" >>"$FORGECTL_STEP_TIMES"
  fi
  driver=$(docker exec "$run_id" docker info -f '{{.Driver}}' 2>/dev/null || true)
  [ -z "$driver" ] || echo "  (the bare machine's dockerd stores images with $driver)"
  if [ "$rc" -ne 0 ]; then
    failed=1
    # The failed assertions themselves (doctest's), which a long suite's tail no longer holds:
    # from meson's whole log when there is one (--print-errorlogs shows only a suite's last lines).
    echo "---- failed test cases (doctest's ERROR lines, with their test case) ----"
    docker exec "$run_id" sh -c "f=/root/forgectl/build/meson-logs/testlog.txt; [ -f \$f ] || f=$log;
      grep -B4 -A6 -E '(FATAL )?ERROR: ' \$f | head -n 80" || true
    echo "---- last 30 lines of its output ----"
    docker exec "$run_id" tail -n 30 "$log" || true
    echo "----"
    [ -z "$drop" ] || break  # the proof needs only the first failure
  fi
done
if [ -n "$drop" ]; then
  # The proof passes when the Quick start failed without the package.
  if [ "$failed" -eq 0 ]; then
    echo "fresh-machine-check: the Quick start passed without $drop: something hid the missing package" >&2
    exit 1
  fi
  echo "fresh-machine-check: without $drop the Quick start failed, as it must"
  # Below meson's own checks: configured and built with $drop (from the cache), then the package
  # removed and every object rebuilt: each compile that includes its headers must fail, although
  # the cache holds that file's object.
  docker exec -i "$run_id" sh -c 'cat >/root/forgectl/scripts/install-deps.sh' <scripts/install-deps.sh
  step "the build with $drop" docker exec "$run_id" bash -c "cd /root/forgectl && bash scripts/build.sh"
  rc=0
  step "dpkg -r $drop" docker exec "$run_id" sh -c "dpkg -r --force-depends $drop && ninja -C /root/forgectl/build -t clean"
  # ninja itself with ccache's settings (scripts/build.sh would put the package back).
  docker exec "$run_id" bash -c "cd /root/forgectl && . scripts/lib.sh && ccache_env && \
    CCACHE_STATSLOG=/root/rebuild-ccache.log ninja -C build -k 0 >/root/rebuild.log 2>&1" || rc=$?
  counts=$(docker exec "$run_id" bash -c ". /root/forgectl/scripts/lib.sh && ccache_counts /root/rebuild-ccache.log")
  if [ "$rc" -eq 0 ]; then
    echo "fresh-machine-check: the rebuild without $drop passed: the cache stood in for its headers" >&2
    exit 1
  fi
  echo "fresh-machine-check: the rebuild without $drop failed (exit $rc), as it must, with ccache's $counts:"
  docker exec "$run_id" sh -c "grep -E '^FAILED|fatal error' /root/rebuild.log | head -n 6; tail -n 1 /root/rebuild.log" | sed 's/^/  /'
  exit 0
fi
exit "$failed"
