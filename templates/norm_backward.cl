/* norm_backward.cl - the rows of rmsnorm_backward and layernorm_backward
 * (rmsnorm_backward.cl, layernorm_backward.cl): dx of every row, and float32
 * partial sums of dgamma (and dbeta) over blocks of rows, which
 * norm_backward_reduce.cl adds up. Include after storage_DTYPE.cl,
 * row_reduce.cl and norm_scale.cl.
 *
 * The forward (rmsnorm_row.cl, layernorm.cl) is y = xhat * gamma (+ beta),
 * xhat = x * r, or (x - mean) * r, r = 1 / sqrt(mean(x^2), or the biased
 * variance, + EPS). With g = gamma * dy its derivatives are
 *   dx     = r * (g - mean(g) - xhat * mean(g * xhat))  (rmsnorm: no mean(g))
 *   dgamma = the sum over rows of dy * xhat;  dbeta = the sum of dy.
 * The statistics are those of the forward, recomputed from x the same way:
 * layernorm's shifted and corrected two passes, and the second pass at a
 * power-of-two scale s (norm_scale.cl) for rows whose sum of squares fails
 * float32: then xhat comes from x * s and its statistics (EPS * s^2 for
 * EPS), and r * s is the r of dx.
 *
 * Blocks: the rows split into at most BLOCKS blocks of block_rows(rows)
 * rows, a multiple of ROWS_PER_GROUP; work-group b takes block b (groups
 * past the last block return at once), and its ROWS_PER_GROUP row slots
 * every ROWS_PER_GROUP-th row of it. The slots sum dy * xhat (and dy)
 * over their rows into SLOT_PARTIALS partial rows of the scratch per
 * block (dbeta's from BETA_PARTIALS on). The blocks depend on rows and
 * the plan alone and every sum runs in a fixed order: the same bits on
 * every run.
 *
 * ROW_IN_REGISTERS: each item keeps its share of x, dy and of the
 * partial sums in registers (with ROW_AHEAD its slot's next row too,
 * loading while the work-group reduces this one; with GAMMA_HELD gamma's
 * share); at the end the slots add their sums in slot order into the
 * block's one partial row. Otherwise rows are streamed (read again for
 * each pass, in the compensated blocks of row_reduce.cl) and each slot's
 * sums add up in a partial row of its own in the scratch. A NULL scratch
 * (neither dgamma nor dbeta wanted): no partial sums. Layernorm makes
 * both whenever one is wanted.
 *
 * Macros (from the plan): row_reduce.cl's, with SUM_BLOCK in either mode;
 * EPS and norm_scale.cl's; and
 *   NORM_CENTRED  1: layernorm (x - mean, dbeta); 0: rmsnorm
 *   RSQRT_EPS     layernorm: 1 / sqrt(EPS), dx's factor on a constant row
 *   BLOCKS        the most blocks of rows, and work-groups of the launch
 *   ROW_SHFL      1: a row's sums over warps by PTX shuffles, then across
 *                 warps in one barrier (NVIDIA; WG_SIZE a multiple of 32)
 *   ROW_AHEAD     1: rows in registers load the next row ahead
 *   GAMMA_HELD    1: rows in registers hold gamma's share; 0: read
 *                 where used
 *   ROW_AS_STORED 1: rows in registers hold x and dy as stored (f16 and
 *                 bf16 vectors of 4 or 8), in half the registers
 *   ROW_AHEAD_ASYNC 1: rows in registers copy each slot's next row to
 *                 local memory by cp.async (NVIDIA, compute capability
 *                 8.0+), ROW_COPY_BYTES (VEC elements) a copy, while
 *                 this one is reduced and written
 * Local memory: PART, NB_PART sumv; STAGE, NB_STAGE floatv; AHEAD,
 * NB_AHEAD_CHUNKS uint4. */

#if !defined(EPS) || !defined(NORM_CENTRED) || !defined(BLOCKS) ||        \
    !defined(SUM_BLOCK) || !defined(ROW_SHFL) || !defined(ROW_AHEAD) ||   \
    !defined(GAMMA_HELD) || !defined(ROW_AS_STORED) ||                    \
    !defined(ROW_AHEAD_ASYNC)
#error "norm_backward.cl: a macro of the plan is missing"
#endif
#if NORM_CENTRED && !defined(RSQRT_EPS)
#error "norm_backward.cl: layernorm needs RSQRT_EPS"
#endif

/* Partial rows per block, and the slots' hand-over area (registers: the
 * sums of slots 1.. for slot 0 to add, one vector of each item at a
 * time). */
