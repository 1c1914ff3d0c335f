#!/bin/bash
# The build of a program of every path against one of the rows' path.
O=$OUT/trim; mkdir -p $O /tmp/g
I=$PWD/.device/include; L=$(ls /opt/specl-dev/usr/lib/x86_64-linux-gnu/libOpenCL.so* | head -1)
build/specl gen bench/lab/path-build.yaml -o /tmp/g > /dev/null
for k in q_full q_path q_full q_path; do
  cc -O2 -DSTUB=$k -I$I -I/tmp/g -DSTUB_C="\"/tmp/g/$k.c\"" -o /tmp/pb_$k \
     bench/lab/parallel_builds.c $L -pthread || exit 1
  echo "== $k"; CUDA_CACHE_DISABLE=1 /tmp/pb_$k 3
done 2>&1 | tee $O/trim.txt | grep -E "==|first|builds:"
