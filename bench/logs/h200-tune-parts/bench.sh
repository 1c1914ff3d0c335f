#!/bin/bash
# The float32 adapter gradients through NAME.c with the parts' database
# (tp2/h200-parts.yaml: llama-q's entry differs from the defaults) and
# without, two rounds alternating.
O=$OUT/tpb; mkdir -p $O; DB=bench/logs/h200-tune-parts/tp2/h200-parts.yaml
for round in 1 2; do
  for db in none parts; do
    extra=""; [ $db = parts ] && extra="--db $DB"
    build/specl bench specs/llama2-7b-train.yaml --kernel llama_q_proj_adapter \
      --rows 4096 --no-naive --reps 30 $extra > $O/q-$db-$round.txt 2>&1
    echo "round $round $db rc=$?"; grep -E "llama_q_proj_adapter|variant|µs|us " $O/q-$db-$round.txt | head -8
  done
done
