#!/bin/sh
# ncu-source.sh OUT - layernorm_backward bf16 4096 x 4096 (dgamma and
# dbeta wanted; bench/specs/layer.yaml's NVIDIA variant) under Nsight
# Compute's full set: its report, the details page, the stall reasons
# and its SASS with each instruction's executions and stall samples.
# Run after ncu-norms.sh (its PTX and ptx_run in /tmp/ncu-norms).
set -e
out=${1:?usage: ncu-source.sh OUT}
mkdir -p "$out"
t=/tmp/ncu-norms k=bf16_layernorm_back_4096 fn=layernorm_backward_fused
R=4096 D=4096
N=$((R * D))
args="i:$R bf16:$N bf16:$D bf16:$N z:$((N * 4)) z:$((D * 4)) z:$((D * 4))"
args="$args z:$((128 * 2 * D * 4)) z:4096"
ncu --clock-control none -k $fn -s 1 -c 1 --set full \
    --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio \
    -o "$out/ln" -f $t/ptx_run $t/$k.ptx $fn 1 128 256 2 2 $args \
    > "$out/profile.txt" 2>&1
ncu --import "$out/ln.ncu-rep" --page details > "$out/details.txt" 2>&1
ncu --import "$out/ln.ncu-rep" --page raw --csv \
    > "$out/raw.csv" 2>&1 || true
ncu --import "$out/ln.ncu-rep" --page source --print-source sass --csv \
    > "$out/sass.csv" 2>&1 || ncu --help > "$out/ncu-help.txt" 2>&1
