#!/bin/sh
# tma-check.sh - on an NVIDIA GPU of compute capability 9.0 with CUDA's
# compiler: do the tensor maps that templates/tma_ptx.cl writes match
# the words this driver's cuTensorMapEncodeTiled makes, and do loads by
# them give exact products? Prints each map word that differs and the
# lab GEMM's check; exits non-zero on a mismatch or a wrong product.
#   sh bench/lab/tma-check.sh [BUILD_DIR]   (from the project root)
set -e
dir=${1:-build/lab}
mkdir -p "$dir"
nvcc -o "$dir/tensor_map" bench/lab/tensor_map.cu -lcuda
cc -O2 -o "$dir/ws_gemm" bench/lab/ws_gemm.c -lOpenCL
status=0
for shape in "4096 4096" "4096 11008"; do
    set -- $shape
    m=$1 n=$2
    x=$("$dir/tensor_map" 4096 "$m" 8192 64 128)
    w=$("$dir/tensor_map" "$n" 4096 $((n * 2)) 64 64)
    out=$(MAP_X="$x" MAP_W="$w" OPTS="-DTMA=3" \
          "$dir/ws_gemm" "$m" "$n" 4096 2 256 4 10 2>&1) || status=1
    echo "== M $m N $n K 4096"
    echo "$out" | grep -E "^map word|^check:|^ws " || status=1
    if echo "$out" | grep -q "^map word"; then
        status=1
    fi
done
[ $status -eq 0 ] && echo "tensor maps: the driver's words; products exact"
exit $status
