#!/usr/bin/env bash
# The main job on a fresh machine: install, start dockerd if needed, build forgectl and its local
# images, check the host with a smoke sandbox, then sweep the bundled example tasks with the
# oracle agent (no LLM key needed): every task of examples/tasks and of the example projects in
# examples/projects × 2 trials, 2 at once, graded on the host, into runs/quickstart-<time>/ with
# trials.jsonl, aggregate.json and report.html.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
# Only the binary and its exec helper: the test suites (a third of the compile time) wait for
# the test command.
FORGECTL_BUILD_TARGETS="src/cli/forgectl src/helper/forgectl-exec" bash scripts/build.sh
bash scripts/ensure-docker.sh
forgectl=./build/src/cli/forgectl
shown_step "forgectl images build" "$forgectl" images build
shown_step "forgectl doctor --smoke" "$forgectl" doctor --smoke
out="runs/quickstart-$(date -u +%Y%m%dT%H%M%SZ)"
# A project's tasks share files at its root, so each project is a pack of its own (docs/task.md).
shown_step "forgectl run (the example sweep)" "$forgectl" run examples/tasks examples/projects/*/ --agent oracle --trials 2 --concurrency 2 --out "$out"
# The oracle replays each task's reference solution: a failing trial here means the pipeline is broken.
if grep -q '"binary_pass":false' "$out/trials.jsonl"; then
  echo "quickstart: an oracle trial did not pass; see $out/trials.jsonl" >&2
  exit 1
fi
