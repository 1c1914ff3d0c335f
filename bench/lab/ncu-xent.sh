#!/bin/sh
# ncu-xent.sh OUT - cross_entropy bf16 4096 x 128256 (bench/specs/
# xent.yaml's bf16_xent_llama3, NVIDIA variant): the shared path's kernel
# (8 work-groups a row) and the row path's (one a row), launched from
# their PTX by ptx_run.c, timed and profiled by Nsight Compute: how much
# of the second read of each row comes from L2. Needs nvcc, ncu, an
# OpenCL driver and build/specl.
set -e
out=${1:?usage: ncu-xent.sh OUT}
mkdir -p "$out" /tmp/ncu-xent
t=/tmp/ncu-xent
sh bench/lab/ptx_tools.sh $t
build/specl gen bench/specs/xent.yaml -o $t/gen > /dev/null
k=bf16_xent_llama3
R=4096 V=128256
N=$((R * V))
sh bench/lab/variant_cl.sh $t/gen $k 2 > $t/$k.cl
$t/ptx_info $t/$k.cl > $t/$k.ptx
common="i:$R bf16:$N lab:$R:$V z:$((N * 2)) z:$(((R + 1) * 4))"
for path in shared row; do
    if [ $path = shared ]; then
        fn=cross_entropy_shared geometry="$((8 * R)) 1 256 1"
        args="$common z:8388608"
    else
        fn=cross_entropy geometry="1 $R 256 1" args=$common
    fi
    {
        $t/ptx_run $t/$k.ptx $fn $geometry 20 $args
        ncu --clock-control none -k $fn -s 1 -c 1 \
            --section SpeedOfLight --section MemoryWorkloadAnalysis \
            --section MemoryWorkloadAnalysis_Tables \
            --section Occupancy --section LaunchStats \
            --section WarpStateStats \
            --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct \
            $t/ptx_run $t/$k.ptx $fn $geometry 2 $args
    } > "$out/$path.txt" 2>&1 || true
done
