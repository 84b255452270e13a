"""Table for bench/run.sh: median [p25-p75] per way, ratios vs a baseline way, and target checks.

table.py TITLE DIR BASELINE WAY=LABEL... [--target WAY:REF[,REF...]:MAX]
Each DIR/WAY holds one duration in ms per line. A target with several REFs compares with the best
(lowest median) of them.

table.py --phases TITLE LOG: median [p25-p75] of each key of the "phase NAME key=value ..." lines
in LOG (engine_bench stack's split of an up and a down), one block per NAME.
"""
import statistics
import sys


def load(path):
    with open(path) as f:
        return [float(line) for line in f if line.strip()]


def summary(xs):
    p25, med, p75 = statistics.quantiles(xs, n=4, method="inclusive")
    return med, p25, p75


def phases(title, log):
    found = {}  # phase name -> key -> values, keys in first-seen order
    with open(log) as f:
        for line in f:
            words = line.split()
            if len(words) < 3 or words[0] != "phase":
                continue
            keys = found.setdefault(words[1], {})
            for kv in words[2:]:
                k, _, v = kv.partition("=")
                keys.setdefault(k, []).append(float(v))
    print(f"\n{title}")
    for name, keys in found.items():
        cells = []
        for k, xs in keys.items():
            if len(xs) < 2:
                cells.append(f"{k} {xs[0]:.1f}")
                continue
            med, p25, p75 = summary(xs)
            cells.append(f"{k} {med:.0f}" if k == "calls" else f"{k} {med:.1f} [{p25:.1f}-{p75:.1f}]")
        print(f"  {name} (n={len(next(iter(keys.values())))}):")
        for i in range(0, len(cells), 4):
            print("    " + "   ".join(cells[i:i + 4]))


def main():
    if sys.argv[1] == "--phases":
        phases(*sys.argv[2:4])
        return
    title, folder, base, *rest = sys.argv[1:]
    ways, targets = [], []
    args = iter(rest)
    for a in args:
        if a == "--target":
            targets.append(next(args).split(":"))
        else:
            way, label = a.split("=", 1)
            ways.append((way, label))
    stats = {way: summary(load(f"{folder}/{way}")) for way, _ in ways}
    counts = {way: len(load(f"{folder}/{way}")) for way, _ in ways}
    base_med = stats[base][0]
    labels = dict(ways)

    print(f"\n{title}")
    width = max(len(label) for _, label in ways)
    print(f"  {'way':<{width}}  {'n':>3}  {'median':>8}  {'p25-p75':>17}  vs {labels[base]}")
    for way, label in ways:
        med, p25, p75 = stats[way]
        rng = f"[{p25:.1f}-{p75:.1f}]"
        print(f"  {label:<{width}}  {counts[way]:>3}  {med:>8.1f}  {rng:>17}  {med / base_med:.2f}x")
    for way, refs, limit in targets:
        ref = min(refs.split(","), key=lambda r: stats[r][0])
        ratio = stats[way][0] / stats[ref][0]
        verdict = "met" if ratio <= float(limit) else "MISSED"
        print(f"  target: {labels[way]} <= {float(limit):.2f}x {labels[ref]}: {ratio:.2f}x ({verdict})")


if __name__ == "__main__":
    main()
