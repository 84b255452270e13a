#!/usr/bin/env bash
# The main job on a fresh machine: install, start dockerd if needed, build forgectl and its local
# images, check the host, and run a smoke sandbox end to end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
bash scripts/ensure-docker.sh
./build/src/cli/forgectl images build
./build/src/cli/forgectl doctor --smoke
