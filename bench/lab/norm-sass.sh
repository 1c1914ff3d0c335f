#!/bin/sh
# norm-sass.sh OUT [KERNEL...] - the PTX and SASS (ptxas for sm_90a,
# cuobjdump) of the norms' one-launch backward (NVIDIA variant) of
# bench/specs/layer.yaml, for reading the instructions a row element
# costs. Needs nvcc's tools, an OpenCL driver and build/specl.
set -e
out=${1:?usage: norm-sass.sh OUT [KERNEL...]}
shift
kernels=${*:-bf16_layernorm_back_4096 bf16_rmsnorm_back_4096}
t=/tmp/norm-sass
mkdir -p "$out" $t
sh bench/lab/ptx_tools.sh $t
build/specl gen bench/specs/layer.yaml -o $t/gen > /dev/null
for k in $kernels; do
    sh bench/lab/variant_cl.sh $t/gen $k 2 > "$out/$k.cl"
    $t/ptx_info "$out/$k.cl" > "$out/$k.ptx"
    ptxas -arch=sm_90a -v "$out/$k.ptx" -o $t/$k.cubin 2> "$out/$k.ptxas.txt"
    cuobjdump -sass $t/$k.cubin > "$out/$k.sass"
done
