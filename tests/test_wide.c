/* test_wide.c - the wide device sweep (--wide, make test-wide): the row
 * ops over D = 1 .. 200000 (hidden sizes and vocabularies of common
 * models, and sizes beside powers of two), and lora_forward with K and N
 * that divide no tile, ranks 1 .. 128, base and accumulate on and off,
 * over rows 1, 2, the decode threshold +-1, the tile +-1 and thousands.
 * Each kernel is checked on the OpenCL device against the naive kernel
 * and the float64 reference (numeric_util.c), with the knobs the op picks
 * for that device (spec_set_target, as bench and tune do), since the
 * point is to check what would ship on it.
 *
 * Meant for a GPU (SPECL_DEVICE=P:D). Inputs and the float64 reference
 * are made on one host core, a case up to WIDE_ELEMS elements or WIDE_MACS
 * multiply-adds: about 8e9 row-op elements and 2.5e11 lora multiply-adds
 * in all, half an hour or so of host time on a GPU machine, and on a CPU
 * device (PoCL, 2 cores) about an hour. Without --wide the suite is not
 * added, so `make test` does not pay for it. For a trimmed run,
 * $SPECL_WIDE_BUDGET scales both budgets (e.g. 0.001). $SPECL_WIDE_PART=K/N
 * builds only the kernels whose index is K modulo N: N processes with
 * K = 0 .. N-1 run the whole sweep between them, on as many host cores.
 * $SPECL_TEST_VERBOSE=1 prints a line per build and case, as in the other
 * device suites. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>

#include "numeric_util.h"
#include "suites.h"

/* Elements of a row-op case (rows x D): drawing the inputs, the float64
 * reference and the comparisons take about 100 ns of one host core per
 * element (so up to half a minute a case), and the copies a case keeps
 * about 32 bytes each. Rows of 200000 still get 1250 rows. */
#define WIDE_ELEMS 2.5e8
/* Multiply-adds of a lora case's float64 reference (one host thread). */
#define WIDE_MACS 3e9
/* The most rows a case asks for, when the budget allows. */
#define WIDE_MAX_ROWS 4096
#define MAX_WANT 12

static double budget_scale = 1.0; /* $SPECL_WIDE_BUDGET */
static long part = 0, parts = 1;  /* $SPECL_WIDE_PART */
static long kernel_counter;       /* for `part` */

/* Whether the next kernel of a list is this part's ($SPECL_WIDE_PART). */
static int take_kernel(void)
{
    return kernel_counter++ % parts == part;
}

/* Runs K over the distinct row counts >= 1 of WANT (N of them) whose cost
 * (COST_PER_ROW each) stays within BUDGET; 1 row always. */
static void run_within(struct nu_kernel *k, const long *want, int n_want,
                      double cost_per_row, double budget)
{
    size_t rows[MAX_WANT];
    int n = 0;
    for (int i = 0; i < n_want && i < MAX_WANT; i++) {
        if (want[i] == 1 || (double)want[i] * cost_per_row <= budget) {
            n = nu_rows_add(rows, n, want[i]);
        }
    }
    nu_run_rows(k, rows, n, nu_unit());
}

/* The most rows within BUDGET at COST_PER_ROW, up to WIDE_MAX_ROWS: the
 * "thousands" case, fewer rows for very long ones. */
static long most_rows(double cost_per_row, double budget)
{
    double r = budget / (cost_per_row > 1 ? cost_per_row : 1);
    return r >= WIDE_MAX_ROWS ? WIDE_MAX_ROWS : r < 1 ? 1 : (long)r;
}

/* Reads TEXT (one kernel) into K and gives it the knobs the op picks for
 * the open device. Returns 1 when both succeeded; a rejection fails the
 * test (every spec here is valid). The YAML printed on a failure says
 * which defaults were taken (`specl gen --target cpu` for a CPU). */
static int wide_spec(struct nu_kernel *k, const char *text)
{
    struct diags d = {.out = stderr};
    if (!nu_spec_ok(k, "%s# knobs: the op defaults for a %s\n", text,
                    nu_rt()->target == TARGET_CPU ? "CPU" : "GPU")) {
        return 0;
    }
    if (spec_set_target(&k->set, nu_rt()->target, &d) != 0) {
        fprintf(stderr, "\nFAIL: the device's op defaults are invalid "
                "for:\n%s", k->yaml);
        CU_FAIL("op defaults for the device rejected");
        return 0;
    }
    return 1;
}

