#!/bin/bash
# llama-q f32 (specs/llama2-7b.yaml llama_q_proj) tuned over row counts
# with $1 seconds of search each, the crossovers measured, into
# $OUT/db.yaml; then the rows ranges `gen --db` makes (gen-notes.txt) and
# $2 rounds of benches, the defaults and --db alternating, at each row
# count and each tuned range's first and last rows ($OUT/bench.csv).
set -u
S=specs/llama2-7b.yaml K=llama_q_proj
{
/usr/bin/time -f "%e s" build/specl tune $S --kernel $K \
  --rows 1,8,32,128,256,512,4096 --budget $1 --db $OUT/db.yaml 2>&1
build/specl gen $S --db $OUT/db.yaml -o /tmp/g 2>&1 | grep "$K:" |
  tee $OUT/gen-notes.txt
ends=$(grep "^specl: note: $K: .*, tuned at rows" $OUT/gen-notes.txt |
  sed -E 's/.*: rows ([0-9]+)( to ([0-9]+))?.*/\1 \3/' | tr ' ' '\n' |
  grep . | sort -n | uniq | tr '\n' ' ')
echo "== ends: $ends"
for r in $(echo 1 8 32 128 256 512 4096 $ends | tr ' ' '\n' | sort -n | uniq)
do for i in $(seq $2); do for s in def db; do
  X=; [ $s = db ] && X="--db $OUT/db.yaml"
  build/specl bench $S --kernel $K --rows $r --no-naive --csv --reps 50 $X \
    2>>$OUT/err.txt |
    awk -F, -v s=$s -v i=$i '$15=="specl"{print s","i","$0}' >> $OUT/bench.csv
done; done; done
} > $OUT/ladder.txt 2>&1
