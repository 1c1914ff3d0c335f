source .device/setup.sh >/dev/null; export SPECL_STUB_CFLAGS=-I$PWD/.device/include SPECL_DEVICE=0:0
B=$PWD/build/lab/t1
mk() { cc -O2 -I$PWD/.device/include -DSTUB=$2 -I$B/$1 -DSTUB_C="\"$B/$1/$2.c\"" -o /tmp/lt_$1_$2 bench/lab/launch_times.c -lOpenCL; }
for n in f16h f16hfull f32hd64 fllama b16h b16hfull b32hd64 bllama; do [ -x /tmp/lt_main_$n ] || mk main $n & done; wait
run() { echo "== $*"; timeout 60 /tmp/lt_main_$1 $2 20 -1 $3 $4 | tail -6; }
{
for k in f16h b16h; do run $k 16 1024 1024; run $k 4 4096 4096; run $k 1 16384 16384; done
for k in f16hfull b16hfull; do run $k 4 4096 4096; done
for k in f32hd64 b32hd64; do run $k 4 4096 4096; done
run fllama 4 4096 4096; run bllama 4 4096 4096
for i in 1 2 3; do run fllama 8 1 4096; done
} > $OUT/table.txt 2>&1
grep -e "==" -e sum -e variant $OUT/table.txt
timeout 300 python3 bench/peers.py --attention --reps 20 > $OUT/sdpa.txt 2>&1; echo "sdpa rc $?"; cat $OUT/sdpa.txt