#if ROW_IN_REGISTERS
#define SLOT_PARTIALS 1
#define NB_STAGE ((ROWS_PER_GROUP - 1) * WG_SIZE + 1)
#else
#define SLOT_PARTIALS ROWS_PER_GROUP
#define NB_STAGE 1
#endif

/* PART's sums per slot and array: a warp's each where the slots sum by
 * shuffles, else an item's. */
#if ROW_SHFL
#define PART_ITEMS (WG_SIZE / 32)
#else
#define PART_ITEMS WG_SIZE
#endif
#define NB_PART (2 * ROWS_PER_GROUP * PART_ITEMS)

/* AHEAD: each slot's next row, x then dy, as stored, in 16-byte chunks
 * (a kernel declares no variable of type half). */
#if ROW_AHEAD_ASYNC
#define NB_AHEAD_CHUNKS                                                      \
    ((2 * ROWS_PER_GROUP * FEATURES * sizeof(storage_t) + 15) / 16)
#else
#define NB_AHEAD_CHUNKS 1
#endif

/* Rows per block: ceil(rows / BLOCKS) rounded up to whole row slots. */
inline uint block_rows(int rows)
{
    const uint per = ((uint)rows + BLOCKS - 1) / BLOCKS;
    return (per + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP * ROWS_PER_GROUP;
}

/* Partial rows in use at ROWS: SLOT_PARTIALS per block. */
inline uint partial_rows(int rows)
{
    const uint per = block_rows(rows);
    return ((uint)rows + per - 1) / per * SLOT_PARTIALS;
}

/* Where dbeta's partial rows start in the scratch. */
#define BETA_PARTIALS ((size_t)BLOCKS * SLOT_PARTIALS * FEATURES)

/* floatv of the float32 scratch, dgamma and dbeta, at element i. */
#if VEC == 1
inline floatv loadf(const __global float *p, size_t i) { return p[i]; }
inline void storef(__global float *p, size_t i, floatv v) { p[i] = v; }
#else
#define NB_VLOAD_(n) vload##n
#define NB_VLOAD(n) NB_VLOAD_(n)
#define NB_VSTORE_(n) vstore##n
#define NB_VSTORE(n) NB_VSTORE_(n)
inline floatv loadf(const __global float *p, size_t i)
{
    return NB_VLOAD(VEC)(0, p + i);
}
inline void storef(__global float *p, size_t i, floatv v)
{
    NB_VSTORE(VEC)(v, 0, p + i);
}
#endif

/* The sums a row's statistics reduce: rmsnorm's (sum (x s)^2, sum g x s),
 * layernorm's (sum d, sum d^2, sum g, sum g d), d = x s - mean0. */
#if NORM_CENTRED
typedef float4 sumv;
#define SUMV_FLOATS 4
#define SUMV_LAST(v) ((v).s3)
#else
typedef float2 sumv;
#define SUMV_FLOATS 2
#define SUMV_LAST(v) ((v).s1)
#endif
#if ROW_SHFL
/* Where the target has PTX (NVIDIA) each row slot of a work-group runs on
 * its own: its reductions sum within warps by shuffles, then across its
 * warps through local memory after a barrier of the slot's items alone
 * (bar.sync with an id of its own, 1 + the slot: 0 is barrier()'s), so
 * one slot's row waits for no other's. WG_SIZE is a multiple of 32, so
 * no warp spans two slots. */
inline void slot_barrier(void)
{
#if ROWS_PER_GROUP == 1
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    asm volatile("bar.sync %0, %1;"
                 :
                 : "r"(1 + (uint)get_local_id(1)), "r"(WG_SIZE)
                 : "memory");
#endif
}

/* V of lane LANE ^ O of this item's warp, and V of lane SRC. */
inline float lane_xor(float v, uint o)
{
    float w;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;"
                 : "=f"(w)
                 : "f"(v), "r"(o));
    return w;
}

inline float lane_at(float v, uint src)
{
    float w;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;"
                 : "=f"(w)
                 : "f"(v), "r"(src));
    return w;
}

/* NAME(v): V folded by FOLD over the 32 lanes of this item's warp,
 * every lane taking it: butterfly shuffles, the same operations on each
 * lane and so the same bits. The shuffle is taken before FOLD, which may
 * name an operand twice (MAX2): a shuffle some lanes of the warp skip
 * waits for them forever. */
#define WARP_FOLD(NAME, FOLD)                                                \
    inline float NAME(float v)                                               \
    {                                                                        \
        for (uint o = 16; o > 0; o >>= 1) {                                  \
            const float w = lane_xor(v, o);                                  \
            v = FOLD(v, w);                                                  \
        }                                                                    \
        return v;                                                            \
    }
WARP_FOLD(warp_add, ADD2)
WARP_FOLD(warp_max, MAX2)

