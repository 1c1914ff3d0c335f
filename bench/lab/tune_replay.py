#!/usr/bin/env python3
"""Sums bench/lab/tune_replay.c's lines: per file, the mean best over the
landscape's best after 10, 25 and 50 evaluations and at the end, the
worst end, the runs that came within 5% and 2% of the best, the median
evaluation that first came within 5% (999: not within the budget), and
the mean count of evaluations over 1.5x the best."""
import re
import statistics
import sys

for path in sys.argv[1:]:
    runs = []
    for line in open(path):
        if not line.startswith("start"):
            continue
        end = float(re.search(r"\(([0-9.]+)x\)", line).group(1))
        marks = [float(x) for x in re.search(
            r"at 10/25/50: ([0-9.]+) ([0-9.]+) ([0-9.]+)", line).groups()]
        w5, w2, slow = [int(x) for x in re.search(
            r"within 5% at (-?\d+), 2% at (-?\d+); over 1.5x: (\d+)",
            line).groups()]
        runs.append((end, marks, w5, w2, slow))
    mean = statistics.mean
    print(f"{path}: {len(runs)} runs; best at 10/25/50/end "
          + " ".join(f"{mean(r[1][i] for r in runs):.3f}" for i in range(3))
          + f" {mean(r[0] for r in runs):.3f}; worst end "
          f"{max(r[0] for r in runs):.3f}; within 5% {sum(r[2] > 0 for r in runs)}, "
          f"2% {sum(r[3] > 0 for r in runs)}; median evaluation to 5% "
          f"{statistics.median([r[2] if r[2] > 0 else 999 for r in runs])}; "
          f"over 1.5x {mean(r[4] for r in runs):.1f}")
