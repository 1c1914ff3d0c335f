#!/bin/sh
# attention_rows with a tile's 8 scores as one vector (lanes) and without
# (each score reduced alone, exponentials one at a time: nolanes), three
# rounds alternating. Run from the repository root with the builds at
# build/lab4/specl-lanes and build/lab4/specl-nolanes.
out=${1:-bench/logs/pocl-prefill-lanes}
spec=bench/specs/attention.yaml
for round in 1 2 3; do
  for b in nolanes lanes; do
    for k in attn_8h_d64 attn_8h_d64_full; do
      build/lab4/specl-$b bench $spec --kernel $k --rows 1 --size seq_q=1024 \
        --size seq_kv=1024 --reps 5 --no-naive --csv 2>/dev/null |
        sed "s/^/$round,$b,/" >> "$out/bench.csv"
    done
    for k in attn_llama bf16_attn_llama; do
      build/lab4/specl-$b bench $spec --kernel $k --rows 1 --size seq_q=512 \
        --size seq_kv=512 --reps 5 --no-naive --csv 2>/dev/null |
        sed "s/^/$round,$b,/" >> "$out/bench.csv"
    done
  done
done
