#!/bin/sh
# norm-ab.sh - layernorm_backward bf16 4096 x 4096 (dgamma and dbeta
# wanted), the NVIDIA variant as emitted against it with the row sums
# folded transposed (norm_transposed.py), each launched from its PTX by
# ptx_run.c, three rounds alternating. Run after ncu-norms.sh.
set -e
t=/tmp/ncu-norms k=bf16_layernorm_back_4096 fn=layernorm_backward_fused
python3 bench/lab/norm_transposed.py $t/$k.cl $t/$k-t.cl
$t/ptx_info $t/$k-t.cl > $t/$k-t.ptx
R=4096 D=4096
N=$((R * D))
args="i:$R bf16:$N bf16:$D bf16:$N z:$((N * 4)) z:$((D * 4)) z:$((D * 4))"
args="$args z:$((128 * 2 * D * 4)) z:4096"
for round in 1 2 3; do
    for v in "" -t; do
        printf "round %s %s: " $round "${v:-emitted}"
        $t/ptx_run $t/$k$v.ptx $fn 1 128 256 2 200 $args | tail -1
    done
done
