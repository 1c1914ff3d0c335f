/* wgmma_ptx.cl - the warpgroup tensor-core instructions of compute
 * capability 9.0 (wgmma, PTX target sm_90a) that wgmma_tiles.cl runs.
 *
 * NVIDIA's OpenCL compiler writes PTX for sm_90, which ptxas refuses
 * wgmma for; so each instruction goes into the PTX behind WG_MARK, a
 * trap and a comment, its operands filled in by the compiler like any
 * inline asm's. The stub builds this source, takes the program's PTX
 * (its binary on NVIDIA's driver), deletes every WG_MARK and names the
 * target sm_90a, and builds that as a program binary: only on devices of
 * compute capability 9.0, where sm_90a code runs. Built as it is, the
 * kernel traps at its first product instead of computing nothing. The
 * accumulators are operands of every instruction that reads or writes
 * them ("+f"), so that the compiler keeps them in place between the
 * asynchronous product and the wait for it. */

/* The mark the stub deletes (specl's runtime.h RT_SM90A_MARK). */
#define WG_MARK "trap; //@sm_90a "

#ifdef DTYPE_F16
#define WG_TYPES "f32.f16.f16"
#else
#define WG_TYPES "f32.bf16.bf16"
#endif

/* A descriptor of a tile in shared memory for wgmma: its address, the
 * byte offsets between its core-matrix groups (LBO: along the leading
 * dimension's blocks, SBO: between groups of 8 rows) and its swizzle
 * (1: 128 bytes, 2: 64, 3: 32). */
inline ulong wg_desc(__local const void *p, ulong lbo, ulong sbo,
                     ulong swizzle)
{
    /* A __local pointer's value is its shared-window address. */
    uint at = (uint)(size_t)p;
    return (ulong)((at >> 4) & 0x3FFF) | (lbo >> 4) << 16 |
           (sbo >> 4) << 32 | swizzle << 62;
}

/* Makes this work-item's writes to local memory (st.shared, cp.async)
 * visible to wgmma, which reads through the async proxy. */
inline void wg_fence_proxy(void)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* The mbarriers the copying and the multiplying warpgroups meet on
 * (sm_90 PTX, no mark needed): one made to expect COUNT arrivals a
 * phase; an arrival; a wait for the phase of parity PARITY to end. */
inline void wg_bar_init(__local ulong *bar, uint count)
{
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"l"(bar), "r"(count)
                 : "memory");
}

inline void wg_bar_arrive(__local ulong *bar)
{
    asm volatile("{ .reg .b64 state; mbarrier.arrive.shared.b64 state, [%0]; }"
                 ::"l"(bar)
                 : "memory");
}

inline void wg_bar_wait(__local ulong *bar, uint parity)
{
    uint done;
    do {
        asm volatile("{ .reg .pred p; "
                     "mbarrier.try_wait.parity.shared.b64 p, [%1], %2; "
                     "selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "l"(bar), "r"(parity)
                     : "memory");
    } while (done == 0);
}

/* Closes the group of products started since the last. */
inline void wg_commit(void)
{
    asm volatile(WG_MARK "wgmma.commit_group.sync.aligned;" ::: "memory");
}

/* The accumulators as operands ("+f") and their places in the
 * instruction (%0 on), for 32, 40, 48, 64 and 128 of them, each list a
 * shorter one and the rest. */
#define WG_D32 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), \
    "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), \
    "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), \
    "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), \
    "+f"(d[30]), "+f"(d[31])
#define WG_D40 WG_D32, \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), \
    "+f"(d[38]), "+f"(d[39])
#define WG_D48 WG_D40, \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), \
    "+f"(d[46]), "+f"(d[47])
#define WG_D64 WG_D32, \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), \
    "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), \
    "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), \
    "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), \
    "+f"(d[62]), "+f"(d[63])
#define WG_D128 WG_D64, \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), \
    "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), \
    "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), \
    "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), \
    "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), \
    "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), \
    "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), \
    "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), \
    "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define WG_R32 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, " \
    "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
    "%24, %25, %26, %27, %28, %29, %30, %31"
#define WG_R40 WG_R32 ", %32, %33, %34, %35, %36, %37, %38, %39"
#define WG_R48 WG_R40 ", %40, %41, %42, %43, %44, %45, %46, %47"
#define WG_R64 WG_R32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, " \
    "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, " \
    "%56, %57, %58, %59, %60, %61, %62, %63"
#define WG_R128 WG_R64 ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, " \
    "%76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, " \
    "%88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, " \
    "%100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, " \
    "%124, %125, %126, %127"

/* The GEMM's instructions (wgmma_tiles.cl), for its tile width WG_N;
 * kernels of other shapes (attention_wgmma.cl) write their own from the
 * parts above. */
#ifdef WG_N
/* Per tile width: WG_ACCS accumulators, WG_D the operands naming them
 * all and WG_R their places, WG_SHAPE the instruction's shape and WG_AB
 * the places of the descriptors after them. */
#if WG_N == 64
#define WG_ACCS 32
#define WG_D WG_D32
#define WG_R WG_R32
#define WG_SHAPE "m64n64k16"
#define WG_AB "%32, %33"
#elif WG_N == 128
#define WG_ACCS 64
#define WG_D WG_D64
#define WG_R WG_R64
#define WG_SHAPE "m64n128k16"
#define WG_AB "%64, %65"
#elif WG_N == 256
#define WG_ACCS 128
#define WG_D WG_D128
#define WG_R WG_R128
#define WG_SHAPE "m64n256k16"
#define WG_AB "%128, %129"
#else
#error "wgmma_ptx.cl: WG_N must be 64, 128 or 256"
#endif

/* B's transpose bit: 1, B 16 x WG_N N-major (W K x N, in_out); 0, B
 * K-major, WG_N rows of K (W N x K as PyTorch keeps it, out_in). */
#if MMA_W_NK
#define WG_TRANS_B "0"
#else
#define WG_TRANS_B "1"
#endif

/* D += A * B over 16 of K, A 64 x 16 K-major, B 16 x WG_N N-major
 * (transposed) or K-major (WG_TRANS_B), both in local memory
 * (descriptors DA, DB). */
inline void wg_mma(float d[WG_ACCS], ulong da, ulong db)
{
    asm volatile(WG_MARK "{ .reg .pred p; setp.ne.b32 p, 1, 0; "
                 "wgmma.mma_async.sync.aligned." WG_SHAPE "." WG_TYPES " "
                 "{" WG_R "}, " WG_AB ", p, 1, 1, 0, " WG_TRANS_B "; }"
                 : WG_D
                 : "l"(da), "l"(db)
                 : "memory");
}

/* Waits until at most 0 (or 1) groups of products are in flight. */
inline void wg_wait_0(float d[WG_ACCS])
{
    asm volatile(WG_MARK "wgmma.wait_group.sync.aligned 0;"
                 : WG_D
                 :
                 : "memory");
}
inline void wg_wait_1(float d[WG_ACCS])
{
    asm volatile(WG_MARK "wgmma.wait_group.sync.aligned 1;"
                 : WG_D
                 :
                 : "memory");
}
/* Before a step's products: the accumulators' last writes in place. */
inline void wg_fence(float d[WG_ACCS])
{
    asm volatile(WG_MARK "wgmma.fence.sync.aligned;"
                 : WG_D
                 :
                 : "memory");
}

#endif /* WG_N */
