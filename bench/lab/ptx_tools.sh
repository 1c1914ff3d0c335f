#!/bin/sh
# ptx_tools.sh DIR - builds DIR/ptx_info (an emitted kernel file's PTX)
# and DIR/ptx_run (that PTX launched through the CUDA driver API, for
# Nsight Compute); needs an OpenCL driver and CUDA's toolkit (nvcc on
# the PATH).
set -e
dir=${1:?usage: ptx_tools.sh DIR}
mkdir -p "$dir"
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
cc -O2 -o "$dir/ptx_info" bench/lab/ptx_info.c -lOpenCL
cc -O2 -I"$cuda/include" -o "$dir/ptx_run" bench/lab/ptx_run.c \
    -L"$cuda/lib64/stubs" -L"$cuda/targets/x86_64-linux/lib/stubs" -lcuda
