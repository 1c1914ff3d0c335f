source .device/setup.sh >/dev/null; export SPECL_STUB_CFLAGS=-I$PWD/.device/include SPECL_DEVICE=0:0
B=$PWD/build/lab/t1
mk() { cc -O2 -I$PWD/.device/include -DSTUB=$2 -I$B/$1 -DSTUB_C="\"$B/$1/$2.c\"" -o /tmp/lt_$1_$2 bench/lab/launch_times.c -lOpenCL; }
for n in f16h f16hfull f32hd64 fllama b16h b16hfull b32hd64 bllama; do mk main $n & done; mk gqa bllama & wait
ls /tmp/lt_* | wc -l
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 240 build/lab/gqa_tests --only "attention_backward on warpgroups" > $OUT/suite-gqa.txt 2>&1; echo "suite rc $?"; grep -h "kernels built\|Test:\|passed\|failed" $OUT/suite-gqa.txt | tail -8
for r in 1 2 3; do for v in main gqa; do echo "== $v llama bwd B4 S4096 round $r"; timeout 60 /tmp/lt_${v}_bllama 4 20 -1 4096 4096 | tail -5; done; done > $OUT/ab-llama.txt 2>&1
cat $OUT/ab-llama.txt | grep -e "==" -e sum
timeout 200 build/lab/gqa_specl bench bench/specs/attention_backward.yaml --kernel bf16_attn_bwd_llama --rows 1 --size seq_q=4096 --size seq_kv=4096 --no-naive --reps 20 > $OUT/bench-gqa-llama.txt 2>&1; echo "bench rc $?"; grep -i "specl\|error\|fail" $OUT/bench-gqa-llama.txt | head -5
