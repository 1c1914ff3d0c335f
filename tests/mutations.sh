#!/bin/sh
# mutations.sh - breaks the generator's output on purpose, one mutation at a
# time, and checks that the test suite notices. Run from the repository root
# (make mutation). Each mutation: FILE%SED EXPRESSION%WHAT IT BREAKS.
set -u
suites=${SUITES:-numeric sweep stub}
mutations='
templates/row_reduce.cl%s/((k) + 1 < SLOTS || (j) < NVEC)/((k) + 1 < SLOTS || (j) <= NVEC)/%row ops: tail guard of a row the work-items split unevenly, off by one
templates/layernorm.cl%s/sums\.y \/ (float)FEATURES/sums.y \/ (float)(FEATURES + 1)/%layernorm: variance divided by D+1
templates/softmax.cl%s/v\[k\] = EXPS(v\[k\] - m);/v[k] = EXPS(v[k]);/%softmax: max not subtracted (overflows at large inputs)
templates/softmax_common.cl%s/#define H_PER_X 0.5f/#define H_PER_X 1.0f/%softmax: x not halved for scale 0 (0 * inf at inputs spanning more than FLT_MAX)
templates/softmax.cl%s/v\[i\] \*= rescale;//%softmax: a row in registers keeps its earlier slots at the old reference when the reference moves up
templates/softmax_common.cl%s/mm = MAX2(mm, pm\[lid + k \* step\]);//%softmax: a merge step keeps the first reference, not the largest
templates/softmax_combine.cl%s/for (uint c = lid; c < SPLIT_GROUPS; c += SPLIT_WG) {/for (uint c = lid; c + 1 < SPLIT_GROUPS; c += SPLIT_WG) {/%softmax: the split path leaves the last chunk out of the sum of a row
templates/softmax_common.cl%s/return min((c + 1) \* SPLIT_VECS, (uint)NVEC);/return min((c + 1) * SPLIT_VECS, (uint)NVEC - 1);/%softmax: the split path leaves the last vector of a row out
templates/rmsnorm.cl%0,/(float)FEATURES/s//(float)(FEATURES - 1)/%rmsnorm: mean of squares over D-1
templates/gemm_simt.cl%s/#define GEMM_K_LIVE(edge, k) (!(edge) || (k) < GEMM_K)/#define GEMM_K_LIVE(edge, k) (!(edge) || (k) <= GEMM_K)/%lora: K tail guard of the tiles off by one
templates/gemm_simt.cl%s/#define GEMM_RANK_TILES CEIL_DIV(GEMM_RANK, GEMM_RANK_K)/#define GEMM_RANK_TILES (GEMM_RANK \/ GEMM_RANK_K)/%lora: last partial rank step dropped
gen/lora_paths.c%s/4 \* expand_rows(c) \* c->R,/4 * expand_rows(c) * (c->R + 1),/%lora: local memory of lora_expand counted by the plan differs from the template
templates/lora_expand.cl%s/ex_put(y, i, v + ex_load(y, i));/ex_put(y, i, v);/%lora: the wide lora_expand of CPUs overwrites Y where it should accumulate
templates/lora_delta.cl%s/tl\[v\] = SCALE \* sum;/tl[v] = sum;/%lora: lora_delta drops the scale
templates/lora_delta.cl%s/for (int i = lane; i < DELTA_THREADS; i += DL_LANES) {/for (int i = lane; i + DL_LANES < DELTA_THREADS; i += DL_LANES) {/%lora: lora_delta drops the last work-items partial sums of T
templates/lora_delta.cl%s/const int c_end = min(c0 + slice, OUT_FEATURES);/const int c_end = min(c0 + slice - VEC, OUT_FEATURES);/%lora: lora_delta leaves the last columns of each slice of N unwritten
templates/lora_delta.cl%s/        if (k >= IN_FEATURES) {/        if (k > IN_FEATURES) {/%lora: lora_delta reads one step past K
templates/lora_delta.cl%s/av\[c\]\[j\] = load1(a, (size_t)(k + c) \* RANK + j);/av[c][j] = load1(a, (size_t)k * RANK + j);/%lora: lora_delta reads one row of A for VEC rows where the rank allows only scalar loads
gen/lora_sizes.c%s/return 4 \* t \* (c->delta_threads + lanes + 2);/return 4 * t * (c->delta_threads + lanes + 3);/%lora: local memory of lora_delta counted by the plan differs from the template
templates/lora_bwd_reduce.cl%s/for (int s = 0; s < slices; s++) {/for (int s = 0; s + 1 < slices; s++) {/%lora_backward: the last slice of rows dropped from the sums of dA and dB
templates/gemm_simt.cl%s/load1(p, (size_t)col \* ld + j)/load1(p, (size_t)j * GEMM_N + col)/%lora_backward: A read transposed in the rank stretch of dX
templates/padded.cl%s/(PADS_W ? (size_t)(IN_FEATURES + RANK) \* N_PADDED : 0))/0)/%lora: the copy of X laid over the copies of W and B
templates/lora_combine.cl%s/if (s < slices) {/if (s + 1 < slices) {/%lora: the split path drops the last slice of K from the sum
templates/main_tiles.cl%s/const int kt1 = (slice + 1) \* K_TILES \/ slices;/const int kt1 = (slice + 1) * (K_TILES \/ slices);/%lora: the split path drops the K steps that do not divide evenly into slices
templates/lora_decode.cl%s/decode_mac(nr, k2, acc, tacc, wv2, av2, rowc, x);//%lora: the decode path drops the second of the two steps it loads ahead
templates/lora_decode.cl%s/colc\[c\] = min(cb + tn \* DECODE_VEC + c, OUT_FEATURES - 1);/colc[c] = min(cb + tn * DECODE_VEC, OUT_FEATURES - 1);/%lora: the decode path gathers one column four times where the rows allow only narrow loads
templates/stub.c.in%s/if (_rows == 0 || _rows > INT_MAX) {/if (_rows > INT_MAX) {/%stub: rows == 0 accepted
templates/stub.c.in%s/return _cpu ? 2 : 0;/return _cpu ? 0 : 2;/%stub: the CPU variant given to every device but CPUs
templates/stub.c.in%s/for (int _tried = 0; _tried < _n; _tried++) {/for (int _tried = 0; _tried < _n \&\& _tried < 1; _tried++) {/%stub: no fallback past the first variant tried
templates/stub.c.in%s/return _size < _need ? CL_INVALID_BUFFER_SIZE/return _size + 4 < _need ? CL_INVALID_BUFFER_SIZE/%stub: buffer one element short accepted
templates/stub.c.in%s/if (_err == CL_SUCCESS && _of != _ctx) {/if (_err == CL_SUCCESS \&\& _of != _ctx \&\& 0) {/%stub: a queue, buffer, scratch or wait event of another context accepted
'
top=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
caught=0
missed=0
echo "$mutations" | while IFS='%' read -r file expr what; do
    [ -n "$file" ] || continue
    rm -rf "$work/tree"
    mkdir -p "$work/tree"
    (cd "$top" && git ls-files -co --exclude-standard | tar -cf - -T -) |
        (cd "$work/tree" && tar -xf -)
    sed -i "$expr" "$work/tree/$file"
    if cmp -s "$top/$file" "$work/tree/$file"; then
        echo "NOT APPLIED  $what ($file: pattern not found)"
        exit 1
    fi
    if ! make -C "$work/tree" -s build/specl build/specl_tests >"$work/build.log" 2>&1; then
        echo "caught       $what (the build fails)"
        continue
    fi
    if (cd "$work/tree" && timeout 900 build/specl_tests $suites >"$work/test.log" 2>&1); then
        echo "MISSED       $what"
        exit 1
    fi
    n=$(grep -c "FAILED\|failed" "$work/test.log")
    echo "caught       $what ($n failure lines)"
done
