/* attention_exp2.cl - the exponential the attention kernels' online
 * softmax and its backward take, attn_exp2; the plan's EXP_POLY says
 * which (1 on CPUs). */
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
