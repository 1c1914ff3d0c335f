#!/bin/bash
# specl tune's local search a part of the knobs at a time (build/specl)
# against the search before it (build/specl-old, the parent commit), the
# same kernel, rows and budget, each into a database of its own.
O=$OUT/tp; mkdir -p $O
t0=$(date +%s)
run() { # binary tag spec kernel rows budget
  $1 tune "$3" --kernel "$4" --rows "$5" --budget "$6" --db $O/$2.yaml \
    > $O/$2-$4.txt 2>&1
  echo "$2 $4 rows $5 rc=$? t=$(( $(date +%s) - t0 ))"
  tr "\r" "\n" < $O/$2-$4.txt | grep -E "configs,|searched a part|^    [a-zA-Z]|evaluated [0-9]+ of|seconds a|incomplete|complete:|defaults [0-9.]+ us|best [0-9.]+ us|best:|the best is"
}
for k in "specs/llama2-7b-train-bf16.yaml llama_q_proj_grad_bf16" \
         "specs/llama2-7b-train.yaml llama_q_proj_adapter"; do
  set -- $k
  run build/specl parts "$1" "$2" 4096 60
  run build/specl-old before "$1" "$2" 4096 60
done
