#!/bin/bash
# $1 rounds, then SPEC:KERNEL:ROWS triples: each benched through NAME.c by
# build/specl-before (dff3e20) and build/specl (lora_bwd_tg and
# lora_bwd_tg_mma taking their row blocks last first, T's and G's
# work-groups of a block side by side) in turn, $1 rounds; one CSV line
# each into $OUT/bench.csv (side, round, then specl bench's columns).
n=$1; shift
for c in "$@"; do
  IFS=: read spec k r <<< "$c"
  for i in $(seq $n); do for s in before after; do
    bin=build/specl; [ $s = before ] && bin=build/specl-before
    $bin bench $spec --kernel $k --rows $r --no-naive --csv --reps 30 \
      2>>$OUT/err.txt |
      awk -F, -v s=$s -v i=$i '$15=="specl"{print s","i","$0}' >> $OUT/bench.csv
  done; done
done
