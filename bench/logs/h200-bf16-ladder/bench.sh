#!/bin/bash
# $1 kernel of bench/specs/half.yaml, $2 rounds, $3 database, then row
# counts: each benched through NAME.c with the defaults and with the
# database in turn, $2 rounds; one CSV line each into $OUT/bench-$1.csv
# (side, round, then specl bench's columns).
k=$1 n=$2 db=$3; shift 3
for r in "$@"; do for i in $(seq $n); do for s in def db; do
  X=; [ $s = db ] && X="--db $db"
  build/specl bench bench/specs/half.yaml --kernel $k --rows $r --no-naive \
    --csv --reps 50 $X 2>>$OUT/err-$k.txt |
    awk -F, -v s=$s -v i=$i '$15=="specl"{print s","i","$0}' >> $OUT/bench-$k.csv
done; done; done
awk -F, '{print $7,$1,$2,$20,$19,$32}' $OUT/bench-$k.csv
