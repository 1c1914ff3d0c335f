#!/bin/bash
# specl tune with candidates compared by the code that runs at the tuned
# rows: three kernels, their candidate counts, where a candidate's seconds
# go, and the search's best against the defaults back to back.
O=$OUT/tr; mkdir -p $O; DB=$O/nvidia-h200.yaml
t0=$(date +%s)
run() {
  build/specl tune "$1" --kernel "$2" --rows "$3" --budget "$4" --db $DB > $O/$2-$3.txt 2>&1
  echo "$2 rows $3 rc=$? t=$(( $(date +%s) - t0 ))"
  tr "\r" "\n" < $O/$2-$3.txt | grep -E "configs,|evaluated [0-9]+ of|seconds a|    [0-9.]+ checked|incomplete|complete:|defaults [0-9.]+ us|best [0-9.]+ us|best:|the best is"
}
run bench/specs/half.yaml bf16_q 4096 60
run bench/specs/xent.yaml bf16_xent_llama3 4096 60
run bench/specs/vocab.yaml vocab 64 45
