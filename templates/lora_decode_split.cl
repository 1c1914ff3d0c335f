/* lora_decode_split.cl - few rows, W streamed once over DSUM_SLICES
 * slices of K: the partial sums of X*W and of X*A that lora_decode_sum.cl
 * adds up with T*B. The plain-arithmetic counterpart of
 * lora_decode_mma.cl, for any K, N and r.
 *
 * lora_decode gives a work-group 32 columns and all of K, and keeps
 * every row's products of 4 rows of W in registers: 250 registers, one
 * work-group per compute unit, and a W stream well below the read-only
 * bandwidth at 8-16 rows. Here a work-item owns one column
 * of a strip of DSPLIT_COLS columns (a warp reads 32 consecutive
 * elements of a row of W: whole 128-byte lines in f32, whatever the
 * alignment of K and N) and one accumulator per row; a work-group per
 * strip and slice of K, one more strip per slice for A (T's partial
 * sums, RANK of its work-items live). X's rows of the slice go to local
 * memory first, [k][row], so that each work-item reads them as
 * broadcasts, 4 rows a read.
 *
 * Scratch, floats (lora_decode_part.cl):
 *   DSUM_PART(rows, s)   X*W of slice s, rows x OUT_FEATURES
 *   DSUM_TPART(rows, s)  X*A of slice s, rows x RANK (not yet scaled)
 *
 * Local size (DSPLIT_COLS, 1); along dimension 0 DSUM_SLICES x
 * (DS_STRIPS + 1) work-groups, along 1 one per DSPLIT_ROWS rows. */
#include "lora_common.cl"
#include "lora_decode_part.cl"

#if !defined(DSPLIT_ROWS) || !defined(DSPLIT_COLS)
#error "lora_decode_split.cl: the plan must define DSPLIT_ROWS, DSPLIT_COLS"
#endif
#if !HAS_BASE || DSPLIT_COLS < RANK || DSPLIT_ROWS > 32
#error "lora_decode_split.cl: W, a work-item per column of A, 32 rows"
#endif

#define DS_STRIPS CEIL_DIV(OUT_FEATURES, DSPLIT_COLS)
#define DS_SLICE CEIL_DIV(IN_FEATURES, DSUM_SLICES) /* most K of a slice */
#define DS_LD (CEIL_DIV(DSPLIT_ROWS, 4) * 4) /* floats per staged k */
#define DS_UNROLL 16 /* loads of W per group; the next group's in flight */
#define DS_STAGE_BATCH 16 /* loads of X per work-item in flight */
#if !defined(DSPLIT_LOCAL_BYTES) || DS_SLICE * DS_LD * 4 != DSPLIT_LOCAL_BYTES
#error "lora_decode_split.cl: local memory differs from the plan's count"
#endif

/* Element K of column COL of P (W or A: LD elements a row, or with
 * out_in's layout, N x K and r x K, the column a row of K). */
#if WEIGHT_OUT_IN
#define DS_AT(ld, col, k) ((size_t)(col) * IN_FEATURES + (k))
#else
#define DS_AT(ld, col, k) ((size_t)(k) * (ld) + (col))
#endif

/* DS_UNROLL values of column COL of P (LD elements a row) from row K. */
inline void ds_load(float wv[DS_UNROLL], const __global storage_t *p,
                    const int ld, const int col, const int k)
{
#pragma unroll
    for (int u = 0; u < DS_UNROLL; u++) {
        wv[u] = load1(p, DS_AT(ld, col, k + u));
    }
}

/* acc[r] += XS's rows r of K values k .. k + DS_UNROLL - 1 times WV. */
inline void ds_products(float acc[DS_LD], const int rows_n,
                        const __local float *xs, const int k,
                        const float wv[DS_UNROLL])
{
#pragma unroll
    for (int u = 0; u < DS_UNROLL; u++) {
        const __local float4 *xk =
            (const __local float4 *)(xs + (k + u) * DS_LD);
#pragma unroll
        for (int q = 0; q < DS_LD / 4; q++) {
            if (4 * q < rows_n) {
                const float4 xv = xk[q];
                acc[4 * q] = fma(xv.x, wv[u], acc[4 * q]);
                acc[4 * q + 1] = fma(xv.y, wv[u], acc[4 * q + 1]);
                acc[4 * q + 2] = fma(xv.z, wv[u], acc[4 * q + 2]);
                acc[4 * q + 3] = fma(xv.w, wv[u], acc[4 * q + 3]);
            }
        }
    }
}

/* The N values of K from K0 of column COL of P for ROWS_N accumulated
 * rows (ROWS live; ROWS_N a multiple of 4, a constant at each call so
 * that ACC stays in registers), stored to OUT (LD floats a row) where
 * LIVE. The slice's X goes to local memory first, [k][row]; then each
 * work-item streams its column in groups of DS_UNROLL loads, the next
 * group issued before the products of the current one. */
