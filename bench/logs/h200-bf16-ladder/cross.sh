#!/bin/bash
# The crossovers of db.yaml's ladders measured (a run over the tuned
# database that searches nothing: --max-evals 1), into $OUT/db.yaml;
# then the rows ranges `gen --db` makes of it (gen-notes.txt) and, with
# $1 rounds, bench.sh at the first and last rows of each range of the
# kernels named after it. Everything into $OUT/cross.txt.
set -u
n=$1; shift
L=bench/logs/h200-bf16-ladder
if [ -f $L/db-cross.yaml ]; then cp $L/db-cross.yaml $OUT/db.yaml
else cp $L/db.yaml $OUT/db.yaml; fi
tune() {
  /usr/bin/time -f "%e s" build/specl tune bench/specs/half.yaml \
    --kernel $1 --rows $2 --max-evals 1 --db $OUT/db.yaml
}
{
if ! grep -q upto_rows $OUT/db.yaml; then
  tune bf16_q 1,8,32,128,256,512,1024,2048 2>&1
  tune bf16_down 1,8,32,128,256,512,1024 2>&1
fi
build/specl gen bench/specs/half.yaml --db $OUT/db.yaml -o /tmp/g 2>&1 |
  grep -E "bf16_(q|down):" | tee $OUT/gen-notes.txt
for k in "$@"; do
  ends=$(grep "^specl: note: $k: .*, tuned at rows" $OUT/gen-notes.txt |
    sed -E 's/.*: rows ([0-9]+)( to ([0-9]+))?.*/\1 \3/' | tr ' ' '\n' |
    grep -v '^1$' | grep . | sort -n | uniq | tr '\n' ' ')
  echo "== $k ends: $ends"
  bash $L/bench.sh $k $n $OUT/db.yaml $ends
done
} > $OUT/cross.txt 2>&1
