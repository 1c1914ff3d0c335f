/* lora_main_padded.cl - lora_main on the copies of X, W and B that
 * lora_pad_x and lora_pad_w left in the scratch, read 4 elements wide
 * (see padded.cl and main_tiles.cl). */
#include "main_tiles.cl"
#include "padded.cl"

#if !HAS_BASE || XA_INLINE || GEMM_TILE_K % 4 != 0 || GEMM_TILE_N % 4 != 0
#error "lora_main_padded.cl: needs W, T from lora_xa, and tiles of 4s"
#endif

/* Width of Y's stores: Y is written in place, at its own alignment. */
#define Y_VEC (OUT_FEATURES % 4 == 0 ? 4 : OUT_FEATURES % 2 == 0 ? 2 : 1)

__kernel
__attribute__((reqd_work_group_size(GEMM_THREADS_N, GEMM_THREADS_M, 1)))
void lora_main_padded(const int rows, const __global storage_t *restrict x,
                      const __global storage_t *restrict w,
                      const __global storage_t *restrict b,
                      __global storage_t *restrict y,
                      const __global float *restrict scratch)
{
    __local float as[AS_SIZE] __attribute__((aligned(16)));
    __local float bs[BS_SIZE] __attribute__((aligned(16)));
    const __global storage_t *xp =
        PADS_X ? (const __global storage_t *)(scratch + PADDED_X_AT(rows))
               : x;
    const __global storage_t *wp =
        PADS_W ? (const __global storage_t *)(scratch + PADDED_W_AT(rows))
               : w;
    const __global storage_t *bp =
        PADS_W ? (const __global storage_t *)(scratch + PADDED_B_AT(rows))
               : b;
    /* out_in's W and B as they are (K a multiple of 4), or the copies */
#if WEIGHT_OUT_IN && !PADS_W
    const int w_cols = 1;
#else
    const int w_cols = 0;
#endif
    /* K's end: nothing to do where both copies run to a whole K step,
     * else clamped as lora_main at VEC 4 (GEMM_K_LIVE in gemm_simt.cl) */
    main_tiles(rows, xp, wp, bp, y, (__global float *)scratch, as, bs, 1, 0,
               PADS_K ? GEMM_K_WHOLE : GEMM_K_CLAMP,
               PADS_X ? K_PADDED : IN_FEATURES,
               PADS_W ? N_PADDED : W_LD, 4,
               Y_VEC < GEMM_LVN ? Y_VEC : GEMM_LVN, w_cols);
}
