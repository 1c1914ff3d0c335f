#!/bin/bash
# specl tune over the space of the knobs that shape code at 4096 rows:
# the bf16 step of llama-q, -up and -down (dX on warpgroups: its tile's
# wg_m, wg_n, wg_stages now axes) into one database; budget $2 s each.
# $1: which (bwd or fwd).
O=$OUT/tune-$1; mkdir -p $O; DB=$OUT/h200-idle-$1.yaml
t0=$(date +%s)
run() { # spec kernel
  build/specl tune "$1" --kernel "$2" --rows 4096 --budget $BUDGET --db $DB \
    > $O/$2.txt 2>&1
  echo "$2 rc=$? t=$(( $(date +%s) - t0 ))"
  tr "\r" "\n" < $O/$2.txt | grep -E "configs,|left out|searched a part|^    [a-zA-Z(]|evaluated [0-9]+ of|incomplete|complete:|defaults [0-9.]+ us|best [0-9.]+ us|best:|the best is"
}
BUDGET=${2:-80}
if [ "$1" = bwd ]; then
  for k in q up down; do
    run specs/llama2-7b-train-bf16.yaml llama_${k}_proj_grad_bf16
  done
else
  for k in q up down; do run bench/specs/half.yaml bf16_$k; done
fi
