#!/usr/bin/env bash
# Runs every test suite: installs what they need, starts dockerd when none answers, builds,
# then `meson test` over the unit and docker suites. Extra arguments go to `meson test`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
bash scripts/build.sh
# gVisor's runsc for the docker suite's runtime cases (docs/environment.md "runtime"): no Debian
# binary, so built once from Debian's packaged sources; ensure-docker.sh then registers it.
[ -x /usr/local/bin/runsc ] || step "install-runsc.sh (gVisor)" bash scripts/install-runsc.sh
bash scripts/ensure-docker.sh
# The docker suite must not skip when we were able to start a daemon.
export FORGECTL_REQUIRE_DOCKER=${FORGECTL_REQUIRE_DOCKER:-1}
rc=0
t0=$(date +%s)
meson test -C build --print-errorlogs "$@" || rc=$?
_step_time "meson test (the suites, in parallel)" "$t0"
[ "$rc" -eq 0 ] || echo "test.sh: step 'meson test' failed (exit $rc); the failing suites' logs are above and in build/meson-logs/testlog.txt" >&2
# One closing line over all suites: the test cases doctest counted in each. With
# FORGECTL_STEP_TIMES, each suite's time and the docker suite's slowest cases (doctest's
# --duration, test/meson.build) go there too.
python3 - build/meson-logs/testlog.json "${FORGECTL_STEP_TIMES:-}" <<'PY' || true
import json, re, sys
passed = failed = 0
suites, cases = [], []
for line in open(sys.argv[1]):
    t = json.loads(line)
    out = t.get("stdout", "")
    for m in re.finditer(r"test cases:\s*\d+ \|\s*(\d+) passed \|\s*(\d+) failed", out):
        passed += int(m.group(1)); failed += int(m.group(2))
    suites.append((t["name"], t.get("duration", 0)))
    if t["name"].startswith("docker"):
        cases += [(float(m.group(1)), m.group(2)) for m in re.finditer(r"^(\d+\.\d+) s: (.*)$", out, re.M)]
print(f"tests: {passed} passed, {failed} failed", flush=True)
# meson prints only a failing suite's last 100 lines, where a long shard's failure may not be:
# repeat every failed case's doctest block (at most 10, 40 lines each) so CI's log names it.
shown = 0
for line in open(sys.argv[1]):
    t = json.loads(line)
    for block in re.split(r"^=+$", t.get("stdout", ""), flags=re.M):
        if shown < 10 and re.search(r"\bERROR: |FATAL ERROR|CRASHED", block):
            shown += 1
            print(f"--- failed in {t['name']}:", *block.strip().splitlines()[:40], sep="\n", file=sys.stderr)
if sys.argv[2]:
    with open(sys.argv[2], "a") as f:
        for name, secs in suites:
            f.write(f"test.sh: suite {name}: {secs:.0f} s\n")
        for secs, name in sorted(cases, reverse=True)[:5]:
            f.write(f"test.sh:   slow docker case: {name[:70]}: {secs:.0f} s\n")
PY
exit $rc
