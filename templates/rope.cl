/* rope.cl - rotary position embedding: in each head of each row, the
 * first ROT_DIM elements turn in pairs (a, b) -> (a cos - b sin, a sin +
 * b cos) by angle = position * freq_i; the rest pass through. y may be x.
 *
 * Storage: storage_DTYPE.cl. Macros: HEADS, HEAD_DIM, ROT_DIM; ROPE_STYLE
 * (0: pairs (i, i + ROT_DIM/2), Hugging Face's rotate_half; 1: pairs
 * (2i, 2i+1)); ROPE_INVERSE (1: by -angle); VEC, the pairs a work-item
 * turns at once; PASS_VEC, the elements it copies at once past ROT_DIM;
 * SLOTS_PER_ITEM, the slots of a head it takes (below); HEADS_PER_ITEM,
 * the heads that share its cos and sin; ROWS_PER_GROUP,
 * the rows it walks. Tables ROPE_TURNS_HI and ROPE_TURNS_LO: freq_i / 2pi
 * as the sum of two floats. Launch: dimension 0 holds a row's slots (VEC
 * pairs, or PASS_VEC elements past ROT_DIM, of one head) by
 * SLOTS_PER_ITEM, times its HEADS / HEADS_PER_ITEM head groups;
 * dimension 1 a group per ROWS_PER_GROUP rows.
 *
 * Precision: at position 65535 the angle reaches 10^4 turns, and an angle
 * rounded to float32 is off by 1e-3 rad. Here position (a float, exact
 * below 2^24) times hi + lo turns loses only the whole turns: n =
 * rint(p * hi), fraction = p * lo + (p * hi - n), the latter by fma,
 * within 2^-25 of a turn of the exact one; sinpi and cospi of twice it are
 * the cos and sin of the exact angle (a fraction within [-1/2, 1/2] needs
 * no reduction); with ROPE_APPROX_TRIG native_cos and native_sin of 2 pi
 * times it, the hardware's, within about 2^-21 (an angle in [-pi, pi]).
 * Positions only change angles: no value of them moves a load or a
 * store. */

#include "storage_@dtype@.cl"

#if !defined(HEADS) || !defined(HEAD_DIM) || !defined(ROT_DIM) ||          \
    !defined(VEC) || !defined(PASS_VEC) || !defined(HEADS_PER_ITEM) ||     \
    !defined(ROWS_PER_GROUP) || !defined(ROPE_STYLE) ||                    \
    !defined(ROPE_INVERSE) || !defined(SLOTS_PER_ITEM) ||                  \
    !defined(ROPE_APPROX_TRIG)
#error "rope.cl: the plan defines HEADS, HEAD_DIM, ROT_DIM, VEC, PASS_VEC, SLOTS_PER_ITEM, HEADS_PER_ITEM, ROWS_PER_GROUP, ROPE_STYLE, ROPE_INVERSE and ROPE_APPROX_TRIG"
#endif
#if ROT_DIM % (2 * VEC) != 0 || HEAD_DIM % (ROPE_STYLE ? 2 * VEC : VEC) != 0
#error "rope.cl: VEC divides ROT_DIM / 2, and its loads divide HEAD_DIM"
#endif
#if HEADS % HEADS_PER_ITEM != 0 || (HEAD_DIM - ROT_DIM) % PASS_VEC != 0
#error "rope.cl: HEADS_PER_ITEM divides HEADS, PASS_VEC HEAD_DIM - ROT_DIM"
#endif

#define ROT_PAIRS (ROT_DIM / 2)
#define ROT_SLOTS (ROT_PAIRS / VEC)
#define SLOTS (ROT_SLOTS + (HEAD_DIM - ROT_DIM) / PASS_VEC)
#define SLOT_GROUPS ((SLOTS + SLOTS_PER_ITEM - 1) / SLOTS_PER_ITEM)

/* floatv: VEC pairs' halves; floatp, loadp, storep: 2 * VEC elements,
 * ZIP interleaves two floatv into them. */
#if VEC == 8
typedef float8 floatv;
typedef float16 floatp;
#define loadv load8
#define storev store8
#define turns(t, j) vload8(0, (t) + (j))
inline float16 loadp(const __global storage_t *p, size_t i)
{
    return (float16)(load8(p, i), load8(p, i + 8));
}
inline void storep(__global storage_t *p, size_t i, float16 v)
{
    store8(p, i, v.lo);
    store8(p, i + 8, v.hi);
}
#define ZIP(a, b)                                                          \
    (float16)((a).s0, (b).s0, (a).s1, (b).s1, (a).s2, (b).s2, (a).s3,      \
              (b).s3, (a).s4, (b).s4, (a).s5, (b).s5, (a).s6, (b).s6,      \
              (a).s7, (b).s7)
