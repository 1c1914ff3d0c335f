/* attention_exp2.cl - the exponential the attention kernels' online
 * softmax and its backward take, attn_exp2; the plan's EXP_POLY says
 * which (1 on CPUs). */
#if !defined(EXP_POLY)
#error "attention_exp2.cl: the plan defines EXP_POLY"
#endif

/* 2^y. With EXP_POLY (CPUs, where PoCL's exp2 runs lane by lane) in
 * float arithmetic alone: y = n + f, n whole and |f| <= 1/2, 2^n goes
 * straight into the exponent bits and 2^f is its Taylor polynomial of
 * degree 7 (within 1e-7 of 2^f, as exp2 is: the softmax's outputs are
 * weighted sums that cancel, and a lesser polynomial's error showed
 * through them). y is held to [-127, 128]: n = -127 makes 2^n zero, as
 * exp2(-INFINITY) is. */
inline float attn_exp2(float y)
{
#if EXP_POLY
    y = clamp(y, -127.0f, 128.0f);
    /* y + 1.5 * 2^23 + 127 holds n + 127 in its low mantissa bits. */
    const float r = y + 12583039.0f;
    const float f = y - (r - 12583039.0f);
    float p = 1.5252733804e-5f;
    p = p * f + 1.5403530393e-4f;
    p = p * f + 1.3333558146e-3f;
    p = p * f + 9.6181291076e-3f;
    p = p * f + 5.5504108665e-2f;
    p = p * f + 2.4022650696e-1f;
    p = p * f + 6.9314718056e-1f;
    p = p * f + 1.0f;
    return p * as_float(as_int(r) << 23);
#else
    return exp2(y);
#endif
}
