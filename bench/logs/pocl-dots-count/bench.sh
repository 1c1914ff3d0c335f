#!/bin/sh
# attention_dots.cl with the vectors' count an argument (the plan's
# DOTS_N their most; /tmp/specl-prd) against the count a macro
# (/tmp/specl-base2): the prefill and backward kernels, three rounds
# alternating, fastest kept.
for round in 1 2 3; do
  for b in base2 prd; do
    for c in "attention.yaml attn_8h_d64 1024" "attention.yaml attn_llama 512" \
             "attention_backward.yaml attn_bwd_8h_d64 512"; do
      set -- $c
      t=$(/tmp/specl-$b bench bench/specs/$1 --kernel $2 --rows 1 --size seq_q=$3 \
          --size seq_kv=$3 --reps 3 --no-naive --csv 2>/dev/null |
          awk -F, '$1=="kernel"{for(i=1;i<=NF;i++)h[$i]=i; next} $h["variant"]=="specl"{print $h["us"], $h["error"]}')
      echo "$round $b $2 $t"
    done
  done
done
