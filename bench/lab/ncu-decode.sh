#!/bin/sh
# ncu-decode.sh OUT [KERNEL] - attention's decode step on tensor cores of
# bench/lab/attention-decode.yaml (Llama 3 8B's 32 query heads over 8 kv
# heads, head_dim 128, bf16, batch 8, one query over 4096 keys: K and V
# 134 MB), launched from its PTX by ptx_run.c: the split path's kernel
# (attention_mma_part_merged, one launch) against decode_swap
# (bench/lab/decode_swap.py: the products' roles swapped) at each
# CONFIGS "keys stages" and SPLITS, two rounds alternating, each output
# compared with the split path's; then both under Nsight Compute. Needs
# nvcc, ncu, an OpenCL driver and build/specl.
set -e
out=${1:?usage: ncu-decode.sh OUT [KERNEL]}
k=${2:-dec}
mkdir -p "$out" /tmp/ncu-decode
t=/tmp/ncu-decode
sh bench/lab/ptx_tools.sh $t
build/specl gen bench/lab/attention-decode.yaml --target sm90a -o $t/gen \
    > /dev/null
B=8 S=4096 H=32 KVH=8 D=128
rec=$(( (D + 5) / 4 * 4 ))
kv=$((B * S * KVH * D))
# The kernels' arguments at SPLIT splits (o is argument 6).
args() {
    echo "i:$1 i:1 i:$S bf16:$((B * H * D)) bf16:$kv bf16:$kv" \
        "z:$((B * H * D * 2)) z:$((B * H * 4))" \
        "z:$((B * H * $1 * rec * 4)) z:65536"
}
ncu_run() {
    ncu --clock-control none -k "$2" -s 1 -c 1 \
        --section SpeedOfLight --section MemoryWorkloadAnalysis \
        --section Occupancy --section LaunchStats \
        --section WarpStateStats --section SchedulerStats \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum \
        $t/ptx_run "$@"
}
cmp_bf16() {
    python3 - "$1" "$2" <<'PY'
import struct, sys
a, b = (open(f, "rb").read() for f in sys.argv[1:3])
n = len(a) // 2
def f(d, i):
    bits = struct.unpack_from("<H", d, 2 * i)[0] << 16
    return struct.unpack("<f", struct.pack("<I", bits))[0]
diff = max(abs(f(a, i) - f(b, i)) for i in range(n))
big = max(abs(f(a, i)) for i in range(n))
print(f"compare: {n} values, max |diff| {diff:.3g}, max |value| {big:.3g}")
PY
}
sh bench/lab/variant_cl.sh $t/gen $k 0 > $t/$k.cl
base=attention_mma_part_merged
for cfg in ${CONFIGS:-"16 1" "16 2" "32 1" "32 2" "16 3"}; do
    name=$k-$(echo $cfg | tr ' ' '-')
    python3 bench/lab/decode_swap.py $t/$k.cl $cfg > $t/$name.cl
    $t/ptx_info $t/$name.cl > $t/$name.ptx || continue
    for s in ${SPLITS:-16 32}; do
        echo "== $name (keys, stages $cfg), split $s: grid $s x" \
            "$((B * KVH)) of 32"
        for round in 1 2; do
            PTX_RUN_DUMP=6:$t/base.bin $t/ptx_run $t/$name.ptx $base $s \
                $((B * KVH)) 32 1 50 $(args $s)
            PTX_RUN_DUMP=6:$t/swap.bin $t/ptx_run $t/$name.ptx decode_swap \
                $s $((B * KVH)) 32 1 50 $(args $s)
        done
        cmp_bf16 $t/base.bin $t/swap.bin
    done
done
cp $t/*.cl "$out/" 2>/dev/null || true
name=$k-$(echo ${NCU_CONFIG:-16 2} | tr ' ' '-')
ncu_run $t/$name.ptx $base 16 $((B * KVH)) 32 1 2 $(args 16) \
    > "$out/ncu-split-path.txt" 2>&1 || true
ncu_run $t/$name.ptx decode_swap 16 $((B * KVH)) 32 1 2 $(args 16) \
    > "$out/ncu-$name.txt" 2>&1 || true
