#!/bin/bash
# The parts' search with values known to lose put last: the bf16 step of
# llama-q and -up again, budget 75 s each, as tune.sh bwd ran it before.
O=$OUT/tune-cost; mkdir -p $O; DB=$OUT/h200-cost.yaml
for k in q up; do
  n=llama_${k}_proj_grad_bf16
  build/specl tune specs/llama2-7b-train-bf16.yaml --kernel $n --rows 4096 \
    --budget 75 --db $DB > $O/$n.txt 2>&1
  echo "$n rc=$?"
  tr "\r" "\n" < $O/$n.txt | grep -E "configs,|evaluated [0-9]+ of|incomplete|complete:|defaults [0-9.]+ us|the best is|^  best"
done