/* ---- row ops ----------------------------------------------------------- */

static const char *const row_ops[] = {"softmax", "rmsnorm", "layernorm"};
#define SOFTMAX_F16_MAX_D 65536

/* Hidden sizes (2048 .. 8192) and vocabularies (32000: Llama 2, 50257:
 * GPT-2, 128256: Llama 3, 151936: Qwen 2), odd and tiny rows, sizes beside
 * powers of two, and the largest; in increasing order. */
static const long row_d[] = {
    1,    2,     3,     7,     31,    33,     255,    257,    1000,
    1023, 1025,  2048,  2560,  3072,  3584,   4096,   4097,   5120,
    8192, 32000, 50257, 65536, 65537, 100000, 128256, 151936, 200000,
};
#define N_ROW_D (int)(sizeof row_d / sizeof row_d[0])

/* The largest `features` OP accepts (its field table); 0 if none. */
static long max_features(const char *op)
{
    const struct op_def *def = op_find(op);
    int i = def != NULL ? op_field_index(def, "features") : -1;
    return i < 0 ? 0 : (long)def->fields[i].max;
}

/* Builds OP over D features in dtype DT and runs it over 1, 2, its tile
 * (the `rows` knob) +-1 and as many rows as the budget allows, up to
 * WIDE_MAX_ROWS. Returns 1 when it was built. */
static int wide_row(const char *op, long d, const char *dt)
{
    struct nu_kernel k;
    char text[256];
    int built = 0;
    snprintf(text, sizeof text, "kernels:\n  - {name: wide_%s, op: %s, "
             "dtype: %s, features: %ld}\n", op, op, dt, d);
    if (wide_spec(&k, text) && nu_build(&k)) {
        /* A row op is a few passes over rows x D elements: budget by
         * elements. */
        double budget = WIDE_ELEMS * budget_scale;
        long t = nu_knob(&k, "rows");
        long want[] = {1, 2, t - 1, t, t + 1, most_rows((double)d, budget)};
        run_within(&k, want, (int)(sizeof want / sizeof want[0]),
                   (double)d, budget);
        built = 1;
    }
    nu_kernel_free(&k);
    return built;
}

static void test_rows(void)
{
    long cases_before = nu_stats.cases;
    int kernels = 0;
    for (int o = 0; o < 3; o++) {
        long top = max_features(row_ops[o]);
        CU_ASSERT(top >= 1);
        for (int i = 0; i < N_ROW_D && top >= 1; i++) {
            /* Should an op accept less than the list's largest, its
             * largest D stands in for the rest. */
            long d = row_d[i] < top ? row_d[i] : top;
            /* f32 always; f16 or bf16 as well on every third D, shifted
             * per op so that each dtype meets short, long and huge rows. */
            int h = (i + o) % 6;
            const char *dts[] = {"f32", h == 2 ? "f16" : h == 5 ? "bf16"
                                                             : NULL};
            /* Softmax outputs are about 1/D: past D = 65536 most are f16
             * subnormals, whose rounding alone (a relative L2 error of
             * 0.0019 at D = 128256, 0.0030 at 200000) reaches the op's
             * f16 bound of 0.002 whatever the kernel does. bf16 there. */
            if (o == 0 && h == 2 && d > SOFTMAX_F16_MAX_D) {
                dts[1] = "bf16";
            }
            for (int t = 0; t < 2 && dts[t] != NULL; t++) {
                if (take_kernel()) {
                    kernels += wide_row(row_ops[o], d, dts[t]);
                }
            }
            if (d == top) {
                break;
            }
        }
    }
    fprintf(stderr, "\n  row ops: %d kernels built, %ld cases run ", kernels,
            nu_stats.cases - cases_before);
    CU_ASSERT(nu_stats.cases > cases_before);
}

/* ---- lora_forward ------------------------------------------------------ */

/* 1000, 4000 and 11000 divide no tile; 4096 divides the default ones. */
static const long lora_kn[] = {1000, 4000, 11000, 4096};
#define N_LORA_KN 4
static const long ranks[] = {1, 2, 4, 8, 16, 32, 64, 128};
#define N_RANKS 8

/* Multiply-adds of the float64 reference per row (as lora_reference). */
static double lora_macs(long K, long N, long R, int base)
{
    return (base ? (double)K * (double)N : 0) + (double)R * (double)(K + N);
}

