#!/bin/sh
# variant_cl.sh DIR NAME V - prints the kernel source of variant V of the
# emitted DIR/NAME.c (bench/lab/variant_source.c, built as DIR/vsrc-NAME),
# for the lab scripts to take its PTX (ptx_info) or edit it. Needs an
# OpenCL library to link against.
set -e
dir=${1:?usage: variant_cl.sh DIR NAME V}
name=${2:?usage: variant_cl.sh DIR NAME V}
v=${3:?usage: variant_cl.sh DIR NAME V}
cc -DSTUB="$name" -I "$dir" -include "$dir/$name.c" -o "$dir/vsrc-$name" \
    bench/lab/variant_source.c -lOpenCL
"$dir/vsrc-$name" "$v"