#define ROW_WARPS (WG_SIZE / 32)

/* The warps' sums at PART, SUMV_FLOATS floats a warp (LANE: this item's
 * lane). Where they fit one a lane, each lane takes one and the lanes
 * fold them over the warps' bits, lane i (i < SUMV_FLOATS) ending with
 * sum i, which every lane then takes: the same bits in every item. */
#define PART_FLOATS (ROW_WARPS * SUMV_FLOATS)
inline sumv warps_total(const __local sumv *part, uint lane)
{
#if PART_FLOATS <= 32
    float t = lane < PART_FLOATS ? ((const __local float *)part)[lane] : 0.0f;
    for (uint o = SUMV_FLOATS; o < PART_FLOATS; o <<= 1) {
        t += lane_xor(t, o);
    }
#if NORM_CENTRED
    return (sumv)(lane_at(t, 0), lane_at(t, 1), lane_at(t, 2), lane_at(t, 3));
#else
    return (sumv)(lane_at(t, 0), lane_at(t, 1));
#endif
#else
    (void)lane;
    sumv t = part[0];
    for (uint w = 1; w < ROW_WARPS; w++) {
        t += part[w];
    }
    return t;
#endif
}

/* NAME(part, lid, v): V folded by FOLD over the slot's items (WARP over
 * each warp, then the warps' results in warp order through PART), every
 * item taking the result; PART is left holding the warps' results (a
 * second reduction on it waits for a slot_barrier). */
#define SLOT_FOLD(NAME, WARP, FOLD)                                          \
    inline float NAME(__local float *part, uint lid, float v)                \
    {                                                                        \
        v = WARP(v);                                                         \
        if (lid % 32 == 0) {                                                 \
            part[lid / 32] = v;                                              \
        }                                                                    \
        slot_barrier();                                                      \
        float t = part[0];                                                   \
        for (uint w = 1; w < ROW_WARPS; w++) {                               \
            t = FOLD(t, part[w]);                                            \
        }                                                                    \
        return t;                                                            \
    }
SLOT_FOLD(row_total, warp_add, ADD2)
SLOT_FOLD(row_peak, warp_max, MAX2)

/* row_sums: the row's sums (sumv), the same way, each warp folding its
 * SUMV_FLOATS sums transposed: at the first steps a lane keeps half of
 * the sums it still holds and sends its partner the other half (lanes
 * with the step's bit set keep the later ones), so that after log2 of
 * SUMV_FLOATS steps each lane holds one sum, which the remaining steps
 * fold whole: lane i * 32 / SUMV_FLOATS ends with sum i of the warp. */
inline sumv row_sums(__local sumv *part, uint lid, sumv v)
{
    const uint lane = lid % 32;
#if NORM_CENTRED
    const bool hi = (lane & 16) != 0, up = (lane & 8) != 0;
    float a = hi ? v.s2 : v.s0, b = hi ? v.s3 : v.s1;
    a += lane_xor(hi ? v.s0 : v.s2, 16);
    b += lane_xor(hi ? v.s1 : v.s3, 16);
    float k = up ? b : a;
    k += lane_xor(up ? a : b, 8);
    for (uint o = 4; o > 0; o >>= 1) {
        k += lane_xor(k, o);
    }
#else
    const bool hi = (lane & 16) != 0;
    float k = hi ? v.s1 : v.s0;
    k += lane_xor(hi ? v.s0 : v.s1, 16);
    for (uint o = 8; o > 0; o >>= 1) {
        k += lane_xor(k, o);
    }
#endif
    if (lane % (32 / SUMV_FLOATS) == 0) {
        ((__local float *)part)[lid / 32 * SUMV_FLOATS +
                                lane / (32 / SUMV_FLOATS)] = k;
    }
    slot_barrier();
    return warps_total(part, lane);
}
#else
#define slot_barrier() ROW_BARRIER()
ROW_REDUCTION(row_sums, sumv, ADD2)
inline float row_total(__local float *part, uint lid, float v)
{
    return row_sum(part, lid, v);
}
inline float row_peak(__local float *part, uint lid, float v)
{
    return row_max(part, lid, v);
}
#endif

/* Layernorm's rows held where the slots run apart (and no sum is near
 * the subnormals) take one reduction, about the row's first element,
 * while the mean lies within ONE_PASS_SPREAD^(1/2) deviations of it, and
 * the scaled pass's two about the mean past that (see stats_held). */
#define ONE_PASS_HELD                                                        \
    (NORM_CENTRED && ROW_IN_REGISTERS && ROW_SHFL && !NORM_TINY_SUMS)
#define ONE_PASS_SPREAD 64.0f

