#!/bin/sh
# deps.sh - installs the Debian packages specl needs, if any is missing.
set -e
# libclblast1: the CLBlast column of `specl bench` (loaded at run time);
# cmake and g++: the CMake example that `make test` builds; python3:
# bench/targets.py, which `make test` runs once on the CPU.
pkgs="libyaml-dev ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd
libcunit1-dev libclang-dev libclblast1 clang valgrind make gcc cmake g++
python3"
missing=""
for p in $pkgs; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q $missing