/* Builds one lora kernel and runs it over 1, 2, its decode threshold +-1,
 * its tile m +-1, 2048, 4096 and the most rows within the budget (those
 * the budget allows, 1 always). Returns 1 when it was built. */
static int wide_lora(long K, long N, long R, int base, int accumulate,
                     const char *dt)
{
    struct nu_kernel k;
    char text[320];
    int built = 0;
    snprintf(text, sizeof text,
             "kernels:\n  - {name: wide_lora, op: lora_forward, dtype: %s, "
             "in_features: %ld, out_features: %ld, rank: %ld, alpha: %ld, "
             "base: %s, accumulate: %s}\n",
             dt, K, N, R, 2 * R, base ? "true" : "false",
             accumulate ? "true" : "false");
    if (wide_spec(&k, text) && nu_build(&k)) {
        double budget = WIDE_MACS * budget_scale;
        double macs = lora_macs(K, N, R, base);
        long m = nu_knob(&k, "m");
        long dec = nu_small_path_rows(&k); /* 0: no decode path */
        long want[] = {1,     2,     dec - 1, dec, dec + 1, m - 1,
                       m + 1, 2048,  4096,    most_rows(macs, budget)};
        run_within(&k, want, (int)(sizeof want / sizeof want[0]), macs,
                   budget);
        built = 1;
    }
    nu_kernel_free(&k);
    return built;
}

/* K x N crossed, each with base and accumulate in all four combinations;
 * the rank cycles so that every rank meets every combination twice, and
 * about one kernel in five stores f16 or bf16. */
static void test_lora(void)
{
    long cases_before = nu_stats.cases;
    int kernels = 0;
    for (int i = 0; i < N_LORA_KN * N_LORA_KN; i++) {
        long K = lora_kn[i / N_LORA_KN], N = lora_kn[i % N_LORA_KN];
        for (int o = 0; o < 4; o++) {
            int n = i * 4 + o;
            /* 11 is prime to 4: the half-width ones meet every option. */
            const char *dt = n % 11 == 5 ? "f16" : n % 11 == 10 ? "bf16"
                                                                : "f32";
            if (take_kernel()) {
                kernels += wide_lora(K, N, ranks[(i + 3 * o) % N_RANKS],
                                     !(o & 1), o >> 1, dt);
            }
        }
    }
    fprintf(stderr, "\n  lora: %d kernels built, %ld cases run ", kernels,
            nu_stats.cases - cases_before);
    CU_ASSERT(nu_stats.cases > cases_before);
}

/* ---- suite ------------------------------------------------------------- */

/* Reads the trimming variables (see the top of the file). */
static void read_trim(void)
{
    const char *s = getenv("SPECL_WIDE_BUDGET");
    budget_scale = 1.0;
    part = 0;
    parts = 1;
    kernel_counter = 0;
    if (s != NULL && *s) {
        char *end;
        double v = strtod(s, &end);
        if (*end == '\0' && v > 0) {
            budget_scale = v;
        } else {
            fprintf(stderr, "wide: ignoring SPECL_WIDE_BUDGET=%s (want a "
                    "number > 0)\n", s);
        }
    }
    s = getenv("SPECL_WIDE_PART");
    if (s != NULL && *s) {
        long k = -1, n = 0;
        char tail = 0;
        if (sscanf(s, "%ld/%ld%c", &k, &n, &tail) == 2 && n >= 1 && k >= 0 &&
            k < n) {
            part = k;
            parts = n;
        } else {
            fprintf(stderr, "wide: ignoring SPECL_WIDE_PART=%s (want K/N, "
                    "0 <= K < N)\n", s);
        }
    }
    if (budget_scale != 1.0 || parts != 1) {
        fprintf(stderr, "wide: trimmed: budgets x %g, kernels %ld modulo "
                "%ld\n", budget_scale, part, parts);
    }
}

static int suite_init(void)
{
    read_trim();
    return nu_open("wide");
}

static int suite_cleanup(void)
{
    return nu_close();
}

int add_wide_suite(void)
{
    /* Long, longer on a CPU device: only with --wide (make test-wide). */
    if (!test_wide) {
        return 0;
    }
    CU_pSuite s = CU_add_suite("wide", suite_init, suite_cleanup);
    if (s == NULL ||
        CU_add_test(s, "row ops: D 1 .. 200000, rows to thousands",
                    test_rows) == NULL ||
        CU_add_test(s, "lora: uneven K and N, ranks 1 .. 128, options",
                    test_lora) == NULL) {
        return -1;
    }
    return 0;
}
