/* attention_exp2.cl - the exponential the attention kernels' online
 * softmax and its backward take, attn_exp2, and the softcap's tanh,
 * attn_tanh; the plan's EXP_POLY says which (1 on CPUs). */
#if !defined(EXP_POLY)
#error "attention_exp2.cl: the plan defines EXP_POLY"
#endif
#if EXP_POLY
#include "exp2_poly.cl"
#endif

/* 2^y: with EXP_POLY (CPUs) exp2_poly.cl's, else exp2. */
inline float attn_exp2(float y)
{
#if EXP_POLY
    return exp2_poly(y);
#else
    return exp2(y);
#endif
}

/* tanh u, and in *SLOPE 1 - tanh^2 u, for a softcap (the forward's plan
 * says CAPPED, the backward's ATTN_CAPPED): with EXP_POLY (CPUs)
 * tanh_poly.cl's, from attn_exp2 (PoCL's tanh runs lane by lane), else
 * tanh. */
#if (defined(CAPPED) && CAPPED) || (defined(ATTN_CAPPED) && ATTN_CAPPED)
#if EXP_POLY
#define TANH_EXP2(y) attn_exp2(y)
#define TANH_RECIP(y) (1.0f / (y))
#include "tanh_poly.cl"
TANH_SLOPE(float, 1, )
#endif
inline float attn_tanh(float u, float *slope)
{
#if EXP_POLY
    return tanh_slope1(u, slope);
#else
    const float t = tanh(u);
    *slope = 1.0f - t * t;
    return t;
#endif
}
#endif
