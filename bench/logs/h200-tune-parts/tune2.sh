#!/bin/bash
# The parts searched nearest the best first (build/specl): the bf16 step
# of llama-q again, then the float32 adapter gradients of llama-q, -up and
# -down into one database, each kernel's budget 60 s.
O=$OUT/tp2; mkdir -p $O; DB=$O/h200-parts.yaml
t0=$(date +%s)
run() { # spec kernel
  build/specl tune "$1" --kernel "$2" --rows 4096 --budget 60 --db $DB \
    > $O/$2.txt 2>&1
  echo "$2 rc=$? t=$(( $(date +%s) - t0 ))"
  tr "\r" "\n" < $O/$2.txt | grep -E "configs,|searched a part|^    [a-zA-Z(]|evaluated [0-9]+ of|incomplete|complete:|defaults [0-9.]+ us|best [0-9.]+ us|best:|the best is"
}
run specs/llama2-7b-train-bf16.yaml llama_q_proj_grad_bf16
for k in q up down; do run specs/llama2-7b-train.yaml llama_${k}_proj_adapter; done
