#!/bin/sh
# run.sh - the benchmark table: every case of bench/RESULTS.md, at its rows,
# on one device. usage: bench/run.sh [gpu|gpu-half|cpu] [extra `specl
# bench` options] gpu: the full-size cases (an H100-class device);
# gpu-half: its half-precision part alone; cpu: sizes a 2-core PoCL device
# finishes in minutes. Output: one table per case on stdout (--verbose).
set -e
here=$(dirname "$0")
specl=${SPECL:-build/specl}
size=${1:-cpu}
[ $# -gt 0 ] && shift
lora=$here/specs/lora.yaml
rows=$here/specs/rows.yaml
half=$here/specs/half.yaml
train=specs/llama2-7b-train.yaml
# half precision: tensor cores where the device has them (the defaults:
# wgmma on compute capability 9.0), engine: mma for comparison
gpu_half() {
    for k in bf16_q f16_q bf16_up bf16_down bf16_q_mma bf16_up_mma \
             bf16_q_mma_big bf16_q_delta; do
        "$specl" bench --verbose "$half" --kernel $k --rows 4096 "$@"
    done
    "$specl" bench --verbose "$half" --kernel bf16_q --rows 8 "$@"
    "$specl" bench --verbose "$half" --kernel bf16_rmsnorm_4096 --rows 4096 "$@"
    "$specl" bench --verbose "$half" --kernel bf16_layernorm_4096 --rows 4096 "$@"
    "$specl" bench --verbose "$half" --kernel bf16_softmax_32000 --rows 4096 "$@"
    "$specl" bench --verbose "$half" --kernel bf16_softmax_1024 --rows 32768 "$@"
}
case "$size" in
gpu-half)
    gpu_half "$@"
    ;;
gpu)
    "$specl" bench --verbose "$lora" --kernel llama_q --rows 4096 "$@"
    "$specl" bench --verbose "$lora" --kernel llama_up --rows 4096 "$@"
    "$specl" bench --verbose "$lora" --kernel llama_q_delta --rows 4096 "$@"
    "$specl" bench --verbose "$lora" --kernel llama_q --rows 8 "$@"
    # few rows for the tiles: the split path (K in slices)
    for r in 64 128 256 384; do
        "$specl" bench --verbose "$lora" --kernel llama_q --rows $r "$@"
    done
    "$specl" bench --verbose specs/seeds.yaml --rows 128 "$@"
    "$specl" bench --verbose "$here/specs/small.yaml" --rows 128 "$@"
    # layers of 4-16 MiB: large tiles, and the split path at few rows
    for r in 256 4096; do
        "$specl" bench --verbose "$here/specs/narrow.yaml" --rows $r --no-naive "$@"
    done
    # K and N that divide no tile, and few rows of odd-width layers
    for k in q4096 q4100 k4001 n4001 q4001 kn4002; do
        "$specl" bench --verbose "$here/specs/tails.yaml" --kernel $k --rows 4096 \
            --no-naive "$@"
    done
    for r in 1 8 16; do
        "$specl" bench --verbose "$here/specs/decode_odd.yaml" --rows $r --no-naive "$@"
    done
    "$specl" bench --verbose "$rows" --kernel rmsnorm_4096 --rows 4096 "$@"
    "$specl" bench --verbose "$rows" --kernel layernorm_4096 --rows 4096 "$@"
    "$specl" bench --verbose "$rows" --kernel softmax_1024 --rows 32768 "$@"
    "$specl" bench --verbose "$rows" --kernel softmax_32000 --rows 512 "$@"
    "$specl" bench --verbose specs/seeds.yaml --rows 1 --kernel seed_softmax_1024 "$@"
    # softmax over a vocabulary at decode: the one-launch split path (up
    # to 8 rows), the split path of two launches (vocab_two_launch: at
    # every rows), 32 chunks a row (coop32: up to 4 rows)
    for r in 1 8 64; do
        for k in vocab bf16_vocab vocab_two_launch bf16_vocab_two_launch \
            vocab_coop32 bf16_vocab_coop32; do
            "$specl" bench --verbose "$here/specs/vocab.yaml" --kernel $k --rows $r "$@"
        done
    done
    "$specl" bench --verbose "$here/specs/vocab.yaml" --kernel bf16_vocab_32000 \
        --rows 4096 "$@"
    # the norms at decode: the defaults against the split path
    for r in 1 8 64; do
        "$specl" bench --verbose "$here/specs/norms_decode.yaml" --rows $r \
            --no-naive "$@"
    done
    # the loss and dlogits of a head: a training step's tokens, and the
    # split path at few rows
    for k in bf16_xent_llama3 bf16_xent_llama2 xent_llama2; do
        "$specl" bench "$here/specs/xent.yaml" --kernel $k --rows 4096 \
            --no-naive "$@"
    done
    "$specl" bench "$here/specs/xent.yaml" --kernel bf16_xent_gemma \
        --rows 1024 --no-naive "$@"
    for r in 1 8 64; do
        for k in bf16_xent_qwen bf16_xent_qwen_two_launch; do
            "$specl" bench "$here/specs/xent.yaml" --kernel $k --rows $r "$@"
        done
    done
    # attention: prefill (design.md's shape, Llama 3's heads) and decode
    # over a cache of 4096 keys (the split path)
    for k in bf16_attn_16h bf16_attn_llama; do
        "$specl" bench --verbose "$here/specs/attention.yaml" --kernel $k \
            --rows 4 --no-naive "$@"
    done
    "$specl" bench --verbose "$here/specs/attention.yaml" \
        --kernel bf16_attn_llama --rows 8 --size seq_q=1 --size seq_kv=4096 \
        --no-naive "$@"
    gpu_half "$@"
    # training: lora_backward at 4096 tokens (specs/seeds.yaml above has
    # the seeds' case at 128)
    for k in llama_q_proj_grad llama_q_proj_adapter llama_up_proj_grad \
             llama_up_proj_adapter llama_down_proj_adapter; do
        "$specl" bench --verbose "$train" --kernel $k --rows 4096 --no-naive "$@"
    done
    ;;
cpu)
    # PoCL's worker threads pinned to the cores: unpinned, the same kernel
    # took about 330 or about 670 µs from run to run on a 2-core machine
    # (bench/RESULTS.md, "swiglu: 16-byte accesses on GPUs").
    export POCL_AFFINITY="${POCL_AFFINITY:-1}"
    "$specl" bench --verbose "$lora" --kernel llama_q --rows 512 --reps 5 "$@"
    "$specl" bench --verbose "$lora" --kernel llama_q_delta --rows 512 --reps 5 "$@"
    "$specl" bench --verbose "$lora" --kernel llama_q --rows 8 --reps 10 "$@"
    "$specl" bench --verbose specs/seeds.yaml --rows 128 --reps 10 "$@"
    "$specl" bench --verbose "$here/specs/small.yaml" --rows 128 --reps 10 "$@"
    "$specl" bench --verbose "$rows" --kernel rmsnorm_4096 --rows 4096 --reps 10 "$@"
    "$specl" bench --verbose "$rows" --kernel layernorm_4096 --rows 4096 --reps 10 "$@"
    "$specl" bench --verbose "$rows" --kernel softmax_1024 --rows 4096 --reps 10 "$@"
    "$specl" bench --verbose "$rows" --kernel softmax_32000 --rows 128 --reps 10 "$@"
    "$specl" bench --verbose "$train" --kernel llama_q_proj_adapter --rows 512 \
        --reps 5 "$@"
    ;;
*)
    echo "usage: bench/run.sh [gpu|cpu] [specl bench options]" >&2
    exit 2
    ;;
esac