/* PART holds two arrays of ROWS_PER_GROUP x PART_ITEMS sumv. A reduction
 * leaves its result in its array, so the next one on the same array
 * waits for a barrier: layernorm sums into array 1, its mean (a float)
 * into array 0; rmsnorm's rows, and layernorm's in one pass, alternate
 * between them (IT: the row's index in its slot), the scaled pass of
 * the latter (its mean) taking the other array. */
#if NORM_CENTRED && !ONE_PASS_HELD
#define SUMS_ARRAY(it) 1u
#define FIRST_ARRAY(it) 0u
#elif NORM_CENTRED
#define SUMS_ARRAY(it) ((it) & 1u)
#define FIRST_ARRAY(it) (((it) & 1u) ^ 1u)
#else
#define SUMS_ARRAY(it) ((it) & 1u)
#define FIRST_ARRAY(it) ((it) & 1u)
#endif

inline __local sumv *part_at(__local sumv *part, uint array)
{
    return part + (array * ROWS_PER_GROUP + get_local_id(1)) * PART_ITEMS;
}

/* A row's statistics: xhat = (x s - mean0 - c) * r; dx = sr * (g - mg -
 * xhat * mgx), sr being s r. CHECK is the sum of squares norm_scale.cl
 * looks at. */
struct norm_stats {
    float s, mean0, c, r, sr, mg, mgx, check;
};

inline struct norm_stats stats_of(sumv t, float mean0, float s)
{
    struct norm_stats st;
    st.s = s;
    st.mean0 = mean0;
#if NORM_CENTRED
    st.c = t.s0 / (float)FEATURES;
    const float var = fmax(t.s1 / (float)FEATURES - st.c * st.c, 0.0f);
    /* A constant row rescaled can leave var 0 and EPS s^2 under FLT_MIN
     * (layernorm.cl): FLT_MIN keeps r finite for xhat, 0 there, but dx
     * needs s r itself, which is then 1 / sqrt(EPS). A row that is not
     * constant has var well above FLT_MIN at its scale. */
    const float q = var + EPS * s * s;
    st.r = rsqrt(fmax(q, FLT_MIN));
    st.sr = q < FLT_MIN ? RSQRT_EPS : s * st.r;
    st.mg = t.s2 / (float)FEATURES;
    st.mgx = st.r * (t.s3 / (float)FEATURES - st.c * st.mg);
    st.check = t.s1;
#else
    st.c = 0.0f;
    st.r = rsqrt(t.s0 / (float)FEATURES + EPS * s * s);
    st.sr = s * st.r;
    st.mg = 0.0f;
    st.mgx = st.r * (t.s1 / (float)FEATURES);
    st.check = t.s0;
#endif
    return st;
}

inline floatv xhat_of(floatv x, struct norm_stats st)
{
    return (x * st.s - st.mean0 - st.c) * st.r;
}

inline floatv dx_of(floatv g, floatv xh, struct norm_stats st)
{
    return st.sr * (g - st.mg - xh * st.mgx);
}

/* The statistics of the row at BASE of x, read from memory, at scale S. */
inline struct norm_stats stats_streamed(const __global storage_t *x,
                                        const __global storage_t *gamma,
                                        const __global storage_t *dy,
                                        size_t base, uint lid,
                                        __local sumv *part, uint it, float s)
{
    float mean0 = 0.0f;
#if NORM_CENTRED
    const float shift = load1(x, base) * s;
    floatv a = 0.0f, a_err = 0.0f;
    for (uint j0 = lid; j0 < NVEC; j0 += BLOCK_STRIDE) {
        floatv b = 0.0f;
        for (uint j = j0; j < block_end(j0); j += WG_SIZE) {
            b += loadv(x, base + j * VEC) * s - shift;
        }
        csum_add(&a, &a_err, b);
    }
    __local float *first = (__local float *)part_at(part, FIRST_ARRAY(it));
    mean0 = shift + row_total(first, lid, hsum(a + a_err)) / (float)FEATURES;
#endif
    /* Per lane: each of the sums below and its compensation. */
    floatv t[2 * SUMV_FLOATS];
#pragma unroll
    for (uint i = 0; i < 2 * SUMV_FLOATS; i++) {
        t[i] = 0.0f;
    }
    for (uint j0 = lid; j0 < NVEC; j0 += BLOCK_STRIDE) {
        floatv b[SUMV_FLOATS];
#pragma unroll
        for (uint i = 0; i < SUMV_FLOATS; i++) {
            b[i] = 0.0f;
        }
        for (uint j = j0; j < block_end(j0); j += WG_SIZE) {
            const floatv d = loadv(x, base + j * VEC) * s - mean0;
            const floatv g = loadv(gamma, j * VEC) * loadv(dy, base + j * VEC);
#if NORM_CENTRED
            b[0] += d;
            b[1] += d * d;
            b[2] += g;
            b[3] += g * d;
#else
            b[0] += d * d;
            b[1] += g * d;
#endif
        }
#pragma unroll
        for (uint i = 0; i < SUMV_FLOATS; i++) {
            csum_add(&t[2 * i], &t[2 * i + 1], b[i]);
        }
    }
#if NORM_CENTRED
    const sumv own = (sumv)(hsum(t[0] + t[1]), hsum(t[2] + t[3]),
                            hsum(t[4] + t[5]), hsum(t[6] + t[7]));
#else
    const sumv own = (sumv)(hsum(t[0] + t[1]), hsum(t[2] + t[3]));
#endif
    return stats_of(row_sums(part_at(part, SUMS_ARRAY(it)), lid, own), mean0,
                    s);
}

