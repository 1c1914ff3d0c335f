#!/bin/sh
# The prefill on CPUs, the work-group kernel (old) against attention_rows
# (new), three rounds alternating; S 1024 for the 8-head cases (with the
# naive kernel), S 512 for the others. Run from the repository root with
# the two builds at build/lab4/specl-old and build/lab4/specl-new.
out=${1:-bench/logs/pocl-prefill-rows}
spec=bench/specs/attention.yaml
for round in 1 2 3; do
  for b in old new; do
    for k in attn_8h_d64 attn_8h_d64_full; do
      build/lab4/specl-$b bench $spec --kernel $k --rows 1 --size seq_q=1024 \
        --size seq_kv=1024 --reps 5 --csv 2>/dev/null |
        sed "s/^/$round,$b,/" >> "$out/bench.csv"
    done
    for k in attn_llama bf16_attn_llama bf16_attn_16h_d80 bf16_attn_gemma; do
      build/lab4/specl-$b bench $spec --kernel $k --rows 1 --size seq_q=512 \
        --size seq_kv=512 --reps 5 --no-naive --csv 2>/dev/null |
        sed "s/^/$round,$b,/" >> "$out/bench.csv"
    done
  done
done
