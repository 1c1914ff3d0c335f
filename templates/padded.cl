/* padded.cl - where lora_pad_x and lora_pad_w leave the copies of X, W and
 * B that lora_main_padded reads (see lora_common.cl).
 *
 * lora_main loads its tiles VEC elements wide, and VEC divides K and N:
 * where K or N is no multiple of 4, every load is one or two elements,
 * which takes lora_main many more registers and a good part of its
 * speed. From pad_rows rows the plan copies the operands
 * whose rows are not a multiple of 4 elements into the scratch, each row
 * padded with zeros to the next multiple of 4, and lora_main_padded
 * reads them 4 wide.
 *
 * The scratch holds, in floats: T's XA_SPLIT partial sums from lora_xa
 * (rows x XA_SPLIT * RANK), rounded up to a multiple of 4; then, where N
 * is no multiple of 4, W's copy (W_ROWS_PADDED x N_PADDED) and B's (RANK
 * x N_PADDED); then, where K is no multiple of 4, X's copy (rows x
 * K_PADDED). The copies hold storage_t elements, one float of the
 * scratch each. */
#define PADS_X (IN_FEATURES % 4 != 0)
/* W's copy, and B's, lie K x N and r x N whatever the layout: out_in's
 * are read along K, 4 wide where K is a multiple of 4 (no copy), else
 * copied transposed. */
#if WEIGHT_OUT_IN
#define PADS_W (IN_FEATURES % 4 != 0)
#else
#define PADS_W (OUT_FEATURES % 4 != 0)
#endif
/* With both copies, X's rows and W's columns run on to a whole K step,
 * zeros past K, and lora_main_padded meets no K edge (GEMM_K_WHOLE in
 * main_tiles.cl); else X's rows run to a multiple of 4. */
#define PADS_K (PADS_X && PADS_W && IN_FEATURES % GEMM_TILE_K != 0)
#define K_PADDED                                                         \
    (PADS_K ? CEIL_DIV(IN_FEATURES, GEMM_TILE_K) * GEMM_TILE_K           \
            : CEIL_DIV(IN_FEATURES, 4) * 4)
#define W_ROWS_PADDED (PADS_K ? K_PADDED : IN_FEATURES)
#define N_PADDED (CEIL_DIV(OUT_FEATURES, 4) * 4)
#define PADDED_W_AT(rows)                                                \
    (((size_t)(rows) * (XA_SPLIT * RANK) + 3) & ~(size_t)3)
#define PADDED_B_AT(rows)                                                \
    (PADDED_W_AT(rows) + (size_t)W_ROWS_PADDED * N_PADDED)
#define PADDED_X_AT(rows)                                                \
    (PADDED_W_AT(rows) +                                                 \
     (PADS_W ? (size_t)(W_ROWS_PADDED + RANK) * N_PADDED : 0))

/* The bits of one storage_t element: OpenCL C takes half (f16) only
 * through vload_half/vstore_half without cl_khr_fp16, neither as a value
 * nor in a cast, so the copies move each element's bits. */
#if DTYPE_F32
typedef uint storage_bits_t;
#else
typedef ushort storage_bits_t;
#endif

/* Row ROW of the COLS-wide matrix SRC into DST's row, PADDED_COLS wide,
 * zeros past COLS; this work-item takes 4 elements from column COL.
 * Elements are copied as they are stored (bits, no conversion); zero
 * bits are +0 in every dtype. Past K, X's padding meets zeros of W (its
 * copy's rows, or its stash in local memory): zeros there keep an inf in
 * X's last column from turning into a NaN. */
inline void pad_row4(__global storage_t *dst, const __global storage_t *src,
                     const int cols, const int padded_cols, const int row,
                     const int col)
{
    if (col >= padded_cols) {
        return;
    }
    const __global storage_bits_t *s =
        (const __global storage_bits_t *)src + (size_t)row * cols;
    __global storage_bits_t *d =
        (__global storage_bits_t *)dst + (size_t)row * padded_cols;
#pragma unroll
    for (int c = 0; c < 4; c++) {
        d[col + c] = col + c < cols ? s[col + c] : (storage_bits_t)0;
    }
}

/* As pad_row4, row ROW of the transpose of SRC (column ROW of SRC, whose
 * COLS rows lie LD elements apart): out_in's W and B into in_out's
 * layout. */
inline void pad_col4(__global storage_t *dst, const __global storage_t *src,
                     const int ld, const int cols, const int padded_cols,
                     const int row, const int col)
{
    if (col >= padded_cols) {
        return;
    }
    const __global storage_bits_t *s = (const __global storage_bits_t *)src;
    __global storage_bits_t *d =
        (__global storage_bits_t *)dst + (size_t)row * padded_cols;
#pragma unroll
    for (int c = 0; c < 4; c++) {
        d[col + c] = col + c < cols ? s[(size_t)(col + c) * ld + row]
                                    : (storage_bits_t)0;
    }
}
