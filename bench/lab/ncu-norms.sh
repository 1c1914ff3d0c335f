#!/bin/sh
# ncu-norms.sh OUT [KERNEL...] - the norms' one-launch backward (NVIDIA
# variant) of bench/specs/layer.yaml at 4096 x 4096 (the four kernels
# below, or those named), launched from its PTX by ptx_run.c, timed and
# profiled by Nsight Compute. Needs nvcc, ncu, an OpenCL driver and
# build/specl.
set -e
out=${1:?usage: ncu-norms.sh OUT [KERNEL...]}
shift
kernels=${*:-bf16_layernorm_back_4096 bf16_rmsnorm_back_4096 \
    layernorm_back_4096 rmsnorm_back_4096}
mkdir -p "$out" /tmp/ncu-norms
t=/tmp/ncu-norms
sh bench/lab/ptx_tools.sh $t
build/specl gen bench/specs/layer.yaml -o $t/gen > /dev/null
R=4096 D=4096
N=$((R * D))
for k in $kernels; do
    sh bench/lab/variant_cl.sh $t/gen $k 2 > $t/$k.cl
    $t/ptx_info $t/$k.cl > $t/$k.ptx
    case $k in
    bf16_*) e=bf16 ;;
    *) e=f32 ;;
    esac
    case $k in
    *layernorm*) fn=layernorm_backward_fused; beta=z:$((D * 4)) ;;
    *) fn=rmsnorm_backward_fused; beta= ;;
    esac
    blocks=$(grep -m1 '^#define BLOCKS' $t/$k.cl | awk '{print $3}')
    wg=$(grep -m1 '^#define WG_SIZE' $t/$k.cl | awk '{print $3}')
    rpg=$(grep -m1 '^#define ROWS_PER_GROUP' $t/$k.cl | awk '{print $3}')
    args="i:$R $e:$N $e:$D $e:$N z:$((N * 4)) z:$((D * 4)) $beta"
    args="$args z:$((blocks * 2 * D * 4)) z:4096"
    for grads in 1 0; do
        a=$args
        [ $grads = 0 ] && a="i:$R $e:$N $e:$D $e:$N z:$((N * 4)) null \
${beta:+null} null z:4096"
        echo "== $k dgamma $grads: grid 1 x $blocks of $wg x $rpg"
        $t/ptx_run $t/$k.ptx $fn 1 $blocks $wg $rpg 50 $a
        ncu --clock-control none -k $fn -s 1 -c 1 \
            --section SpeedOfLight --section MemoryWorkloadAnalysis \
            --section Occupancy --section LaunchStats \
            --section WarpStateStats --section SchedulerStats \
            --metrics dram__bytes_read.sum,dram__bytes_write.sum \
            $t/ptx_run $t/$k.ptx $fn 1 $blocks $wg $rpg 2 $a
    done > "$out/$k.txt" 2>&1 || true
done
