#!/bin/bash
# H200 tuning database: Llama 2 7B training kernels at 4096 rows, one kernel
# per distinct shape (q/k/v/o and gate/up share entries)
O=$OUT/th1; mkdir -p $O; DB=$O/nvidia-h200.yaml
t0=$(date +%s)
for k in llama_q_proj_grad_bf16 llama_up_proj_grad_bf16 llama_down_proj_grad_bf16 llama_q_proj_adapter_bf16 llama_up_proj_adapter_bf16 llama_down_proj_adapter_bf16; do
  build/specl tune specs/llama2-7b-train-bf16.yaml --kernel $k --rows 4096 --budget 40 --db $DB >> $O/tune.txt 2>&1
  echo "$k rc=$? t=$(( $(date +%s) - t0 ))"
done
for k in llama_up_proj_grad llama_q_proj_adapter; do
  build/specl tune specs/llama2-7b-train.yaml --kernel $k --rows 4096 --budget 50 --db $DB >> $O/tune.txt 2>&1
  echo "$k rc=$? t=$(( $(date +%s) - t0 ))"
done
tr "\r" "\n" < $O/tune.txt | grep -E "^[a-z]|incomplete|defaults [0-9.]+ us|best [0-9.]+ us \(|the best is|evaluated [0-9]+ of" | tail -70
