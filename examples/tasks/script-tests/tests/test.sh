#!/bin/sh
# Runs in the grader container (the runner's image, no network), in a copy of the workspace as the
# agent left it, with this directory copied in as tests/ only now: the agent never saw these
# cases. Writes the fraction of checks passed to the reward file; grading.yaml names the file.
cd "$(dirname "$0")/.." || exit 1
reward=/logs/verifier/reward.txt
mkdir -p "$(dirname "$reward")"
passed=0 total=0
check() {  # check NAME EXPECTED COMMAND...
  name=$1 expected=$2
  shift 2
  total=$((total + 1))
  got=$("$@" 2>/dev/null)
  if [ "$got" = "$expected" ]; then
    passed=$((passed + 1))
    echo "PASS $name"
  else
    echo "FAIL $name: expected '$expected', got '$got'"
  fi
}
check "executable" yes sh -c '[ -f bin/csvsum ] && [ -x bin/csvsum ] && echo yes'
check "example sales.csv" 300.00 ./bin/csvsum sales.csv
check "amount in the first column, negatives" 25.00 ./bin/csvsum tests/cases/reordered.csv
check "CRLF line ends" 3.75 ./bin/csvsum tests/cases/crlf.csv
check "header only" 0.00 ./bin/csvsum tests/cases/header-only.csv
check "amount last, five rows" 1250.56 ./bin/csvsum tests/cases/many.csv
echo "$passed/$total checks passed"
awk -v p="$passed" -v t="$total" 'BEGIN { printf "%.4f\n", p / t }' >"$reward"
[ "$passed" -eq "$total" ]
