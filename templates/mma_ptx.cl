/* mma_ptx.cl - the inline PTX that the tensor-core kernels share
 * (mma_tiles.cl, wgmma_tiles.cl, lora_decode_mma.cl): m16n8k16 products
 * of halves, m16n8k8 products of tf32 (float32 storage), ldmatrix and
 * cp.async into XOR-swizzled tiles of 16-byte chunks. Only NVIDIA's
 * OpenCL compiler accepts it, and the plan launches these kernels only
 * in the variant for compute capability 8.0 and later. */

#define STR_(x) #x
#define STR(x) STR_(x)

/* A staged element in local memory and the elements of a 16-byte
 * chunk: the storage type's bits. */
#if DTYPE_F32
typedef float mma_local_t;
#define MMA_CHUNK 4
#else
typedef ushort mma_local_t;
#define MMA_CHUNK 8
#endif

#if DTYPE_F32
/* Float32 on tf32 units: v enters as hi (v with the low 13 bits of its
 * mantissa cleared: what tf32 keeps) and lo = v - hi (exact), and a
 * product as lo*hi + hi*lo + hi*hi (lo*lo, under 2^-20 of it, left
 * out): float32's accuracy from three tf32 products. */
inline uint mma_tf32_hi(uint v)
{
    return v & 0xffffe000u;
}

inline uint mma_tf32_lo(uint v)
{
    return as_uint(as_float(v) - as_float(v & 0xffffe000u));
}

/* D += A*B, one m16n8k8 product of tf32 bits with float accumulators. */
inline void mma_tf32(float d[4], uint a0, uint a1, uint a2, uint a3,
                     uint b0, uint b1)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* D += A*B to float32's accuracy: A a 16 x 8 block (a[0..3]) and B an
 * 8 x 8 one (b0, b1), float bits, in three tf32 products, the small
 * ones first: float32's product of a fragment, as mma_product below is
 * the halves'. */
inline void mma_product(float d[4], const uint a[4], uint b0, uint b1)
{
    mma_tf32(d, mma_tf32_lo(a[0]), mma_tf32_lo(a[1]), mma_tf32_lo(a[2]),
             mma_tf32_lo(a[3]), mma_tf32_hi(b0), mma_tf32_hi(b1));
    mma_tf32(d, mma_tf32_hi(a[0]), mma_tf32_hi(a[1]), mma_tf32_hi(a[2]),
             mma_tf32_hi(a[3]), mma_tf32_lo(b0), mma_tf32_lo(b1));
    mma_tf32(d, mma_tf32_hi(a[0]), mma_tf32_hi(a[1]), mma_tf32_hi(a[2]),
             mma_tf32_hi(a[3]), mma_tf32_hi(b0), mma_tf32_hi(b1));
}
#else
#ifdef DTYPE_F16
#define MMA_SHAPE "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
#else
#define MMA_SHAPE "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
#endif

/* The bits of V in storage, rounded to nearest even. */
inline ushort mma_bits(float v)
{
#ifdef DTYPE_F16
    ushort h;
    vstore_half_rte(v, 0, (__private half *)&h);
    return h;
#else
    return bf16_from_float(v);
#endif
}

/* V as two values of the storage type, *HI + *LO, which keep 16 bits or
 * more of it: a float factor of a product on tensor cores. */
inline void mma_split(float v, ushort *hi, ushort *lo)
{
    ushort h = mma_bits(v);
#ifdef DTYPE_F16
    *lo = mma_bits(v - vload_half(0, (__private half *)&h));
#else
    *lo = mma_bits(v - as_float((uint)h << 16));
#endif
    *hi = h;
}
#endif

/* Chunk C of row R in a tile of CPR chunks per row, XOR-swizzled: a
 * 128-byte line holds 8 chunks, and the 8 rows an ldmatrix phase reads
 * land on 8 distinct ones. Float32's k-major B fragments are read a
 * float a lane, rows r .. r + 3 (r a multiple of 4) by 8 columns, two
 * chunks a row: rows 2 chunks apart keep those 32 loads on 32 banks. */
inline uint mma_swizzle(uint r, uint c, uint cpr)
{
#if DTYPE_F32
    if (cpr >= 8)
        return c ^ ((r % 4) * 2 + (r / 4) % 2);
#endif
    return cpr >= 8 ? c ^ (r % 8) : c ^ ((r / (8 / cpr)) % cpr);
}

/* 16 bytes from SRC to DST, asynchronously; the first SRC_BYTES of them
 * read (16 or 0), the rest zero. Through L1 (.ca), faster than .cg for
 * these tiles. */
