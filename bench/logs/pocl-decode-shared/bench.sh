#!/bin/bash
# The CPU decode step (attention_part_rows) with the query heads of a kv
# head sharing each key's loads (attention_dots.cl; build at
# /tmp/specl-prd) against the kernel before (/tmp/specl-base2), min of 3
# benches each, alternating.
Y=bench/logs/pocl-decode-shared/decode.yaml
m() { best=999999999; for i in 1 2 3; do t=$($1 bench $Y --kernel $2 --rows $3 --size seq_q=$4 --size seq_kv=$5 --reps 10 --no-naive --csv 2>/dev/null | awk -F, '$1=="kernel"{for(i=1;i<=NF;i++)h[$i]=i} $h["variant"]=="specl"{print $h["us"], $h["error"], $h["copy_us"]}'); u=${t%% *}; best=$(python3 -c "print(min($best, $u))"); last="$t"; done; echo "$best [$last]"; }
for s in "llama3_f32 1 1 4096" "llama3_bf16 1 1 4096" "llama3_f32 4 1 4096" "llama3_f32 1 1 16384" "llama3_f32 1 4 4096" "mha_d64_f32 1 1 4096" "llama3_f32 1 1 512"; do set -- $s
  echo "$1 B$2 q$3 kv$4: before $(m /tmp/specl-base2 $1 $2 $3 $4) | after $(m /tmp/specl-prd $1 $2 $3 $4)"
done
