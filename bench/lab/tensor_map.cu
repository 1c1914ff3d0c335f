/* tensor_map.cu - lab: the 128 bytes of a 2-D bf16 tensor map with a
 * 128-byte swizzle, as the CUDA driver encodes it, printed as 16 words
 * in hex for bench/lab/ws_gemm.c (which sets word 0, the address).
 * Usage: tensor_map INNER OUTER ROW_BYTES BOX_INNER BOX_OUTER; with no
 * arguments, maps of varied fields one a line, to read the layout off;
 * with the argument 3d, maps of three dimensions the same way.
 * Build on the device: nvcc -o tensor_map bench/lab/tensor_map.cu -lcuda */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_map(const char *what, unsigned long long d0, unsigned long long d1, unsigned long long row,
                      unsigned b0, unsigned b1, CUtensorMapDataType type, CUtensorMapSwizzle swizzle,
                      CUtensorMapL2promotion l2)
{
    CUtensorMap m;
    memset(&m, 0, sizeof m);
    const cuuint64_t dims[2] = {d0, d1}, strides[1] = {row};
    const cuuint32_t box[2] = {b0, b1}, ones[2] = {1, 1};
    CUresult r = cuTensorMapEncodeTiled(&m, type, 2, (void *)0x7f0000000000ULL, dims, strides, box, ones,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, l2,
                                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (what != NULL)
        printf("%-14s rc %d:", what, (int)r);
    const unsigned long long *w = (const unsigned long long *)&m;
    for (int i = 0; i < 16; i++)
        printf(" %016llx", w[i]);
    printf("\n");
    if (r != CUDA_SUCCESS)
        exit(1);
}

static void print_map3(const char *what, unsigned long long d0, unsigned long long d1,
                       unsigned long long d2, unsigned long long s1, unsigned long long s2,
                       unsigned b0, unsigned b1, unsigned b2)
{
    CUtensorMap m;
    memset(&m, 0, sizeof m);
    const cuuint64_t dims[3] = {d0, d1, d2}, strides[2] = {s1, s2};
    const cuuint32_t box[3] = {b0, b1, b2}, ones[3] = {1, 1, 1};
    CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3,
                                        (void *)0x7f0000000000ULL, dims, strides, box, ones,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    printf("%-14s rc %d:", what, (int)r);
    const unsigned long long *w = (const unsigned long long *)&m;
    for (int i = 0; i < 16; i++)
        printf(" %016llx", w[i]);
    printf("\n");
}

static void maps_3d(void)
{
    /* K of [batch][seq][heads][head]: heads x head, seq, batch */
    print_map3("base", 1024, 4096, 4, 2048, 2048ULL * 4096, 64, 128, 1);
    print_map3("d0 512", 512, 4096, 4, 2048, 2048ULL * 4096, 64, 128, 1);
    print_map3("d1 1000", 1024, 1000, 4, 2048, 2048ULL * 4096, 64, 128, 1);
    print_map3("d2 7", 1024, 4096, 7, 2048, 2048ULL * 4096, 64, 128, 1);
    print_map3("s1 4096", 1024, 4096, 4, 4096, 4096ULL * 4096, 64, 128, 1);
    print_map3("s2 2^30", 1024, 4096, 4, 2048, 1ULL << 30, 64, 128, 1);
    print_map3("s2 2^36", 1024, 4096, 4, 2048, 1ULL << 36, 64, 128, 1);
    print_map3("s2 2^36+2^35", 1024, 4096, 4, 2048, 3ULL << 35, 64, 128, 1);
    print_map3("s2 2^37", 1024, 4096, 4, 2048, 1ULL << 37, 64, 128, 1);
    print_map3("s2 2^39+2^4", 1024, 4096, 4, 2048, (1ULL << 39) + 16, 64, 128, 1);
    print_map3("s1 2^36", 1024, 4, 4, 1ULL << 36, 1ULL << 38, 64, 128, 1);
    print_map3("box1 64", 1024, 4096, 4, 2048, 2048ULL * 4096, 64, 64, 1);
    print_map3("box2 2", 1024, 4096, 4, 2048, 2048ULL * 4096, 64, 128, 2);
    print_map3("box0 32", 1024, 4096, 4, 2048, 2048ULL * 4096, 32, 128, 1);
}

int main(int argc, char **argv)
{
    cudaFree(0); /* a current context, which the encoding wants */
    const CUtensorMapDataType bf16 = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    const CUtensorMapSwizzle s128 = CU_TENSOR_MAP_SWIZZLE_128B;
    const CUtensorMapL2promotion l256 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    if (argc == 2 && strcmp(argv[1], "3d") == 0) {
        maps_3d();
        return 0;
    }
    if (argc == 6) {
        print_map(NULL, strtoull(argv[1], 0, 10), strtoull(argv[2], 0, 10), strtoull(argv[3], 0, 10),
                  (unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]), bf16, s128, l256);
        return 0;
    }
    print_map("base", 4096, 4096, 8192, 64, 128, bf16, s128, l256);
    print_map("d0 4095", 4095, 4096, 8192, 64, 128, bf16, s128, l256);
    print_map("d0 1", 1, 4096, 8192, 64, 128, bf16, s128, l256);
    print_map("d0 2^20", 1 << 20, 4096, 1 << 21, 64, 128, bf16, s128, l256);
    print_map("d1 1000", 4096, 1000, 8192, 64, 128, bf16, s128, l256);
    print_map("row 8208", 4096, 4096, 8208, 64, 128, bf16, s128, l256);
    print_map("row 16", 8, 4096, 16, 8, 128, bf16, s128, l256);
    print_map("row 2^33", 4096, 4096, 1ULL << 33, 64, 128, bf16, s128, l256);
    print_map("box0 32", 4096, 4096, 8192, 32, 128, bf16, s128, l256);
    print_map("box0 8", 4096, 4096, 8192, 8, 128, bf16, s128, l256);
    print_map("box1 64", 4096, 4096, 8192, 64, 64, bf16, s128, l256);
    print_map("box1 1", 4096, 4096, 8192, 64, 1, bf16, s128, l256);
    print_map("box1 256", 4096, 4096, 8192, 64, 256, bf16, s128, l256);
    print_map("swizzle none", 4096, 4096, 8192, 64, 128, bf16, CU_TENSOR_MAP_SWIZZLE_NONE, l256);
    print_map("swizzle 64", 4096, 4096, 8192, 32, 128, bf16, CU_TENSOR_MAP_SWIZZLE_64B, l256);
    print_map("f16", 4096, 4096, 8192, 64, 128, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, s128, l256);
    print_map("u16", 4096, 4096, 8192, 64, 128, CU_TENSOR_MAP_DATA_TYPE_UINT16, s128, l256);
    print_map("f32", 2048, 4096, 8192, 32, 128, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, s128, l256);
    print_map("l2 none", 4096, 4096, 8192, 64, 128, bf16, s128, CU_TENSOR_MAP_L2_PROMOTION_NONE);
    print_map("l2 128", 4096, 4096, 8192, 64, 128, bf16, s128, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
    return 0;
}