inline void mma_copy16(__local mma_local_t *dst,
                       const __global storage_t *src, uint src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"l"(dst),
                 "l"(src), "r"(src_bytes)
                 : "memory");
}

inline void mma_commit(void)
{
    asm volatile("cp.async.commit_group;" ::: "memory");
}

/* Starts the copies of a ROWS x COLS tile of P (LD elements a row), from
 * row ROW0 and column COL0, into DST (COLS a row, its 16-byte chunks
 * swizzled), by THREADS work-items of which this is TID: zero where the
 * row reaches ROWS_OK or the chunk COLS_OK. COLS is a power of two of
 * MMA_CHUNK or more; ROWS, COLS and THREADS are constants of the plan. */
inline void mma_copy_tile(__local mma_local_t *dst,
                          const __global storage_t *p,
                          const uint ld, const uint row0, const uint rows,
                          const uint rows_ok, const uint col0,
                          const uint cols, const uint cols_ok,
                          const uint tid, const uint threads)
{
    const uint chunks = cols / MMA_CHUNK, step = threads / chunks;
    if (threads % chunks == 0 && step % 8 == 0 && rows % step == 0) {
        /* A work-item copies one column of chunks, every STEP-th row: one
         * address and one swizzle (STEP is a multiple of 8) for all of
         * them, and the bounds tested only in edge tiles. The general
         * loop below spends some 15 instructions a copy, which the
         * products wait for. */
        uint r = tid / chunks, c = tid % chunks;
        const __global storage_t *src =
            p + (size_t)(row0 + r) * ld + col0 + c * MMA_CHUNK;
        __local mma_local_t *to =
            dst + r * cols + mma_swizzle(r, c, chunks) * MMA_CHUNK;
        if (row0 + rows <= rows_ok && col0 + cols <= cols_ok) {
#pragma unroll
            for (uint j = 0; j < rows / step; j++) {
                mma_copy16(to + j * step * cols, src + (size_t)j * step * ld,
                           16);
            }
        } else {
            bool col_ok = col0 + c * MMA_CHUNK < cols_ok;
#pragma unroll
            for (uint j = 0; j < rows / step; j++) {
                bool ok = col_ok && row0 + r + j * step < rows_ok;
                mma_copy16(to + j * step * cols,
                           ok ? src + (size_t)j * step * ld : p, ok ? 16 : 0);
            }
        }
        return;
    }
    for (uint i = tid; i < rows * chunks; i += threads) {
        uint r = i / chunks, c = i % chunks;
        uint ok = row0 + r < rows_ok && col0 + c * MMA_CHUNK < cols_ok;
        const __global storage_t *src =
            ok ? p + (size_t)(row0 + r) * ld + col0 + c * MMA_CHUNK : p;
        mma_copy16(dst + r * cols + mma_swizzle(r, c, chunks) * MMA_CHUNK,
                   src, ok ? 16 : 0);
    }
}

/* The B fragments of two n8 tiles, 16 deep, from a k-major tile in local
 * memory: lane l gives the address of row l % 8 of matrix l / 8. */
inline void mma_trans_x4(__local mma_local_t *p, uint *b0, uint *b1, uint *b2,
                         uint *b3)
{
    uint r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
                 "{%0,%1,%2,%3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "l"(p));
    *b0 = r0;
    *b1 = r1;
    *b2 = r2;
    *b3 = r3;
}

/* The B fragments of two n8 tiles, 16 deep, from an n-major tile in
 * local memory (out_in's W and B, whose rows are the product's columns:
 * mma.sync's col-major B as it lies), no .trans; lane l gives the
 * address of row l % 8 of matrix l / 8: (n 0-7, k 0-7), (n 0-7, k 8-15),
 * (n 8-15, k 0-7), (n 8-15, k 8-15), so b0, b1 are tile 0's, b2, b3 tile
 * 1's, as mma_trans_x4 gives them from a k-major tile. */
inline void mma_x4(__local mma_local_t *p, uint *b0, uint *b1, uint *b2,
                   uint *b3)
{
    uint r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
                 "{%0,%1,%2,%3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "l"(p));
    *b0 = r0;
    *b1 = r1;
    *b2 = r2;
    *b3 = r3;
}

#if !DTYPE_F32
/* D += A*B, one m16n8k16 product with float accumulators. */
inline void mma_product(float d[4], const uint a[4], uint b0, uint b1)
{
    asm(MMA_SHAPE " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                  "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
#endif
