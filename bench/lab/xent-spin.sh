#!/bin/sh
# xent-spin.sh OUT - cross_entropy bf16 4096 x 128256 (bench/specs/
# xent.yaml's bf16_xent_llama3, NVIDIA variant), the shared path's kernel
# launched from its PTX by ptx_run.c as ncu-xent.sh does, with the wait
# for a row's other work-groups edited: polled by atomics as emitted
# ("atomic"), by atomics with a nanosleep of NS between polls ("sleepNS"),
# by volatile loads ("load"); two rounds alternating, each one's dlogits
# compared with the emitted kernel's. Needs nvcc, an OpenCL driver,
# python3 with numpy and build/specl.
set -e
out=${1:?usage: xent-spin.sh OUT}
mkdir -p "$out" /tmp/xent-spin
t=/tmp/xent-spin
sh bench/lab/ptx_tools.sh $t
build/specl gen bench/specs/xent.yaml -o $t/gen > /dev/null
k=bf16_xent_llama3
R=4096 V=128256
N=$((R * V))
sh bench/lab/variant_cl.sh $t/gen $k 2 > $t/atomic.cl
spin='while(atomic_add(&w\[ROW_ARRIVED\],0u)<SHARE_GROUPS){}'
grep -q "$spin" $t/atomic.cl
poll='while(atomic_add(\&w[ROW_ARRIVED],0u)<SHARE_GROUPS)'
for ns in 20 100 400; do
    sed "s/$spin/$poll{asm volatile(\"nanosleep.u32 $ns;\");}/" \
        $t/atomic.cl > $t/sleep$ns.cl
done
sed "s/$spin/while(w[ROW_ARRIVED]<SHARE_GROUPS){}/" $t/atomic.cl \
    > $t/load.cl
variants="atomic sleep20 sleep100 sleep400 load"
for v in $variants; do
    $t/ptx_info $t/$v.cl > $t/$v.ptx
done
args="i:$R bf16:$N lab:$R:$V z:$((N * 2)) z:$(((R + 1) * 4)) z:8388608"
geometry="$((8 * R)) 1 256 1"
for round in 1 2; do
    for v in $variants; do
        printf "round %s %s: " $round $v
        PTX_RUN_DUMP=3:$t/$v.bin $t/ptx_run $t/$v.ptx cross_entropy_shared \
            $geometry 20 $args | grep median
    done
done
python3 - $t $variants <<'PY'
import sys
import numpy as np
d = sys.argv[1]
base = np.fromfile(f"{d}/atomic.bin", dtype=np.uint16)
for v in sys.argv[2:]:
    x = np.fromfile(f"{d}/{v}.bin", dtype=np.uint16)
    print(f"{v}: dlogits {np.count_nonzero(x != base)} of {x.size} "
          "differ from the emitted kernel's")
PY
