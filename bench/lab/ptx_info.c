/* ptx_info: the sm_90a PTX of an emitted kernel file, as NAME.c makes it
 * for wgmma variants, so that ptxas can report its registers and spills.
 *
 *   cc -O2 -o ptx_info bench/lab/ptx_info.c -lOpenCL
 *   ./ptx_info out/NAME.cl > NAME.ptx
 *   ptxas -arch=sm_90a -v NAME.ptx -o /dev/null
 *
 * Builds FILE.cl on the first GPU with -cl-std=CL1.2, takes the program
 * binary (PTX on NVIDIA's driver), deletes the "trap; //@sm_90a " marks
 * and renames the target sm_90 to sm_90a (templates/stub_sm90a.c.in). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    if (s != NULL && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s != NULL) {
        s[n] = '\0';
    }
    fclose(f);
    return s;
}

int main(int argc, char **argv)
{
    static const char mark[] = "trap; //@sm_90a ";
    static char log[1 << 16];
    cl_platform_id pl;
    cl_device_id dev;
    cl_int err;
    if (argc != 2) {
        fprintf(stderr, "usage: ptx_info FILE.cl > FILE.ptx\n");
        return 2;
    }
    char *src = slurp(argv[1]);
    if (src == NULL) {
        fprintf(stderr, "ptx_info: cannot read %s\n", argv[1]);
        return 1;
    }
    if (clGetPlatformIDs(1, &pl, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(pl, CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS) {
        fprintf(stderr, "ptx_info: no GPU\n");
        return 1;
    }
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_program p = clCreateProgramWithSource(ctx, 1, (const char **)&src,
                                             NULL, &err);
    err = clBuildProgram(p, 1, &dev, "-cl-std=CL1.2", NULL, NULL);
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log,
                          NULL);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "ptx_info: %s: build %d\n%s\n", argv[1], err, log);
        return 1;
    }
    size_t size = 0;
    clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
    unsigned char *bin = malloc(size + 1);
    clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
    bin[size] = '\0';
    const char *text = (const char *)bin;
    const char *target = strstr(text, ".target sm_90");
    for (const char *c = text; *c != '\0';) {
        if (strncmp(c, mark, sizeof mark - 1) == 0) {
            c += sizeof mark - 1;
            continue;
        }
        putchar(*c);
        if (target != NULL && c == target + strlen(".target sm_90") - 1) {
            putchar('a');
        }
        c++;
    }
    free(bin);
    free(src);
    clReleaseProgram(p);
    clReleaseContext(ctx);
    return 0;
}
