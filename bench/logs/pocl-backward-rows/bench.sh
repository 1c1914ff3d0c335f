#!/bin/sh
# attention_backward on CPUs: the work-group kernels (old) against
# attention_backward_dq_rows and _dkv_rows (new), three rounds
# alternating, S 512. Run from the repository root with the two builds at
# build/lab4/specl-bwd-old and build/lab4/specl-bwd-new.
out=${1:-bench/logs/pocl-backward-rows}
spec=bench/specs/attention_backward.yaml
for round in 1 2 3; do
  for b in old new; do
    build/lab4/specl-bwd-$b bench $spec --kernel attn_bwd_8h_d64 --rows 1 \
      --size seq_q=512 --size seq_kv=512 --reps 3 --csv 2>/dev/null |
      sed "s/^/$round,$b,/" >> "$out/bench.csv"
    for k in attn_bwd_llama bf16_attn_bwd_llama bf16_attn_bwd_16h_d80; do
      build/lab4/specl-bwd-$b bench $spec --kernel $k --rows 1 \
        --size seq_q=512 --size seq_kv=512 --reps 3 --no-naive --csv \
        2>/dev/null | sed "s/^/$round,$b,/" >> "$out/bench.csv"
    done
  done
done
