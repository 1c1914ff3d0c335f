#!/bin/bash
# The seeds' bf16 forward at K = N = 2048, 128 rows: every candidate of
# its space at those rows, then the entry through gen --db's NAME.c.
O=$OUT/tr3; mkdir -p $O; DB=$O/nvidia-h200.yaml
build/specl tune bench/specs/half_small.yaml --kernel s2048_bf16 --rows 128 --strategy exhaustive --budget 170 --db $DB > $O/s2048.txt 2>&1
echo "tune rc=$?"
tr "\r" "\n" < $O/s2048.txt | grep -E "configs,|evaluated [0-9]+ of|seconds a|    [0-9.]+ checked|complete|defaults [0-9.]+ us|the best is|best [0-9.]+ us|^    [a-z_]+="
for i in 1 2; do
  build/specl bench bench/specs/half_small.yaml --kernel s2048_bf16 --rows 128 --no-naive --reps 50 | grep -E "s2048_bf16 +specl"
  build/specl bench bench/specs/half_small.yaml --kernel s2048_bf16 --rows 128 --no-naive --reps 50 --db $DB | grep -E "s2048_bf16 +specl"
done