/* ST as the forward has it: again at scale s when the sums of some row of
 * the work-group failed (norm_scale.cl), or a one-pass row's statistics
 * would lose bits (stats_held). Every item calls it. */
inline struct norm_stats stats_checked(struct norm_stats st,
                                       const __global storage_t *x,
                                       const __global storage_t *gamma,
                                       const __global storage_t *dy,
                                       size_t base, uint lid,
                                       __local sumv *part, uint it)
{
#if ROW_SHFL
    /* The slots run apart, the scaled pass too: this slot's row alone. */
    if (!sum_needs_scale(st.check)) {
        return st;
    }
#else
    /* The row sums of every slot sit at the head of their partials. */
    const __local float *sums =
        (const __local float *)(part + SUMS_ARRAY(it) * ROWS_PER_GROUP *
                                           PART_ITEMS) + NORM_CENTRED;
    if (!group_needs_scale(sums, SUMV_FLOATS * WG_SIZE, st.check)) {
        return st;
    }
#endif
    slot_barrier(); /* every item has read the plain sums */
    __local float *first = (__local float *)part_at(part, FIRST_ARRAY(it));
    const float s = norm_scale(row_peak(first, lid,
                                        item_max_abs(x, base, lid)));
    slot_barrier(); /* every item has read the max */
    return stats_streamed(x, gamma, dy, base, lid, part, it, s);
}

#if ROW_IN_REGISTERS
/* A vector of x or dy from its load to its last use: with ROW_AS_STORED
 * (f16 and bf16 vectors of 4 or 8) as stored, in half the registers of
 * floats, unpacked where used; else as floats. */
#if ROW_AS_STORED && VEC == 4
typedef uint2 rowv;
inline rowv load_rowv(const __global storage_t *p, size_t i)
{
    return load4_bits(p, i);
}
inline floatv row_floats(rowv h) { return unpack4(h); }
#elif ROW_AS_STORED && VEC == 8
typedef uint4 rowv;
inline rowv load_rowv(const __global storage_t *p, size_t i)
{
    return load8_bits(p, i);
}
inline floatv row_floats(rowv h) { return unpack8(h); }
#elif ROW_AS_STORED
#error "norm_backward.cl: ROW_AS_STORED needs VEC 4 or 8"
#else
typedef floatv rowv;
inline rowv load_rowv(const __global storage_t *p, size_t i)
{
    return loadv(p, i);
}
inline floatv row_floats(rowv h) { return h; }
#endif

/* This item's share of the row at P, as load_param takes a parameter. */
inline void load_row(rowv out[SLOTS], const __global storage_t *p, uint lid)
{
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            out[k] = load_rowv(p, j * VEC);
        }
    }
}

#if ROW_AHEAD_ASYNC
#if ROW_COPY_BYTES != 8 && ROW_COPY_BYTES != 16
#error "norm_backward.cl: ROW_AHEAD_ASYNC copies 8 or 16 bytes"
#endif
#define NB_STR_(x) #x
#define NB_STR(x) NB_STR_(x)

/* This item's share of the row at SRC into TO (its own vectors: each item
 * reads back only what it copied, so its cp.async.wait_group alone orders
 * the copies before its reads, with no barrier). AFTER is a value made
 * of everything the item read from TO before: the copies are issued only
 * once those reads are done. */
inline void ahead_copy(__local storage_t *to, const __global storage_t *src,
                       uint lid, float after)
{
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            asm volatile("cp.async.ca.shared.global [%0], [%1], "
                         NB_STR(ROW_COPY_BYTES) ";"
                         :
                         : "l"(to + j * VEC), "l"(src + j * VEC), "f"(after)
                         : "memory");
        }
    }
}

/* The row at base ROW of X and DY into BUF (x, then dy) when COPY, as
 * one group of copies. */
