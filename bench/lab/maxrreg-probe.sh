#!/bin/sh
# maxrreg-probe.sh OUT - does NVIDIA's OpenCL compiler cap registers with
# -cl-nv-maxrregcount? KERNEL_INFO (the source of a C program that builds
# each .cl it is given with "-cl-std=CL1.2 -cl-nv-verbose" and prints the
# build log) built with that option added, on the NVIDIA variants of
# cross_entropy bf16 128256 (48 registers) and the one-launch bf16
# layernorm_backward (127): ptxas's registers and spills at each cap
# (SEP: what joins the option and its value, "=" or " ").
set -e
out=${1:?usage: maxrreg-probe.sh OUT}
src=${KERNEL_INFO:?set KERNEL_INFO: the source of a kernel-info program}
t=/tmp/maxrreg
mkdir -p "$out" $t
build/specl gen bench/specs/xent.yaml -o $t/gx > /dev/null
build/specl gen bench/specs/layer.yaml -o $t/gl > /dev/null
for k in bf16_xent_llama3:gx bf16_layernorm_back_4096:gl; do
    name=${k%%:*} dir=$t/${k#*:}
    sh bench/lab/variant_cl.sh $dir $name 2 > $t/$name.cl
done
for cap in 0 40 32 96 80 64; do
    opt="-cl-std=CL1.2 -cl-nv-verbose"
    [ $cap = 0 ] || opt="$opt -cl-nv-maxrregcount${SEP:-=}$cap"
    sed "s/\"-cl-std=CL1.2 -cl-nv-verbose\"/\"$opt\"/" "$src" > $t/ki.c
    cc -O2 -o $t/ki $t/ki.c -lOpenCL
    echo "== cap $cap"
    $t/ki $t/bf16_xent_llama3.cl $t/bf16_layernorm_back_4096.cl 2>&1 |
        grep -E "Used|spill|Compiling entry|build" || true
done > "$out/maxrreg.txt" 2>&1
