#!/bin/bash
# attention_backward's three parts (build/specl) against the search before
# them (build/specl-old), bf16, 16 heads of 128, causal, at the tuner's
# batch 1 x 1024, budget 90 s each.
O=$OUT/tp3; mkdir -p $O
t0=$(date +%s)
run() { # binary tag
  $1 tune bench/specs/attention_backward.yaml --kernel bf16_attn_bwd_16h \
    --budget 90 --db $O/$2.yaml > $O/$2.txt 2>&1
  echo "$2 rc=$? t=$(( $(date +%s) - t0 ))"
  tr "\r" "\n" < $O/$2.txt | grep -E "configs,|searched a part|^    [a-zA-Z(]|evaluated [0-9]+ of|seconds a|incomplete|complete:|defaults [0-9.]+ us|best [0-9.]+ us|best:|the best is"
}
run build/specl parts
run build/specl-old before
