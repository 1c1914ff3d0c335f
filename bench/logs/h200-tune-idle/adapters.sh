#!/bin/bash
# The bf16 adapter gradients of specs/llama2-7b-train-bf16.yaml (dA, dB
# alone) searched whole at 4096 rows: on warpgroups their space is the
# engine and grad_rows (the rest shapes no code there).
O=$OUT/tune-adapters; mkdir -p $O; DB=$OUT/h200-idle-adapters.yaml
for k in q up down; do
  n=llama_${k}_proj_adapter_bf16
  build/specl tune specs/llama2-7b-train-bf16.yaml --kernel $n --rows 4096 \
    --strategy exhaustive --budget 90 --db $DB > $O/$n.txt 2>&1
  echo "$n rc=$?"
  tr "\r" "\n" < $O/$n.txt | grep -E "configs,|left out|searched a part|evaluated [0-9]+ of|complete|defaults [0-9.]+ us|best [0-9.]+ us|best:|the best is|^    engine"
done
