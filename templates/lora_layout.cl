/* lora_layout.cl - where the LoRA ops' weights lie (weight_layout): the
 * offsets of W's element (k, n), A's (k, j) and B's (j, n), indexed as in
 * the algebra (W is K x N, A K x r, B r x N), and loads of consecutive
 * elements along n (j) at a fixed k (j).
 *   WEIGHT_OUT_IN 0 (in_out, the default): W, A and B row-major as
 *                 indexed; dA and dB too.
 *   WEIGHT_OUT_IN 1 (out_in, PyTorch's nn.Linear.weight and PEFT's
 *                 lora_A.weight, lora_B.weight): W is N x K, A r x K and
 *                 B N x r, row-major; dA and dB too.
 * The plan defines WEIGHT_OUT_IN for out_in only, so that in_out's
 * source stays as it was. */
#ifndef WEIGHT_OUT_IN
#define WEIGHT_OUT_IN 0
#endif

#if WEIGHT_OUT_IN
#define W_AT(k, n) ((size_t)(n) * IN_FEATURES + (k))
#define A_AT(k, j) ((size_t)(j) * IN_FEATURES + (k))
#define B_AT(j, n) ((size_t)(n) * RANK + (j))
#define W_NSTEP IN_FEATURES /* from W's (k, n) to (k, n + 1) */
#define A_JSTEP IN_FEATURES /* from A's (k, j) to (k, j + 1) */
#define B_NSTEP RANK        /* from B's (j, n) to (j, n + 1) */
#else
#define W_AT(k, n) ((size_t)(k) * OUT_FEATURES + (n))
#define A_AT(k, j) ((size_t)(k) * RANK + (j))
#define B_AT(j, n) ((size_t)(j) * OUT_FEATURES + (n))
#define W_NSTEP 1
#define A_JSTEP 1
#define B_NSTEP 1
#endif

/* Four (two) elements STEP apart from P[I]: one vector load where STEP is
 * 1 (in_out), else gathered (out_in, where those kernels walk W, A or B
 * across its rows). STEP is a constant at every call. */
inline float4 load4_step(const __global storage_t *p, size_t i,
                         const size_t step)
{
    if (step == 1) {
        return load4(p, i);
    }
    return (float4)(load1(p, i), load1(p, i + step), load1(p, i + 2 * step),
                    load1(p, i + 3 * step));
}

inline float2 load2_step(const __global storage_t *p, size_t i,
                         const size_t step)
{
    return (float2)(load1(p, i), load1(p, i + step));
}
