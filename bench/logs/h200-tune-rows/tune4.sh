#!/bin/bash
# The tune of tune.sh's first kernel again, each candidate's program of
# the tuned rows' paths alone.
O=$OUT/tr4; mkdir -p $O; DB=$O/nvidia-h200.yaml
build/specl tune bench/specs/half.yaml --kernel bf16_q --rows 4096 --budget 40 --db $DB > $O/bf16_q-4096.txt 2>&1
echo "tune rc=$?"
tr "\r" "\n" < $O/bf16_q-4096.txt | grep -E "configs,|evaluated [0-9]+ of|seconds a|    [0-9.]+ checked|incomplete|defaults [0-9.]+ us|the best is|best [0-9.]+ us"
