#!/bin/bash
# The crossovers of the bf16 ladders measured again by the grid search:
# h200-bf16-ladder/db-cross.yaml without its crossovers, a run over it
# that searches nothing (--max-evals 1), into $OUT/db.yaml; then the rows
# ranges `gen --db` makes of it (gen-notes.txt). Into $OUT/cross.txt.
set -u
L=bench/logs/h200-bf16-ladder
cp $L/db-cross.yaml $OUT/db.yaml
sed -i '/^  \(upto_rows\|next_from\|upto_next\|upto_with\):/d' $OUT/db.yaml
tune() {
  /usr/bin/time -f "%e s" build/specl tune bench/specs/half.yaml \
    --kernel $1 --rows $2 --max-evals 1 --db $OUT/db.yaml
}
{
tune bf16_q 1,8,32,128,256,512,1024,2048 2>&1
tune bf16_down 1,8,32,128,256,512,1024 2>&1
build/specl gen bench/specs/half.yaml --db $OUT/db.yaml -o /tmp/g 2>&1 |
  grep -E "bf16_(q|down):" | tee $OUT/gen-notes.txt
} > $OUT/cross.txt 2>&1
