#!/usr/bin/env bash
# The main job on a fresh machine: install, start dockerd if needed, build forgectl and its local
# images, check the host, run a smoke sandbox end to end, then bring the example environments up
# (no_internet and limited_internet), list them, and take them down again.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
bash scripts/ensure-docker.sh
./build/src/cli/forgectl images build
./build/src/cli/forgectl doctor --smoke
stacks=()
trap '[ ${#stacks[@]} -eq 0 ] || ./build/src/cli/forgectl down "${stacks[@]}" >/dev/null' EXIT
for env in examples/environments/*.yaml; do
  stacks+=("$(./build/src/cli/forgectl up "$env")")
done
./build/src/cli/forgectl ps
./build/src/cli/forgectl down "${stacks[@]}"
stacks=()
