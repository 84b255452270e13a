# The reference solution: runs through the bash tool in the runner, in the workspace (/work).
set -e
mkdir -p bin
cat > bin/csvsum <<'PROGRAM'
#!/bin/sh
# csvsum FILE: the sum of the CSV column named "amount", with two decimals.
[ $# -eq 1 ] || { echo "usage: csvsum FILE" >&2; exit 2; }
[ -r "$1" ] || { echo "csvsum: cannot read $1" >&2; exit 1; }
awk -F, '
  NR == 1 { for (i = 1; i <= NF; i++) { h = $i; gsub(/^[ \t"]+|[ \t"\r]+$/, "", h); if (h == "amount") col = i }
            if (!col) { print "csvsum: no amount column" > "/dev/stderr"; bad = 1; exit 1 }
            next }
  { sum += $col }
  END { if (!bad) printf "%.2f\n", sum }
' "$1"
PROGRAM
chmod +x bin/csvsum
./bin/csvsum sales.csv
