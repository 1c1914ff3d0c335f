#!/bin/sh
# norm-bench-ab.sh OLD NEW - the four norm backward kernels of
# bench/specs/layer.yaml at 4096 rows through NAME.c, by two specl
# builds alternating, two rounds (each case verified against float64
# first).
for round in 1 2; do
    for k in bf16_layernorm_back_4096 bf16_rmsnorm_back_4096 \
             layernorm_back_4096 rmsnorm_back_4096; do
        for specl in "$1" "$2"; do
            printf "round %s %s: " $round "$specl"
            $specl bench bench/specs/layer.yaml --kernel $k --rows 4096 \
                --no-naive --reps 50 2>&1 | grep -E "^ *$k +specl|copy"
        done
    done
done