inline void ahead_start(__local storage_t *buf, const __global storage_t *x,
                        const __global storage_t *dy, size_t row, uint lid,
                        float after, bool copy)
{
    if (copy) {
        ahead_copy(buf, x + row, lid, after);
        ahead_copy(buf + FEATURES, dy + row, lid, after);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

/* Vector I of a row in AHEAD, held as rowv. */
inline rowv ahead_rowv(const __local storage_t *p, uint i)
{
#if ROW_AS_STORED
    return ((const __local rowv *)p)[i / VEC];
#elif defined(DTYPE_F32)
    return ((const __local floatv *)p)[i / VEC];
#elif VEC == 4
    return unpack4(((const __local uint2 *)p)[i / 4]);
#elif VEC == 8
    return unpack8(((const __local uint4 *)p)[i / 8]);
#else
#error "norm_backward.cl: ROW_AHEAD_ASYNC needs VEC 4 or 8 of 2 bytes"
#endif
}

/* This item's share of the slot's row in BUF (x, then dy), once its
 * copies have landed. */
inline void ahead_take(rowv v[SLOTS], rowv dyv[SLOTS],
                       const __local storage_t *buf, uint lid)
{
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            v[k] = ahead_rowv(buf, j * VEC);
            dyv[k] = ahead_rowv(buf + FEATURES, j * VEC);
        }
    }
}
#endif

/* gamma's vector J, slot K of this item: from GAM, its share held in
 * registers, with GAMMA_HELD; else read where used (from the cache: every
 * row reads it), which leaves the registers to the rows. */
inline floatv gamma_at(const floatv *gam, const __global storage_t *gamma,
                       uint k, uint j)
{
#if GAMMA_HELD
    (void)gamma;
    (void)j;
    return gam[k];
#else
    (void)gam;
    (void)k;
    return loadv(gamma, j * VEC);
#endif
}

/* This item's sums of the row it holds a share of (V, DYV; gamma as
 * gamma_at reads it; SHIFT: the row's first element), about *MEAN0,
 * which it sets: SHIFT where one pass serves, else the row's mean (a
 * reduction of its own). */
inline sumv held_sums(const rowv v[SLOTS], const rowv dyv[SLOTS],
                      const floatv *gam, const __global storage_t *gamma,
                      float shift, uint lid, __local sumv *part, uint it,
                      float *mean0)
{
    *mean0 = 0.0f;
#if ONE_PASS_HELD
    /* The sums about SHIFT give the mean's offset c from it and the
     * variance as their second moment less c^2, which loses bits to
     * cancellation only as c^2 outgrows the variance: while c^2 <=
     * ONE_PASS_SPREAD times it they are the statistics (stats_of takes
     * any reference); past that the row is summed again about its mean,
     * by the scaled pass stats_checked runs for a CHECK that fails. */
    *mean0 = shift;
#elif NORM_CENTRED
    floatv a = 0.0f;
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        if (SLOT_IN_ROW(k, lid + k * WG_SIZE)) {
            a += row_floats(v[k]) - shift;
        }
    }
    __local float *first = (__local float *)part_at(part, FIRST_ARRAY(it));
    *mean0 = shift + row_total(first, lid, hsum(a)) / (float)FEATURES;
#else
    (void)shift;
    (void)part;
    (void)it;
#endif
    floatv t[SUMV_FLOATS];
#pragma unroll
    for (uint i = 0; i < SUMV_FLOATS; i++) {
        t[i] = 0.0f;
    }
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            const floatv d = row_floats(v[k]) - *mean0;
            const floatv g = gamma_at(gam, gamma, k, j) * row_floats(dyv[k]);
#if NORM_CENTRED
            t[0] += d;
            t[1] += d * d;
            t[2] += g;
            t[3] += g * d;
#else
            t[0] += d * d;
            t[1] += g * d;
#endif
        }
    }
#if NORM_CENTRED
    return (sumv)(hsum(t[0]), hsum(t[1]), hsum(t[2]), hsum(t[3]));
#else
    return (sumv)(hsum(t[0]), hsum(t[1]));
#endif
}

/* The plain statistics of a held row from its items' sums OWN about
 * MEAN0. */
inline struct norm_stats held_stats(sumv own, float mean0, uint lid,
                                    __local sumv *part, uint it)
{
    const sumv sums = row_sums(part_at(part, SUMS_ARRAY(it)), lid, own);
    struct norm_stats st = stats_of(sums, mean0, 1.0f);
#if ONE_PASS_HELD
    /* Every item of the slot gets the same sums, so the same branch. */
    if (!(st.c * st.c <=
          ONE_PASS_SPREAD * (sums.s1 / (float)FEATURES - st.c * st.c))) {
        st.check = INFINITY;
    }
#endif
    return st;
}