#elif VEC == 4
typedef float4 floatv;
typedef float8 floatp;
#define loadv load4
#define storev store4
#define turns(t, j) vload4(0, (t) + (j))
#define loadp load8
#define storep store8
#define ZIP(a, b)                                                          \
    (float8)((a).s0, (b).s0, (a).s1, (b).s1, (a).s2, (b).s2, (a).s3, (b).s3)
#elif VEC == 2
typedef float2 floatv;
typedef float4 floatp;
#define loadv load2
#define storev store2
#define turns(t, j) vload2(0, (t) + (j))
#define loadp load4
#define storep store4
#define ZIP(a, b) (float4)((a).s0, (b).s0, (a).s1, (b).s1)
#elif VEC == 1
typedef float floatv;
typedef float2 floatp;
#define loadv load1
#define storev store1
#define turns(t, j) ((t)[j])
#define loadp load2
#define storep store2
#define ZIP(a, b) (float2)((a), (b))
#else
#error "rope.cl: VEC is 1, 2, 4 or 8"
#endif

#if PASS_VEC == 8
#define pass_load load8
#define pass_store store8
#elif PASS_VEC == 4
#define pass_load load4
#define pass_store store4
#elif PASS_VEC == 2
#define pass_load load2
#define pass_store store2
#else
#define pass_load load1
#define pass_store store1
#endif

/* cos and sin of position POS times the frequencies of pairs J .. J+VEC-1
 * (sin negated for the inverse). */
inline void rope_angles(int pos, int j, floatv *c, floatv *s)
{
    const floatv p = (floatv)((float)pos);
    const floatv hi = turns(ROPE_TURNS_HI, j);
    const floatv lo = turns(ROPE_TURNS_LO, j);
    const floatv whole = rint(p * hi);
    const floatv frac = fma(p, lo, fma(p, hi, -whole));
#if ROPE_APPROX_TRIG
    const floatv angle = (2.0f * M_PI_F) * frac;
    *c = native_cos(angle);
    *s = ROPE_INVERSE ? -native_sin(angle) : native_sin(angle);
#else
    *c = cospi(2.0f * frac);
    *s = ROPE_INVERSE ? -sinpi(2.0f * frac) : sinpi(2.0f * frac);
#endif
}

/* Turns pairs J .. J+VEC-1 of the head at AT. */
inline void rope_turn(const __global storage_t *x, __global storage_t *y,
                      size_t at, int j, floatv c, floatv s)
{
#if ROPE_STYLE
    size_t i = at + 2 * (size_t)j;
    const floatp v = loadp(x, i);
    const floatv a = v.even, b = v.odd;
    storep(y, i, ZIP(a * c - b * s, a * s + b * c));
#else
    size_t i = at + (size_t)j;
    const floatv a = loadv(x, i), b = loadv(x, i + ROT_PAIRS);
    storev(y, i, a * c - b * s);
    storev(y, i + ROT_PAIRS, a * s + b * c);
#endif
}

/* x and y are not restrict: y may be x, each element read and written by
 * one work-item, read first. A work-item takes slots FIRST_SLOT .. of
 * HEADS_PER_ITEM heads of ROWS_PER_GROUP rows; the cos and sin of its
 * slots are formed once a row, then it walks the heads in memory order. */
__kernel void rope(int rows, __global const storage_t *x,
                   __global const int *positions, __global storage_t *y)
{
    const int g = (int)get_global_id(0);
    const int first_slot = g % SLOT_GROUPS * SLOTS_PER_ITEM;
    const int head = g / SLOT_GROUPS * HEADS_PER_ITEM;
    const int n = min(SLOTS_PER_ITEM, SLOTS - first_slot);
    const int first = (int)get_group_id(1) * ROWS_PER_GROUP;
    const int last = min(first + ROWS_PER_GROUP, rows);
    if (head >= HEADS) {
        return;
    }
    for (int r = first; r < last; r++) {
        floatv c[SLOTS_PER_ITEM], s[SLOTS_PER_ITEM];
        for (int k = 0; k < n && first_slot + k < ROT_SLOTS; k++) {
            rope_angles(positions[r], (first_slot + k) * VEC, &c[k], &s[k]);
        }
        size_t at = ((size_t)r * HEADS + head) * HEAD_DIM;
        for (int h = 0; h < HEADS_PER_ITEM; h++, at += HEAD_DIM) {
            for (int k = 0; k < n; k++) {
                const int slot = first_slot + k;
                if (slot < ROT_SLOTS) {
                    rope_turn(x, y, at, slot * VEC, c[k], s[k]);
                } else if (x != y) { /* past ROT_DIM: in place, nothing */
                    const size_t e = at + ROT_DIM +
                                     (size_t)(slot - ROT_SLOTS) * PASS_VEC;
                    pass_store(y, e, pass_load(x, e));
                }
            }
        }
    }
}
