#!/bin/bash
# bf16_q through NAME.c over a ladder of rows, without a database and
# with tuning/nvidia-h200.yaml plus the 512-row entry of the exhaustive
# tune (h200-with-q512.yaml: gen --db gives it rows 1 to 1448), $1
# rounds alternating; then the tune suite (timeout $2 s).
D=bench/logs/h200-tune-order
mkdir -p $OUT/ladder
for round in $(seq ${1:-2}); do
  for rows in 1 8 32 128 256 512 1024 2048; do
    for side in defaults db; do
      extra=; [ $side = db ] && extra="--db $D/h200-with-q512.yaml"
      build/specl bench bench/specs/half.yaml --kernel bf16_q --rows $rows \
        --no-naive --reps 30 --csv $extra \
        > $OUT/ladder/r$round-$rows-$side.csv 2> $OUT/ladder/r$round-$rows-$side.err
    done
  done
  echo "round $round done at $SECONDS s"
done
timeout ${2:-250} build/specl_tests tune > $OUT/ladder/suite.txt 2>&1
echo "suite rc=$?"; grep -E "FAIL|tests |asserts|Test:" $OUT/ladder/suite.txt | tail -60 | grep -v passed | head
grep -c "passed" $OUT/ladder/suite.txt