/* This item's share of row BASE: dx stored when LIVE; dy * xhat (and dy)
 * added to ACC_G (ACC_B) when LIVE and GRADS. */
inline void row_out_held(const rowv v[SLOTS], const rowv dyv[SLOTS],
                         const floatv *gam, const __global storage_t *gamma,
                         struct norm_stats st, __global storage_t *dx,
                         size_t base, uint lid, bool live, bool grads,
                         floatv acc_g[SLOTS], floatv acc_b[SLOTS])
{
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            const floatv xh = xhat_of(row_floats(v[k]), st);
            const floatv d = row_floats(dyv[k]);
            if (live) {
                storev(dx, base + j * VEC,
                       dx_of(gamma_at(gam, gamma, k, j) * d, xh, st));
            }
            if (live && grads) {
                acc_g[k] += d * xh;
#if NORM_CENTRED
                acc_b[k] += d;
#endif
            }
        }
    }
}

#if ROWS_PER_GROUP > 1
/* The sum of every slot's ACC, in slot order: slots 1.. hand theirs to
 * slot 0 through STAGE, which returns it (the others get their own). */
inline floatv slots_sum(floatv acc, __local floatv *stage, uint lid)
{
    const uint ly = get_local_id(1);
    if (ly > 0) {
        stage[(ly - 1) * WG_SIZE + lid] = acc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (ly == 0) {
        for (uint l = 1; l < ROWS_PER_GROUP; l++) {
            acc += stage[(l - 1) * WG_SIZE + lid];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* read before the next vector comes */
    return acc;
}
#else
inline floatv slots_sum(floatv acc, __local floatv *stage, uint lid)
{
    (void)stage;
    (void)lid;
    return acc;
}
#endif

/* The slots' partial sums into the block's partial row AT (dbeta's
 * BETA_PARTIALS on), slot 0 storing; nothing with a NULL SCRATCH. */
inline void partials_out(floatv acc_g[SLOTS], floatv acc_b[SLOTS],
                         __global float *scratch, size_t at, uint lid,
                         __local floatv *stage)
{
    const bool store = scratch != 0 && get_local_id(1) == 0;
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        const floatv g = slots_sum(acc_g[k], stage, lid);
        if (store && SLOT_IN_ROW(k, j)) {
            storef(scratch, at + j * VEC, g);
        }
#if NORM_CENTRED
        const floatv b = slots_sum(acc_b[k], stage, lid);
        if (store && SLOT_IN_ROW(k, j)) {
            storef(scratch, BETA_PARTIALS + at + j * VEC, b);
        }
#else
        (void)acc_b;
#endif
    }
}

/* The rows of block [START, END), slot by slot, with the row in
 * registers. A compute unit of one work-group keeps loads in flight
 * through the reductions by starting each slot's next row early:
 * ROW_AHEAD into registers as this row is reduced, ROW_AHEAD_ASYNC into
 * the slot's share of AHEAD as soon as this row is read out of it. */
inline void block_rows_held(const __global storage_t *x,
                            const __global storage_t *gamma,
                            const __global storage_t *dy,
                            __global storage_t *dx, uint start, uint end,
                            __global float *scratch, size_t at,
                            __local sumv *part, __local floatv *stage,
                            __local storage_t *ahead)
{
    const uint lid = get_local_id(0), ly = get_local_id(1);
    const bool grads = scratch != 0;
    rowv v[SLOTS], dyv[SLOTS];
    floatv acc_g[SLOTS], acc_b[SLOTS];
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        acc_g[k] = 0.0f;
        acc_b[k] = 0.0f;
    }
#if GAMMA_HELD
    floatv gam[SLOTS];
    load_param(gam, gamma, lid);
#else
    const floatv *gam = 0;
#endif
    size_t base = (size_t)min(start + ly, end - 1) * FEATURES;
    uint it = 0;
#if ROW_AHEAD
    load_row(v, x + base, lid);
    load_row(dyv, dy + base, lid);
    float shift = load1(x, base);
#elif ROW_AHEAD_ASYNC
    /* The slot's share of AHEAD. */
    __local storage_t *buf = ahead + ly * 2 * FEATURES;
    ahead_start(buf, x, dy, base, lid, 0.0f, true);
    float shift = load1(x, base);
#else
    (void)ahead;
#endif
    for (uint r0 = start; r0 < end; r0 += ROWS_PER_GROUP, it++) {
#if ROW_AHEAD || ROW_AHEAD_ASYNC
        const bool more = r0 + ROWS_PER_GROUP < end;
        const size_t next =
            (size_t)min(r0 + ROWS_PER_GROUP + ly, end - 1) * FEATURES;
        float nshift = 0.0f;
#endif
#if ROW_AHEAD
        rowv nv[SLOTS], ndy[SLOTS];
        if (more) {
            load_row(nv, x + next, lid);
            load_row(ndy, dy + next, lid);
            nshift = load1(x, next);
        }
#elif ROW_AHEAD_ASYNC
        ahead_take(v, dyv, buf, lid);
#else
        base = (size_t)min(r0 + ly, end - 1) * FEATURES;
        load_row(v, x + base, lid);
        load_row(dyv, dy + base, lid);
        const float shift = load1(x, base);
#endif
        float mean0;
        const sumv own =
            held_sums(v, dyv, gam, gamma, shift, lid, part, it, &mean0);
#if ROW_AHEAD_ASYNC
        /* The next row takes BUF once every vector of x and dy read from
         * it is in the last sum. */
        ahead_start(buf, x, dy, next, lid, SUMV_LAST(own), more);
        nshift = load1(x, next);
#endif
        struct norm_stats st =
            stats_checked(held_stats(own, mean0, lid, part, it), x, gamma,
                          dy, base, lid, part, it);
        row_out_held(v, dyv, gam, gamma, st, dx, base, lid, r0 + ly < end,
                     grads, acc_g, acc_b);
#if ROW_AHEAD
        if (more) {
#pragma unroll
            for (uint k = 0; k < SLOTS; k++) {
                v[k] = nv[k];
                dyv[k] = ndy[k];
            }
        }
#endif
#if ROW_AHEAD || ROW_AHEAD_ASYNC
        if (more) {
            shift = nshift;
            base = next;
        }
#endif
    }
    /* Met by every item: the hand-over has barriers. */
    partials_out(acc_g, acc_b, scratch, at, lid, stage);
}

#else
/* Partial row P's vector J (float32 elements at I) gets TERM: set at
 * the slot's FIRST row, added after. */
inline void partial_add(__global float *p, size_t i, floatv term, bool first,
                        bool live)
{
    if (first) {
        storef(p, i, live ? term : (floatv)0.0f);
    } else if (live) {
        storef(p, i, loadf(p, i) + term);
    }
}

/* The rows of block [START, END), slot by slot, streamed. */
inline void block_rows_streamed(const __global storage_t *x,
                                const __global storage_t *gamma,
                                const __global storage_t *dy,
                                __global storage_t *dx, uint start,
                                uint end, __global float *scratch, size_t at,
                                __local sumv *part)
{
    const uint lid = get_local_id(0), ly = get_local_id(1);
    const bool grads = scratch != 0;
    uint it = 0;
    for (uint r0 = start; r0 < end; r0 += ROWS_PER_GROUP, it++) {
        const size_t base = (size_t)min(r0 + ly, end - 1) * FEATURES;
        const bool live = r0 + ly < end;
        struct norm_stats st = stats_checked(
            stats_streamed(x, gamma, dy, base, lid, part, it, 1.0f), x,
            gamma, dy, base, lid, part, it);
        for (uint j = lid; j < NVEC; j += WG_SIZE) {
            const floatv d = loadv(dy, base + j * VEC);
            const floatv xh = xhat_of(loadv(x, base + j * VEC), st);
            if (live) {
                storev(dx, base + j * VEC,
                       dx_of(loadv(gamma, j * VEC) * d, xh, st));
            }
            if (grads) {
                partial_add(scratch, at + j * VEC, d * xh, it == 0, live);
#if NORM_CENTRED
                partial_add(scratch, BETA_PARTIALS + at + j * VEC, d,
                            it == 0, live);
#endif
            }
        }
    }
}
#endif

/* The work-group's block of rows. Every item of it calls this. */
inline void norm_backward_rows(const int rows, const __global storage_t *x,
                               const __global storage_t *gamma,
                               const __global storage_t *dy,
                               __global storage_t *dx,
                               __global float *scratch, __local sumv *part,
                               __local floatv *stage,
                               __local storage_t *ahead)
{
    const uint per = block_rows(rows);
    const uint start = get_group_id(1) * per;
    if (start >= (uint)rows) {
        return; /* past the last block: the whole group */
    }
    const uint end = min(start + per, (uint)rows);
#if ROW_IN_REGISTERS
    const size_t at = (size_t)get_group_id(1) * FEATURES;
    block_rows_held(x, gamma, dy, dx, start, end, scratch, at, part, stage,
                    ahead);
#else
    (void)stage;
    (void)ahead;
    const size_t at =
        ((size_t)get_group_id(1) * ROWS_PER_GROUP + get_local_id(1)) *
        FEATURES;
    block_rows_streamed(x, gamma, dy, dx, start, end, scratch, at, part);
#endif
}