inline void ds_column(const int rows_n, const int rows,
                      const __global storage_t *x, __local float *xs,
                      const __global storage_t *p, const int ld,
                      const int col, const bool live, const int k0,
                      const int n, __global float *out)
{
    const int tid = get_local_id(0);
    /* The work-item's share of X, in batches of DS_STAGE_BATCH loads
     * issued before their stores, in consecutive rows of one k (stores
     * to distinct banks; ROWS_N, a constant, makes the indices shifts):
     * one load at a time would wait out a latency per load, and all of
     * them at once take more registers than the batches. */
#pragma unroll 1
    for (int i0 = tid; i0 < n * rows_n; i0 += DS_STAGE_BATCH * DSPLIT_COLS) {
        float xv[DS_STAGE_BATCH];
#pragma unroll
        for (int j = 0; j < DS_STAGE_BATCH; j++) {
            const int i = i0 + j * DSPLIT_COLS;
            const int k = i / rows_n, r = i % rows_n;
            xv[j] = i < n * rows_n && r < rows
                        ? load1(x, (size_t)r * IN_FEATURES + k0 + k)
                        : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < DS_STAGE_BATCH; j++) {
            const int i = i0 + j * DSPLIT_COLS;
            const int k = i / rows_n, r = i % rows_n;
            if (i < n * rows_n) {
                xs[k * DS_LD + r] = xv[j];
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!live) {
        return;
    }
    float acc[DS_LD];
#pragma unroll
    for (int r = 0; r < DS_LD; r++) {
        acc[r] = 0.0f;
    }
    const int full = n / DS_UNROLL * DS_UNROLL;
    float wa[DS_UNROLL], wb[DS_UNROLL];
    if (full > 0) {
        ds_load(wa, p, ld, col, k0);
    }
    for (int k = 0; k < full; k += 2 * DS_UNROLL) {
        if (k + DS_UNROLL < full) {
            ds_load(wb, p, ld, col, k0 + k + DS_UNROLL);
        }
        ds_products(acc, rows_n, xs, k, wa);
        if (k + DS_UNROLL >= full) {
            break;
        }
        if (k + 2 * DS_UNROLL < full) {
            ds_load(wa, p, ld, col, k0 + k + 2 * DS_UNROLL);
        }
        ds_products(acc, rows_n, xs, k + DS_UNROLL, wb);
    }
    for (int k = full; k < n; k++) {
        const float wv = load1(p, DS_AT(ld, col, k0 + k));
        const __local float *xk = xs + k * DS_LD;
#pragma unroll
        for (int r = 0; r < DS_LD; r++) {
            if (r < rows_n) {
                acc[r] = fma(xk[r], wv, acc[r]);
            }
        }
    }
#pragma unroll
    for (int r = 0; r < DS_LD; r++) {
        if (r < rows) {
            out[(size_t)r * ld + col] = acc[r];
        }
    }
}

__kernel __attribute__((reqd_work_group_size(DSPLIT_COLS, 1, 1))) void
lora_decode_split(const int rows, const __global storage_t *restrict x,
                  const __global storage_t *restrict w,
                  const __global storage_t *restrict a,
                  __global float *restrict scratch)
{
    __local float xs[DS_SLICE * DS_LD] __attribute__((aligned(16)));
    const int slice = get_group_id(0) / (DS_STRIPS + 1);
    const int strip = get_group_id(0) % (DS_STRIPS + 1);
    const int row0 = get_group_id(1) * DSPLIT_ROWS;
    const int block_rows = min(rows - row0, DSPLIT_ROWS);
    const int k0 = (int)((long)slice * IN_FEATURES / DSUM_SLICES);
    const int k1 = (int)((long)(slice + 1) * IN_FEATURES / DSUM_SLICES);
    const int tid = get_local_id(0);
    x += (size_t)row0 * IN_FEATURES;
    /* Uniform per work-group: W's strips or A's. */
    const bool is_a = strip == DS_STRIPS;
    const __global storage_t *p = is_a ? a : w;
    const int ld = is_a ? RANK : OUT_FEATURES;
    const int col = is_a ? tid : strip * DSPLIT_COLS + tid;
    const bool live = col < ld;
    __global float *out =
        is_a ? scratch + DSUM_TPART(rows, slice) + (size_t)row0 * RANK
             : scratch + DSUM_PART(rows, slice) +
                   (size_t)row0 * OUT_FEATURES;
    /* Accumulators for 8, 16 or DS_LD rows: uniform per work-group. */
#if DS_LD > 16
    if (block_rows > 16) {
        ds_column(DS_LD, block_rows, x, xs, p, ld, col, live, k0, k1 - k0,
                  out);
        return;
    }
#endif
#if DS_LD > 8
    if (block_rows > 8) {
        /* DS_LD 12: 12 accumulators; 16 would stage rows past X's row
         * stride in local memory. */
        ds_column(DS_LD < 16 ? DS_LD : 16, block_rows, x, xs, p, ld, col,
                  live, k0, k1 - k0, out);
        return;
    }
#endif
    ds_column(DS_LD < 8 ? DS_LD : 8, block_rows, x, xs, p, ld, col, live,
              k0, k1 - k0, out);
}
