#!/bin/sh
# split-narrow.sh - bench/lab/split-narrow.yaml at 1, 8 and 64 rows,
# two rounds, through the emitted NAME.c (build/specl).
for round in 1 2; do
    for r in 1 8 64; do
        for k in f32_1024_narrow f32_1024_narrow_rows f32_16001 \
                 f32_16001_rows f32_50257 f32_50257_s16 bf16_50257 \
                 bf16_50257_s16; do
            printf "%s rows %s round %s: " $k $r $round
            build/specl bench bench/lab/split-narrow.yaml --kernel $k \
                --rows $r --no-naive --reps 50 2>&1 | grep -E "^ *$k " |
                head -1
        done
    done
done
