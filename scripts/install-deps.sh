#!/usr/bin/env bash
# Installs every Debian package that forgectl's build, tests, benchmarks and runtime need.
# Idempotent: does nothing (and prints nothing) when all of them are present.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

packages=(
  # build (python3: meson itself, the embedding of built-in stacks, the test summary; ccache:
  # scripts/build.sh)
  g++ meson ninja-build pkg-config python3 ccache
  # the man page (generated from --help at build time)
  help2man
  libcurl4-openssl-dev rapidjson-dev libyaml-cpp-dev libpoco-dev doctest-dev libcli11-dev libre2-dev
  libarchive-dev libsqlite3-dev libtomlplusplus-dev
  # runtime: the engine, and what the local images are built from (debootstrap: forgectl/python:local)
  docker.io busybox-static squid iptables debootstrap
  # forgectl/browser:local (the `browser` tool): Debian's headless Chromium, its NSS modules, fonts
  chromium-headless-shell chromium-common libnss3 fontconfig-config fonts-dejavu-core fonts-liberation
  # OCI runtimes a sandbox may choose (docs/environment.md "runtime"); runsc (gVisor) is no Debian binary:
  # scripts/install-runsc.sh builds it, run by scripts/test.sh (the docker suite needs it), not here
  crun
  # tests: a second, private dockerd gets its own bridge; a one-node Slurm (munged, slurmctld,
  # slurmd: scripts/slurm-test-cluster.sh) runs the Slurm sweep test (docs/scale.md)
  iproute2 slurm-wlm munge
  # benchmarks' references
  curl python3-docker docker-compose
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}; run this script as root (or install them)" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists yet: refresh them first when there are none, and once more
# when the install cannot find a package (stale lists).
if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e '^lock$' -e '^partial$' -e '^auxfiles$')" ]; then
  step "apt-get update" apt-get update
fi
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
  step "apt-get update" apt-get update
  step "apt-get install" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# Debian's squid package starts a system squid on port 3128; forgectl only needs its files.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet squid 2>/dev/null; then
  systemctl stop squid || true
fi
# Likewise the Slurm and munge services this script has just installed (never a cluster's own):
# the tests start their own with private configs.
for unit in slurmctld slurmd munge; do
  pkg=$unit
  [ "$unit" = munge ] || pkg=slurm-wlm
  case " ${missing[*]} " in *" $pkg "*) ;; *) continue ;; esac
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$unit" 2>/dev/null; then
    systemctl stop "$unit" || true
  fi
done
