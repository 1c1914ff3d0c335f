#!/bin/bash
# Whether NVIDIA's OpenCL compiler builds several programs at once, and
# where a tune candidate's seconds go (specl tune prints them).
O=$OUT/pb; mkdir -p $O /tmp/g
I=$PWD/.device/include; L=$(ls /opt/specl-dev/usr/lib/x86_64-linux-gnu/libOpenCL.so* | head -1)
build/specl gen specs/llama2-7b-train-bf16.yaml specs/llama2-7b.yaml -o /tmp/g > /dev/null
for k in llama_q_proj_grad_bf16 llama_q_proj; do
  cc -O2 -DSTUB=$k -I$I -I/tmp/g -DSTUB_C="\"/tmp/g/$k.c\"" -o /tmp/pb_$k \
     bench/lab/parallel_builds.c $L -pthread || exit 1
  for n in 4 8 16; do
    echo "== $k N=$n (CUDA_CACHE_DISABLE=1)"
    CUDA_CACHE_DISABLE=1 /tmp/pb_$k $n
  done
done 2>&1 | tee $O/pb.txt | grep -E "==|first|builds:"
build/specl tune specs/llama2-7b-train-bf16.yaml --kernel llama_q_proj_grad_bf16 \
  --rows 4096 --budget 30 --db $O/db.yaml > $O/tune.txt 2>&1
tr "\r" "\n" < $O/tune.txt | grep -E "evaluated [0-9]+ of|seconds|incomplete"
