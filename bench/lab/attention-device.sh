#!/bin/sh
# attention-device.sh - attention's tensor-core paths on one NVIDIA device
# of compute capability 9.0, in one command: the device suites of the
# wgmma and mma kernels (forward and backward), the forward's defaults at
# the design's shapes and the decode step through NAME.c, and PyTorch's
# SDPA (bench/peers.py --attention) in the same run. Logs go to LOGDIR.
#
#   SPECL_DEVICE=0:0 sh bench/lab/attention-device.sh LOGDIR
#
# Run from the repository root after `make build/specl build/specl_tests`.
set -u
logdir=${1:?usage: attention-device.sh LOGDIR}
mkdir -p "$logdir"
: "${SPECL_DEVICE:?set SPECL_DEVICE=P:D}"
export SPECL_DEVICE
failed=0
for t in "attention: the prefill path on warpgroup tensor cores (engine: wgmma)" \
    "attention: the prefill path on tensor cores (engine: mma)" \
    "attention_backward on tensor cores (engine: mma)"; do
    name=$(echo "$t" | tr -c 'a-z0-9\n' '-' | cut -c1-60)
    timeout 300 build/specl_tests --only "$t" numeric >"$logdir/suite-$name.txt" 2>&1 ||
        failed=$((failed + 1))
    grep -h "kernels built\|Test:" "$logdir/suite-$name.txt"
done
bench() {
    timeout 300 build/specl bench "$@" --no-naive --reps 20 --csv 2>&1 |
        grep ",specl," | tee -a "$logdir/bench.csv" | cut -d, -f1,5,15-18,21
}
for k in bf16_attn_16h bf16_attn_16h_full bf16_attn_llama bf16_attn_32h_d64; do
    bench bench/specs/attention.yaml --kernel $k --rows 4
done
bench bench/specs/attention.yaml --kernel bf16_attn_16h --rows 1
bench bench/specs/attention.yaml --kernel bf16_attn_16h --rows 16 \
    --size seq_q=1024 --size seq_kv=1024
bench bench/specs/attention.yaml --kernel bf16_attn_llama --rows 8 \
    --size seq_q=1 --size seq_kv=4096
timeout 300 python3 bench/peers.py --attention --reps 20 >"$logdir/sdpa.txt" 2>&1
cat "$logdir/sdpa.txt"
echo "attention-device.sh: $failed suites failed"
[ "$failed" -eq 0 ]
