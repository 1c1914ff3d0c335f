/* gated_act.cl - the activations of the gated MLP (swiglu.cl,
 * swiglu_backward.cl) and their derivatives, in float32 on vectors of
 * VEC elements (floatv, loadv, storev).
 *
 * Storage: storage_DTYPE.cl first. Macros: ACTIVATION (ACT_SILU,
 * ACT_GELU_TANH or ACT_GELU, the exact one on erf), VEC (1, 2, 4 or 8)
 * and EXP_POLY (0: the sigmoid's exp; 3 or 5: its exponential as a
 * polynomial of that degree, CPUs). */

#define ACT_SILU 0
#define ACT_GELU_TANH 1
#define ACT_GELU 2

#if !defined(ACTIVATION) || !defined(VEC) || !defined(EXP_POLY)
#error "gated_act.cl: the plan defines ACTIVATION, VEC and EXP_POLY"
#endif

#if VEC == 8
typedef float8 floatv;
typedef int8 intv;
#define as_floatv as_float8
#define as_intv as_int8
#define loadv load8
#define storev store8
#elif VEC == 4
typedef float4 floatv;
typedef int4 intv;
#define as_floatv as_float4
#define as_intv as_int4
#define loadv load4
#define storev store4
#elif VEC == 2
typedef float2 floatv;
typedef int2 intv;
#define as_floatv as_float2
#define as_intv as_int2
#define loadv load2
#define storev store2
#elif VEC == 1
typedef float floatv;
typedef int intv;
#define as_floatv as_float
#define as_intv as_int
#define loadv load1
#define storev store1
#else
#error "gated_act.cl: VEC is 1, 2, 4 or 8"
#endif

/* sqrt(2 / pi), GELU's cubic term, 1 / sqrt(2) and 1 / sqrt(2 pi). */
#define GELU_K 0.7978845608028654f
#define GELU_C 0.044715f
#define INV_SQRT2 0.7071067811865476f
#define INV_SQRT_2PI 0.3989422804014327f

/* Past this |x| the tanh form's slope is 1 or 0 to every float, and x^3
 * times x^2 would reach infinity times 0 on the way there. */
#define GELU_TANH_FLAT 1e4f

#if EXP_POLY
/* 1 + e^-x in float arithmetic alone, as 1 + 2^y with y = -x log2(e)
 * = n + f, n whole and |f| <= 1/2: 2^n goes straight into the exponent
 * bits, 2^f is a minimax polynomial of degree EXP_POLY (5: 7.5e-8, for
 * f32; 3: 7.5e-5, where the result is stored in 16 bits). y is held to
 * [-127, 128]: n = -127 makes 2^n zero (1 + e^-x is 1 to every float
 * there), n = 128 infinity (the sigmoid is 0), as exp would. PoCL's exp
 * left the CPU kernels compute-bound; this vectorizes into a dozen
 * operations. */
inline floatv one_plus_exp_neg(floatv x)
{
    const floatv y = clamp(x * -M_LOG2E_F, -127.0f, 128.0f);
    /* y + 1.5 * 2^23 + 127 holds n + 127 in its low mantissa bits. */
    const floatv r = y + 12583039.0f;
    const floatv f = y - (r - 12583039.0f);
#if EXP_POLY == 5
    floatv p = (floatv)1.327647062e-3f;
    p = p * f + 9.675541908e-3f;
    p = p * f + 5.550713283e-2f;
    p = p * f + 2.402211971e-1f;
    p = p * f + 6.931469671e-1f;
    p = p * f + 1.000000072f;
#elif EXP_POLY == 3
    floatv p = (floatv)5.517165803e-2f;
    p = p * f + 2.426111582e-1f;
    p = p * f + 6.932609907e-1f;
    p = p * f + 9.999280715e-1f;
#else
#error "gated_act.cl: EXP_POLY is 0, 3 or 5"
#endif
    return p * as_floatv(as_intv(r) << 23) + 1.0f;
}

inline floatv act_sigmoid(floatv x)
{
    return 1.0f / one_plus_exp_neg(x);
}
#else
/* 1 / (1 + e^-x) from one exp of -|x|, which never overflows. */
inline floatv act_sigmoid(floatv x)
{
    floatv e = exp(-fabs(x));
    floatv s = 1.0f / (1.0f + e);
    return select(e * s, s, (intv)isgreaterequal(x, (floatv)0.0f));
}
#endif

/* The tanh form's 0.5 (1 + tanh(u)) as sigmoid(2u): 1 + tanh(u) would
 * cancel to nothing for x below -3 or so. */
inline floatv gelu_tanh_s(floatv x)
{
    return act_sigmoid(2.0f * GELU_K * (x + GELU_C * x * x * x));
}

/* The activation of x. */
inline floatv act(floatv x)
{
#if ACTIVATION == ACT_SILU && EXP_POLY
    return x / one_plus_exp_neg(x);
#elif ACTIVATION == ACT_SILU
    return x * act_sigmoid(x);
#elif ACTIVATION == ACT_GELU_TANH
    return x * gelu_tanh_s(x);
#else
    /* erfc keeps the tiny values far below 0, where 1 + erf cancels. */
    return 0.5f * x * erfc(-x * INV_SQRT2);
#endif
}

/* act(x), and d act(x) / dx in GRAD: the backward's pair shares one
 * sigmoid. */
inline floatv act_and_grad(floatv x, floatv *grad)
{
#if ACTIVATION == ACT_SILU
    floatv s = act_sigmoid(x);
    floatv xs = x * s;
    *grad = s + xs * (1.0f - s);
    return xs;
#elif ACTIVATION == ACT_GELU_TANH
    floatv s = gelu_tanh_s(x);
    floatv g = s + 2.0f * x * s * (1.0f - s) * GELU_K *
                       (1.0f + 3.0f * GELU_C * x * x);
    floatv flat = select((floatv)0.0f, (floatv)1.0f,
                         (intv)isgreater(x, (floatv)0.0f));
    *grad = select(g, flat, (intv)isgreater(fabs(x), (floatv)GELU_TANH_FLAT));
    return x * s;
#else
    *grad = 0.5f * erfc(-x * INV_SQRT2) +
            x * INV_SQRT_2PI * exp(-0.5f * x * x);
    return act(x);
#endif
}
