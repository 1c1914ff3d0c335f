#!/bin/sh
# ncu-seeds.sh OUT - the seeds' bf16 kernels at few rows, launched from
# the PTX of their NVIDIA tensor-core variant (variant 2) by ptx_run.c,
# timed and profiled by Nsight Compute:
#   s2048_bf16 (bench/specs/half_small.yaml: lora_forward, K = N = 2048,
#     rank 8): lora_decode_mma, one launch, at 32, 64 and 128 rows;
#   bf16_seed_grad (bench/specs/train_half.yaml: lora_backward, K = N =
#     512, rank 8, every gradient): lora_bwd_fused at 128 rows.
# Each launch's geometry is its path's in the emitted NAME.c (the
# groups of dimension 0, the rows a group of dimension 1, the slices).
# With SASS=1 the 128-row launches also go through Nsight Compute's full
# set, their SASS with each instruction's executions and stall samples
# written to OUT/*-sass.csv.
# Needs nvcc, ncu, an OpenCL driver and build/specl.
set -e
out=${1:?usage: ncu-seeds.sh OUT}
mkdir -p "$out" /tmp/ncu-seeds
t=/tmp/ncu-seeds
sh bench/lab/ptx_tools.sh $t
build/specl gen bench/specs/half_small.yaml -o $t/gen > /dev/null
build/specl gen bench/specs/train_half.yaml -o $t/gen > /dev/null
ptx() {
    sh bench/lab/variant_cl.sh $t/gen $1 2 > $t/$1.cl
    $t/ptx_info $t/$1.cl > $t/$1.ptx
}
# profile NAME KERNEL GX GY BX BY ARG...
profile() {
    name=$1 fn=$2
    shift 2
    echo "== $name: $fn, groups $1 x $2 of $3 x $4"
    p=$t/${name%%@*}.ptx
    $t/ptx_run $p $fn "$@" 2>&1 | sed 's/^/50 launches: /' || true
    ncu --clock-control none -k $fn -s 1 -c 1 \
        --section SpeedOfLight --section MemoryWorkloadAnalysis \
        --section Occupancy --section LaunchStats \
        --section WarpStateStats --section SchedulerStats \
        --section ComputeWorkloadAnalysis \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum \
        $t/ptx_run $p $fn $1 $2 $3 $4 2 $(echo "$@" | cut -d' ' -f6-) \
        2>&1 || true
    case "$SASS:$name" in
    1:*@128 | 1:bf16_seed_grad)
        ncu --clock-control none -k $fn -s 1 -c 1 --set full \
            -o $t/$fn -f $t/ptx_run $p $fn $1 $2 $3 $4 2 \
            $(echo "$@" | cut -d' ' -f6-) > /dev/null 2>&1 || true
        ncu --import $t/$fn.ncu-rep --page source --print-source sass \
            --csv > "$out/$fn-sass.csv" 2>&1 || true
        ;;
    esac
}
ptx s2048_bf16
K=2048 N=2048 R=8
# lora_decode_mma: groups (slices x 32 strips, rows / 32); args rows,
# slices, x, w, a, b, y, scratch (4608 floats a row), sync (128 words).
for rs in 32:8 64:4 128:2; do
    rows=${rs%%:*} sl=${rs##*:}
    profile s2048_bf16@$rows lora_decode_mma $((sl * 32)) $((rows / 32)) \
        256 1 50 i:$rows i:$sl bf16:$((rows * K)) bf16:$((K * N)) \
        bf16:$((K * R)) bf16:$((R * N)) z:$((rows * N * 2)) \
        z:$((4608 * rows * 4)) z:512
done > "$out/decode-mma.txt"
ptx bf16_seed_grad
K=512 N=512
# lora_bwd_fused at 128 rows: groups (2 slices x 10, 4), 16 x 16 items;
# args rows, slices, x, w, a, b, dy, dx, da, db, scratch (1536 floats a
# row and 16384), sync (34 words).
profile bf16_seed_grad lora_bwd_fused 20 4 16 16 50 i:128 i:2 \
    bf16:$((128 * K)) bf16:$((K * N)) bf16:$((K * R)) bf16:$((R * N)) \
    bf16:$((128 * N)) z:$((128 * K * 2)) z:$((K * R * 2)) z:$((R * N * 2)) \
    z:$(((1536 * 128 + 16384) * 4)) z:136 > "$out/bwd-fused.txt"
