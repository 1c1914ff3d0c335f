#!/bin/bash
# $1 rounds, then SPEC:KERNEL:ROWS triples: each benched through NAME.c by
# build/specl-before (dff3e20: X read twice) and build/specl (x_once:
# T and dA from one read of X, the float32 adapter on tf32 tensor
# cores) in turn, $1 rounds; one CSV line
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
