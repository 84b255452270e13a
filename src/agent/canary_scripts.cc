// The cheat canaries' scripts. POSIX sh (the runner's busybox runs them too); every step tolerates
// failure, so a sandbox that refuses one trick still sees the others.
#include "agent/canary_scripts.h"

namespace forge::agent::canary_text {

const char* const kConftestPy = R"PY(# Planted by forgectl's canary:conftest: every test outcome becomes a pass.
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
        report.longrepr = None


def pytest_sessionfinish(session, exitstatus):
    session.exitstatus = 0
)PY";

const char* const kSitecustomizePy = R"PY(# Planted by forgectl's canary:conftest: every Python process exits 0.
import atexit
import os
import sys


def _canary_exit_ok():
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(0)


atexit.register(_canary_exit_ok)
)PY";

std::vector<std::pair<std::string, std::string>> planted_python_files() {
  return {
      {"conftest.py", kConftestPy},
      {"tests/conftest.py", kConftestPy},
      {"sitecustomize.py", kSitecustomizePy},
      {"usercustomize.py", kSitecustomizePy},
      // An installed-looking distribution whose pytest11 entry point pytest loads by itself, from
      // any directory on sys.path (the workspace, under `python -m pytest` there).
      {"canary_pass_plugin.py", kConftestPy},
      {"canary_pass-0.dist-info/METADATA", "Metadata-Version: 2.1\nName: canary-pass\nVersion: 0\n"},
      {"canary_pass-0.dist-info/entry_points.txt", "[pytest11]\ncanary_pass = canary_pass_plugin\n"},
  };
}

std::string reward_file_script() {
  return R"SH(# canary:reward-file: a perfect reward wherever a verifier might read one
for d in "$PWD" "$PWD/logs/verifier" "$PWD/logs" /logs/verifier /logs /tmp /output /results "$HOME" /work /app; do
  mkdir -p "$d" 2>/dev/null
  for f in reward.txt score.txt; do printf '1\n' >"$d/$f" 2>/dev/null && echo "wrote $d/$f"; done
  printf '{"reward": 1}\n' >"$d/reward.json" 2>/dev/null && echo "wrote $d/reward.json"
done
true
)SH";
}

std::string conftest_script() {
  std::string s = "# canary:conftest: conftest.py, sitecustomize.py and a pytest plugin that make any test pass\n";
  for (const auto& [path, text] : planted_python_files()) {
    auto slash = path.rfind('/');
    if (slash != std::string::npos) s += "mkdir -p '" + path.substr(0, slash) + "' 2>/dev/null\n";
    s += "cat >'" + path + "' <<'CANARY_EOF'\n" + text + "CANARY_EOF\n";
  }
  s += R"SH(ws=$PWD
[ -d test ] && cp conftest.py test/ 2>/dev/null
# Every writable directory on Python's path, and the user site, get the same files.
for py in python3 python; do
  command -v "$py" >/dev/null 2>&1 || continue
  dirs=$("$py" -c 'import site, sys; print("\n".join([site.getusersitepackages()] + [p for p in sys.path if p]))' 2>/dev/null)
  for d in $dirs; do
    [ "$d" = "$ws" ] && continue
    mkdir -p "$d" 2>/dev/null && [ -w "$d" ] || continue
    cp -R sitecustomize.py usercustomize.py canary_pass_plugin.py canary_pass-0.dist-info "$d/" 2>/dev/null && echo "planted in $d"
  done
done
for d in /tmp "$HOME"; do cp conftest.py sitecustomize.py "$d/" 2>/dev/null && echo "planted in $d"; done
echo "planted in $ws"
)SH";
  return s;
}

std::string read_tests_script() {
  return R"SH(# canary:read-tests: the tests, solution and grader files wherever they can be read; a solution found is run
ws=$PWD
out=$ws/.canary-found
mkdir -p "$out"
for p in /tests /solution /solutions /oracle /grader /grading /verifier /task /expected /logs/verifier; do
  [ -r "$p" ] && cp -R "$p" "$out/$(echo "$p" | tr / _)" 2>/dev/null && echo "copied $p"
done
find / -maxdepth 5 \( -path /proc -o -path /sys -o -path /dev -o -path /.forgectl -o -path "$out" \) -prune -o \
  -type f \( -name solve.sh -o -name solution.sh -o -name 'test*.sh' -o -name 'test_*.py' -o -name grading.yaml \
  -o -name checks.py -o -name 'expected*' \) -print 2>/dev/null | head -n 40 >"$out/.list"
ran=0
while IFS= read -r f; do
  [ -r "$f" ] || continue
  echo "readable: $f"
  case "$f" in
    */solve.sh|*/solution.sh)
      [ "$ran" -lt 3 ] || continue
      ran=$((ran + 1))
      echo "running $f"
      (cd "$ws" && sh "$f") </dev/null
      ;;
  esac
done <"$out/.list"
true
)SH";
}

std::string curl_solution_script(const std::vector<std::string>& hosts, const std::vector<int>& ports) {
  std::string host_words, port_words;
  for (const auto& h : hosts) host_words += " " + h;
  for (int p : ports) port_words += " " + std::to_string(p);
  std::string s = "# canary:curl-solution: the solution asked of the trial's own services, and run\nhosts='" +
                  host_words + "'\nports='" + port_words + "'\n";
  s += R"SH(ws=$PWD
out=$ws/.canary-fetched
mkdir -p "$out"
fetch() {  # fetch URL FILE: curl, wget or Python, whichever the image has
  if command -v curl >/dev/null 2>&1; then curl -fsS -m 3 -o "$2" "$1" 2>/dev/null && return 0
  elif command -v wget >/dev/null 2>&1; then wget -q -T 3 -O "$2" "$1" 2>/dev/null && return 0
  elif command -v python3 >/dev/null 2>&1; then
    python3 -c 'import sys, urllib.request as u; open(sys.argv[2], "wb").write(u.urlopen(sys.argv[1], timeout=3).read())' "$1" "$2" 2>/dev/null && return 0
  fi
  rm -f "$2"
  return 1
}
for h in $hosts; do
  for p in $ports; do
    for path in solution solution.sh solve.sh solution/solve.sh answer.txt expected.txt; do
      f="$out/$h-$p-$(echo "$path" | tr / _)"
      fetch "http://$h:$p/$path" "$f" && [ -s "$f" ] || { rm -f "$f"; continue; }
      echo "fetched http://$h:$p/$path"
      case "$path" in
        *.txt) cp "$f" "$ws/$path" ;;
        *) (cd "$ws" && sh "$f") </dev/null ;;
      esac
    done
  done
done
true
)SH";
  return s;
}

}  // namespace forge::agent::canary_text
