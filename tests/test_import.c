/* test_import.c - `specl import`: the config.json of five published models
 * (the .json files of tests/models) read into specs whose kernels carry
 * their widths, heads, eps, theta, scaling and activation; bad configs
 * (tests/models/bad) with the messages of their .err files; the command
 * line; the fuzz target's crashers (tests/fuzz/import-regressions)
 * replayed; and (joined to the numeric suite) an imported spec's kernels
 * built and checked on the device. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_import.h"
#include "import.h"
#include "json_syntax.h"
#include "numeric_util.h"
#include "spec.h"
#include "suites.h"
#include "testutil.h"

#define MODELS "tests/models"
#define ALL_TARGETS ((1u << N_TARGET_PROJ) - 1)

/* What a model's spec must hold. */
struct expect {
    const char *file, *prefix;
    long hidden, inter, heads, kv_heads, head_dim, vocab;
    double eps, theta;
    const char *act;            /* swiglu's activation */
    int scaling;                /* rope's scaling.type index: 0 none,
                                   2 llama3 */
    long window;                /* of the attention comment; 0: none */
    double attn_softcap, final_softcap;
    const char *fused;          /* phi3: the fused qkv module, else NULL */
};

static const struct expect models[] = {
    {"qwen2.5-0.5b.json", "qwen2", 896, 4864, 14, 2, 64, 151936, 1e-6, 1e6,
     "silu", 0, 0, 0, 0, NULL},
    {"llama-3.2-1b.json", "llama", 2048, 8192, 32, 8, 64, 128256, 1e-5, 5e5,
     "silu", 2, 0, 0, 0, NULL},
    {"phi-3-mini-4k-instruct.json", "phi3", 3072, 8192, 32, 32, 96, 32064,
     1e-5, 1e4, "silu", 0, 2047, 0, 0, "qkv_proj"},
    {"gemma-2-2b.json", "gemma2", 2304, 9216, 8, 4, 256, 256000, 1e-6, 1e4,
     "gelu_tanh", 0, 4096, 50, 30, NULL},
    {"mistral-7b-v0.1.json", "mistral", 4096, 14336, 32, 8, 128, 32000,
     1e-5, 1e4, "silu", 0, 4096, 0, 0, NULL},
    {"qwen3-0.6b.json", "qwen3", 1024, 3072, 16, 8, 128, 151936, 1e-6, 1e6,
     "silu", 0, 0, 0, 0, NULL},
    {"gemma-3-1b.json", "gemma3_text", 1152, 6912, 4, 1, 256, 262144, 1e-6,
     1e6, "gelu_tanh", 0, 512, 0, 0, NULL},
};

/* Gemma 3's rope: a kernel (pair) for its sliding-window layers, at
 * rope_local_base_freq, and one for its global layers, at rope_theta. */
static int gemma3(const struct expect *e)
{
    return strcmp(e->prefix, "gemma3_text") == 0;
}

/* The name of E's rope kernel of q (of the global layers for Gemma 3),
 * with SUFFIX ("", "_inverse"). */
static const char *rope_q_name(const struct expect *e, const char *suffix,
                               char *buf, size_t size)
{
    snprintf(buf, size, "%s%s%s", e->heads == e->kv_heads ? "rope" : "rope_q",
             gemma3(e) ? "_global" : "", suffix);
    return buf;
}

/* E's attention kernel of the sliding-window layers, where they differ
 * from the rest, with SUFFIX. */
static const char *attention_name(const struct expect *e, const char *suffix,
                                  char *buf, size_t size)
{
    int apart = e->window && (!strcmp(e->prefix, "gemma2") || gemma3(e));
    snprintf(buf, size, "%s%s", apart ? "attention_local" : "attention",
             suffix);
    return buf;
}

/* Imports the config at PATH with O (rank 16, alpha 32, bf16 and
 * TARGETS) into the spec TEXT and reads it back into SET; 1 when both
 * went through. */
static int import_into(const char *path, unsigned targets, int train,
                       struct buf *text, struct spec_set *set)
{
    struct model m;
    struct diags d = {.out = stderr};
    struct import_options o = {16, 32, DTYPE_BF16, targets, train, NULL,
                               path};
    int written, left_out;
    buf_init(text);
    spec_set_init(set);
    if (import_read_config(path, &m, &d) != 0 ||
        import_write_spec(&m, &o, text, &written, &left_out, NULL) != 0) {
        return 0;
    }
    TU_CHECK(written == 0 || spec_read_buffer(set, path,
                                              (const unsigned char *)
                                                  buf_str(text),
                                              text->len, &d) == 0,
             "%s: the imported spec does not read back:\n%s", path,
             buf_str(text));
    TU_CHECK(set->n_kernel == written, "%s: %d kernels read, %d written",
             path, set->n_kernel, written);
    return set->n_kernel == written && d.count == 0;
}

static const struct kernel_spec *find(const struct spec_set *s,
                                      const char *prefix, const char *suffix)
{
    char name[SPECL_NAME_MAX];
    snprintf(name, sizeof name, "%s_%s", prefix, suffix);
    for (int i = 0; i < s->n_kernel; i++) {
        if (strcmp(s->kernel[i].name, name) == 0) {
            return &s->kernel[i];
        }
    }
    TU_CHECK(0, "no kernel %s", name);
    return NULL;
}

/* KS's field KEY, or -1 when KS is NULL. */
static double fld(const struct kernel_spec *ks, const char *key)
{
    return ks != NULL ? spec_field(ks, key) : -1;
}

static int choice_is(const struct kernel_spec *ks, const char *key,
                     const char *name)
{
    if (ks == NULL) {
        return 0;
    }
    const struct param_def *def = &ks->op->fields[op_field_index(ks->op,
                                                                 key)];
    return strcmp(def->choices[(int)spec_field(ks, key)], name) == 0;
}

static void check_lora(const struct expect *e, const struct spec_set *s,
                       const char *suffix, const char *op, long in, long out)
{
    const struct kernel_spec *k = find(s, e->prefix, suffix);
    TU_CHECK(k && strcmp(k->op->name, op) == 0 && fld(k, "in_features") ==
                 in && fld(k, "out_features") == out && fld(k, "rank") ==
                 16 && fld(k, "alpha") == 32 && k->dtype == DTYPE_BF16,
             "%s %s: %s %ld -> %ld, rank 16, alpha 32, bf16", e->file,
             suffix, op, in, out);
}

/* The forward kernels of E's spec S. */
static void check_forward(const struct expect *e, const struct spec_set *s)
{
    long q = e->heads * e->head_dim, kv = e->kv_heads * e->head_dim;
    if (e->fused != NULL) {
        check_lora(e, s, "qkv_proj", "lora_forward", e->hidden, q + 2 * kv);
        check_lora(e, s, "gate_up_proj", "lora_forward", e->hidden,
                   2 * e->inter);
    } else {
        check_lora(e, s, "q_proj", "lora_forward", e->hidden, q);
        check_lora(e, s, "k_proj", "lora_forward", e->hidden, kv);
        check_lora(e, s, "gate_proj", "lora_forward", e->hidden, e->inter);
    }
    /* o_proj shares q_proj's kernel where the shapes agree. */
    check_lora(e, s, q == e->hidden && !e->fused ? "q_proj" : "o_proj",
               "lora_forward", q, e->hidden);
    check_lora(e, s, "down_proj", "lora_forward", e->inter, e->hidden);
    const char *norms[] = {"rmsnorm", "add_rmsnorm"};
    for (int i = 0; i < 2; i++) {
        const struct kernel_spec *k = find(s, e->prefix, norms[i]);
        TU_CHECK(fld(k, "features") == e->hidden && fld(k, "eps") == e->eps,
                 "%s %s: features %ld, eps %g", e->file, norms[i], e->hidden,
                 e->eps);
    }
    char name[64];
    const char *rope = rope_q_name(e, "", name, sizeof name);
    const struct kernel_spec *k = find(s, e->prefix, rope);
    TU_CHECK(fld(k, "heads") == e->heads && fld(k, "head_dim") ==
                 e->head_dim && fld(k, "theta") == e->theta &&
                 fld(k, "scaling.type") == e->scaling,
             "%s %s: %ld heads of %ld, theta %g, scaling %d", e->file, rope,
             e->heads, e->head_dim, e->theta, e->scaling);
    if (e->heads != e->kv_heads) {
        k = find(s, e->prefix, gemma3(e) ? "rope_k_global" : "rope_k");
        TU_CHECK(fld(k, "heads") == e->kv_heads, "%s rope_k: %ld heads",
                 e->file, e->kv_heads);
    }
    if (gemma3(e)) {
        k = find(s, e->prefix, "rope_q_local");
        TU_CHECK(fld(k, "theta") == 10000 && fld(k, "scaling.type") == 0 &&
                     fld(k, "heads") == e->heads,
                 "%s rope_q_local: theta 10000, unscaled", e->file);
        k = find(s, e->prefix, "attention_global");
        TU_CHECK(fld(k, "window") == 0 && fld(k, "heads") == e->heads,
                 "%s attention_global: no window", e->file);
    }
    k = find(s, e->prefix, "swiglu");
    TU_CHECK(fld(k, "features") == e->inter &&
                 choice_is(k, "activation", e->act),
             "%s swiglu: %ld features, %s", e->file, e->inter, e->act);
}

static void check_llama3(const struct spec_set *s)
{
    const struct kernel_spec *k = find(s, "llama", "rope_k");
    TU_CHECK(fld(k, "scaling.factor") == 32 &&
                 fld(k, "scaling.low_freq_factor") == 1 &&
                 fld(k, "scaling.high_freq_factor") == 4 &&
                 fld(k, "scaling.original_max_position") == 8192,
             "llama rope_k: llama3 factor 32, low 1, high 4, 8192");
}

/* TEXT with its comment lines of a kernel joined: "\n  # " as " ". */
static char *unwrapped(const char *text)
{
    char *out = malloc(strlen(text) + 1), *o = out;
    for (const char *p = text; out != NULL && *p != '\0';) {
        if (strncmp(p, "\n  # ", 5) == 0) {
            *o++ = ' ';
            p += 5;
        } else {
            *o++ = *p++;
        }
    }
    if (out != NULL) {
        *o = '\0';
    }
    return out;
}

/* Attention and the loss: kernels where this specl has the ops, else
 * comments with their values. */
static void check_pending(const struct expect *e, const struct spec_set *s,
                          const char *wrapped)
{
    char want[256], name[64];
    char *text = unwrapped(wrapped);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    const char *att = attention_name(e, "", name, sizeof name);
    if (op_find("attention") != NULL) {
        const struct kernel_spec *k = find(s, e->prefix, att);
        TU_CHECK(fld(k, "heads") == e->heads && fld(k, "kv_heads") ==
                     e->kv_heads && fld(k, "head_dim") == e->head_dim,
                 "%s %s: heads", e->file, att);
    } else {
        snprintf(want, sizeof want, " %s_%s (attention): heads %ld, "
                 "kv_heads %ld, head_dim %ld, causal true%s", e->prefix,
                 att, e->heads, e->kv_heads, e->head_dim,
                 e->window ? ", window" : " (op not");
        TU_CHECK(strstr(text, want) != NULL, "%s: no '%s'", e->file, want);
        snprintf(want, sizeof want, "window %ld", e->window);
        TU_CHECK(!e->window || strstr(text, want), "%s: no '%s'", e->file,
                 want);
        snprintf(want, sizeof want, "softcap %g", e->attn_softcap);
        TU_CHECK(!e->attn_softcap || strstr(text, want), "%s: no '%s'",
                 e->file, want);
    }
    if (op_find("cross_entropy") == NULL) {
        snprintf(want, sizeof want, " %s_cross_entropy (cross_entropy): "
                 "vocab %ld", e->prefix, e->vocab);
        TU_CHECK(strstr(text, want) != NULL, "%s: no '%s'", e->file, want);
        snprintf(want, sizeof want, "vocab %ld, softcap %g", e->vocab,
                 e->final_softcap);
        TU_CHECK(!e->final_softcap || strstr(text, want), "%s: no '%s'",
                 e->file, want);
    }
    free(text);
}

/* The backward kernels of E's spec S (imported with --train). */
static void check_backward(const struct expect *e, const struct spec_set *s)
{
    long kv = e->kv_heads * e->head_dim;
    if (e->fused == NULL) {
        check_lora(e, s, "k_proj_backward", "lora_backward", e->hidden, kv);
    } else {
        check_lora(e, s, "qkv_proj_backward", "lora_backward", e->hidden,
                   e->heads * e->head_dim + 2 * kv);
    }
    check_lora(e, s, "down_proj_backward", "lora_backward", e->inter,
               e->hidden);
    const struct kernel_spec *k = find(s, e->prefix, "rmsnorm_backward");
    TU_CHECK(fld(k, "features") == e->hidden && fld(k, "eps") == e->eps,
             "%s rmsnorm_backward", e->file);
    k = find(s, e->prefix, "swiglu_backward");
    TU_CHECK(fld(k, "features") == e->inter &&
                 choice_is(k, "activation", e->act),
             "%s swiglu_backward", e->file);
    char name[64];
    k = find(s, e->prefix, rope_q_name(e, "_inverse", name, sizeof name));
    TU_CHECK(fld(k, "inverse") == 1 && fld(k, "theta") == e->theta,
             "%s rope inverse", e->file);
    /* attention's backward is a kernel, of the forward's fields. */
    const char *att = attention_name(e, "_backward", name, sizeof name);
    k = find(s, e->prefix, att);
    TU_CHECK(k != NULL && strcmp(k->op->name, "attention_backward") == 0 &&
                 fld(k, "heads") == e->heads &&
                 fld(k, "kv_heads") == e->kv_heads &&
                 fld(k, "head_dim") == e->head_dim && fld(k, "causal") == 1,
             "%s %s", e->file, att);
}

/* Qwen3's and Gemma 3's q_norm and k_norm: an rmsnorm over head_dim (and
 * with TRAIN its backward); no other family has them. */
static void check_qk_norm(const struct expect *e, const struct spec_set *s,
                          const char *text, int train)
{
    int has = strcmp(e->prefix, "qwen3") == 0 || gemma3(e);
    TU_CHECK((strstr(text, "_qk_norm\n") != NULL) == has,
             "%s: qk_norm kernel %s", e->file, has ? "missing" : "written");
    if (!has) {
        return;
    }
    const struct kernel_spec *k = find(s, e->prefix, "qk_norm");
    TU_CHECK(k != NULL && strcmp(k->op->name, "rmsnorm") == 0 &&
                 fld(k, "features") == e->head_dim && fld(k, "eps") == e->eps,
             "%s qk_norm: rmsnorm over %ld", e->file, e->head_dim);
    if (train) {
        k = find(s, e->prefix, "qk_norm_backward");
        TU_CHECK(k != NULL && strcmp(k->op->name, "rmsnorm_backward") == 0 &&
                     fld(k, "features") == e->head_dim,
                 "%s qk_norm_backward", e->file);
    }
}

static void test_import_models(void)
{
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        const struct expect *e = &models[i];
        char *path = tu_path(MODELS, e->file);
        for (int train = 0; train < 2; train++) {
            struct buf text;
            struct spec_set set;
            if (import_into(path, ALL_TARGETS, train, &text, &set)) {
                check_forward(e, &set);
                check_pending(e, &set, buf_str(&text));
                if (train) {
                    check_backward(e, &set);
                } else {
                    TU_CHECK(strstr(buf_str(&text), "backward\n") == NULL,
                             "%s: backward ops without --train", e->file);
                }
                if (strcmp(e->prefix, "llama") == 0) {
                    check_llama3(&set);
                }
                check_qk_norm(e, &set, buf_str(&text), train);
            }
            spec_set_free(&set);
            buf_free(&text);
        }
        free(path);
    }
}

/* One kernel per shape: q and o of Llama 3.2 1B share one (2048 x 2048),
 * its comment naming both; k and v another. */
static void test_import_shared_shapes(void)
{
    struct buf text;
    struct spec_set set;
    if (import_into(MODELS "/llama-3.2-1b.json", TARGET_BIT(T_Q) |
                    TARGET_BIT(T_K) | TARGET_BIT(T_V) | TARGET_BIT(T_O), 0,
                    &text, &set)) {
        int lora = 0;
        for (int i = 0; i < set.n_kernel; i++) {
            lora += strcmp(set.kernel[i].op->name, "lora_forward") == 0;
        }
        TU_CHECK(lora == 2, "%d lora kernels for q, k, v, o", lora);
        TU_CHECK(strstr(buf_str(&text), "# q_proj, o_proj: 2048 -> 2048\n") &&
                     strstr(buf_str(&text), "# k_proj, v_proj: 2048 -> 512\n"),
                 "the modules each kernel serves:\n%s", buf_str(&text));
    }
    spec_set_free(&set);
    buf_free(&text);
}

/* JSON that libyaml reads only with help: surrogate-pair escapes, "\/",
 * no blank after ':', tabs, exponents, empty objects and arrays. */
static void test_import_json(void)
{
    struct buf text;
    struct spec_set set;
    if (import_into(MODELS "/json-escapes.json", TARGET_BIT(T_Q), 0, &text,
                    &set)) {
        const struct kernel_spec *k = find(&set, "qwen2", "rmsnorm");
        TU_CHECK(fld(k, "eps") == 1e-6, "eps 1E-6");
    }
    spec_set_free(&set);
    buf_free(&text);
}

/* JSON's syntax, strictly: what libyaml would take as YAML flow is
 * refused at the line and column (in characters) of where it leaves
 * JSON; what JSON allows passes. */
static void test_json_syntax(void)
{
    static const struct {
        const char *text;
        const char *error; /* NULL: JSON */
    } cases[] = {
        {"\xEF\xBB\xBF {\"a\": [1, -0.5e+3, true, null, \"\\u00e9\\/\"], "
         "\"b\": {}}\n",
         NULL},
        {"[]", NULL},
        {"[1.5e400, -123456789012345678901234567890123456789012345678901234567"
         "8901234567890]",
         NULL},
        {"[1.]", "1:2: error: not JSON: expected a value (an object, array, "
                 "string, number, true, false or null), found '1.'"},
        {"model_type: llama\n", "1:1: error: not JSON: expected a value (an "
                                 "object, array, string, number, true, "
                                 "false or null), found 'model_type'"},
        {"{\"a\": 1,}", "1:8: error: not JSON: a comma before '}' (JSON has "
                        "no trailing comma)"},
        {"[1,\n 2 ,\n]", "2:4: error: not JSON: a comma before ']' (JSON has "
                         "no trailing comma)"},
        {"{\"\xC3\xA9\": 01}", "1:7: error: not JSON: expected a value (an "
                             "object, array, string, number, true, false "
                             "or null), found '01'"},
        {"{a: 1}", "1:2: error: not JSON: expected a key (a string in double "
                   "quotes), found 'a'"},
        {"{\"a\" 1}", "1:6: error: not JSON: expected ':' after the key, "
                     "found '1'"},
        {"{\"a\": 1 # c\n}", "1:9: error: not JSON: expected ',' or '}', "
                           "found '#'"},
        {"{\"a\": \"x\\q\"}", "1:9: error: not JSON: an escape JSON does not "
                           "have"},
        {"{\"a\": \"x\ty\"}", "1:9: error: not JSON: a control character"},
        {"{\"a\": \"x}", "1:7: error: not JSON: a string that does not end"},
        {"{} {}", "1:4: error: not JSON: expected the end of the file after "
                  "the value, found '{'"},
        {"", "1:1: error: not JSON: expected a value (an object, array, "
             "string, number, true, false or null), found the end of the "
             "file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *mem = NULL;
        size_t size = 0;
        struct diags d = {.out = open_memstream(&mem, &size)};
        CU_ASSERT_PTR_NOT_NULL_FATAL(d.out);
        int bad = json_syntax_check((const unsigned char *)cases[i].text,
                                    strlen(cases[i].text), "c.json", &d);
        fclose(d.out);
        const char *want = cases[i].error;
        TU_CHECK(want == NULL ? bad == 0 && mem[0] == '\0'
                              : bad == 1 && strncmp(mem, "c.json:", 7) == 0 &&
                                    strncmp(mem + 7, want, strlen(want)) == 0,
                 "case %zu: %d\n%s", i, bad, mem);
        free(mem);
    }
    /* Nesting past the limit: refused, not a deep recursion. */
    char deep[2 * 300 + 1];
    memset(deep, '[', 300);
    memset(deep + 300, ']', 300);
    deep[600] = '\0';
    struct diags quiet = {.out = NULL};
    TU_CHECK(json_syntax_check((const unsigned char *)deep, 600, "c.json",
                               &quiet) == 1 &&
                 strstr(quiet.first, "nested deeper than 256") != NULL,
             "300 nested arrays: %s", quiet.first);
}

/* `specl import BAD -o FILE`: exit 1, .err's messages and the summary on
 * stderr, FILE as it was (absent); and the same messages in process. */
static void test_import_bad(void)
{
    char **names;
    int n = tu_list(MODELS "/bad", ".json", &names);
    TU_CHECK(n >= 6, "only %d bad configs", n);
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    for (int i = 0; i < n; i++) {
        char *path = tu_path(MODELS "/bad", names[i]);
        char err_path[4200], log[4200], want[8192];
        snprintf(err_path, sizeof err_path, "%.*s.err",
                 (int)(strlen(path) - 5), path);
        snprintf(log, sizeof log, "%s/log", tmp);
        char *expected = tu_read(err_path, NULL);
        TU_CHECK(expected != NULL, "%s: no %s", path, err_path);
        int rc = tu_run("%s import '%s' -o '%s/out.yaml' >/dev/null 2>'%s'",
                        TU_SPECL, path, tmp, log);
        int errors = tu_count_lines(expected ? expected : "");
        snprintf(want, sizeof want, "%sspecl: %d error%s; nothing written\n",
                 expected ? expected : "", errors, errors == 1 ? "" : "s");
        char *got = tu_read(log, NULL);
        TU_CHECK(rc == 1 && got && strcmp(got, want) == 0,
                 "%s: exit %d\n--- expected\n%s--- got\n%s", path, rc, want,
                 got ? got : "");
        char *out = tu_path(tmp, "out.yaml");
        TU_CHECK(tu_read(out, NULL) == NULL, "%s: wrote the spec", path);
        /* In process: the same messages, counted. */
        char *mem = NULL;
        size_t size = 0;
        struct diags d = {.out = open_memstream(&mem, &size)};
        struct model m;
        int count = import_read_config(path, &m, &d);
        fclose(d.out);
        TU_CHECK(count == errors && expected && strcmp(mem, expected) == 0,
                 "%s in process: %d errors\n%s", path, count, mem);
        free(mem);
        free(out);
        free(got);
        free(expected);
        free(path);
    }
    tu_free_list(names, n);
    tu_rmtree(tmp);
    free(tmp);
}

/* A file as the importer's fuzz target takes it. */
static int import_input(const char *path, const char *data, size_t len)
{
    (void)path;
    return fuzz_import_input((const uint8_t *)data, len);
}

/* The fuzz target's crashers (each named after its bug), the bad configs
 * and the models through the target's checks: every spec written from a
 * config that reads reads back, and none of it crashes. */
static void test_import_fuzz_regressions(void)
{
    static const char what[] = "the importer",
                      replayer[] = "build/fuzz_import_replay";
    tu_replay_dir("tests/fuzz/import-regressions", ".json", import_input,
                  -1, what, replayer);
    TU_CHECK(tu_replay_dir(MODELS "/bad", ".json", import_input, 1, what,
                           replayer) >= 5,
             "fewer bad configs than expected in " MODELS "/bad");
    TU_CHECK(tu_replay_dir(MODELS, ".json", import_input, 0, what,
                           replayer) >= 6,
             "fewer configs than expected in " MODELS);
}

/* The command line: -o, stdout, check and gen of what it wrote, and
 * usage errors that write nothing. */
static void test_import_cli(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    const char *qwen = MODELS "/qwen2.5-0.5b.json";
    CU_ASSERT_EQUAL(tu_run("%s import %s --targets k,v -o %s/q.yaml "
                           ">/dev/null", TU_SPECL, qwen, tmp), 0);
    CU_ASSERT_EQUAL(tu_run("%s import %s --targets v,k > %s/stdout.yaml",
                           TU_SPECL, qwen, tmp), 0);
    char *a = tu_path(tmp, "q.yaml"), *b = tu_path(tmp, "stdout.yaml");
    char *ta = tu_read(a, NULL), *tb = tu_read(b, NULL);
    TU_CHECK(ta && tb && strcmp(ta, tb) == 0, "-o and stdout differ");
    CU_ASSERT_EQUAL(tu_run("%s check %s/q.yaml >/dev/null", TU_SPECL, tmp),
                    0);
    CU_ASSERT_EQUAL(tu_run("%s gen %s/q.yaml -o %s/out >/dev/null && "
                           "test -f %s/out/qwen2_k_proj.c && "
                           "test -f %s/out/qwen2_swiglu.cl",
                           TU_SPECL, tmp, tmp, tmp, tmp),
                    0);
    /* A rank past k_proj's 128 columns: exit 1, q.yaml as it was. */
    CU_ASSERT_EQUAL(tu_run("%s import %s --rank 200 -o %s/q.yaml "
                           "2>/dev/null", TU_SPECL, qwen, tmp), 1);
    char *again = tu_read(a, NULL);
    TU_CHECK(again && ta && strcmp(again, ta) == 0, "q.yaml was replaced");
    static const char *const usage[] = {
        "--targets q,x", "--targets ''", "--dtype f64", "--rank 0",
        "--prefix 9x", "", NULL};
    for (int i = 0; usage[i] != NULL; i++) {
        int rc = tu_run("%s import %s %s 2>/dev/null >/dev/null", TU_SPECL,
                        usage[i][0] ? qwen : "", usage[i]);
        TU_CHECK(rc == 2, "import %s: exit %d, not 2", usage[i], rc);
    }
    CU_ASSERT_EQUAL(tu_run("%s import %s --prefix m --train --dtype f32 "
                           "--rank 8 --alpha 8 | grep -q '^  - name: "
                           "m_k_proj_backward$'", TU_SPECL, qwen), 0);
    free(again);
    free(ta);
    free(tb);
    free(a);
    free(b);
    tu_rmtree(tmp);
    free(tmp);
}

/* A rope_scaling type rope does not take: no rope kernel, and the
 * summary says why in the words of the spec's comment. */
static void test_import_scaling_left_out(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    static const char why[] = "rope: no kernel: rope_scaling type \"yarn\" "
                              "is none that rope takes (linear, llama3)";
    char *spec = tu_path(tmp, "yarn.yaml"), *said = tu_path(tmp, "said");
    int rc = tu_run("sed 's/\"llama3\"/\"yarn\"/' " MODELS
                    "/llama-3.2-1b.json >'%s/yarn.json' && "
                    "%s import '%s/yarn.json' -o '%s' >'%s'",
                    tmp, TU_SPECL, tmp, spec, said);
    char *text = tu_read(said, NULL), *written = tu_read(spec, NULL);
    char want[512];
    snprintf(want, sizeof want, "wrote %s: 7 kernels, 1 left as a comment: "
             "%s\n", spec, why);
    TU_CHECK(rc == 0 && text != NULL && strcmp(text, want) == 0,
             "import of a yarn config: exit %d, said\n%s", rc,
             text ? text : "");
    TU_CHECK(written != NULL && strstr(written, "  # rope: no kernel: "
                                                "rope_scaling type \"yarn\" "
                                                "is none that rope takes "
                                                "(linear,\n") != NULL,
             "the spec's comment:\n%s", written ? written : "");
    free(text);
    free(written);
    free(spec);
    free(said);
    tu_rmtree(tmp);
    free(tmp);
}

/* A kernel its op rejects (rope at an odd head_dim) is written as a
 * comment that gives the op's reason, and said in the summary; the rest
 * of the spec is written. */
static void test_import_op_rejects(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    char *spec = tu_path(tmp, "odd.yaml"), *said = tu_path(tmp, "said");
    int rc = tu_run("%s import tests/fuzz/import-regressions/"
                    "rope-odd-head-dim.json -o '%s' >'%s'", TU_SPECL, spec,
                    said);
    char *text = tu_read(said, NULL), *written = tu_read(spec, NULL);
    char want[512];
    snprintf(want, sizeof want, "wrote %s: 8 kernels, 2 left as comments: "
             "gemma2_rope_q (rope): head_dim must be even (got 255); "
             "gemma2_rope_k (rope): head_dim must be even (got 255)\n",
             spec);
    TU_CHECK(rc == 0 && text != NULL && strcmp(text, want) == 0,
             "import at head_dim 255: exit %d, said\n%s", rc,
             text ? text : "");
    TU_CHECK(written != NULL &&
                 strstr(written, "  # gemma2_rope_k (rope): heads 4, "
                                 "head_dim 255, theta 10000 (head_dim must "
                                 "be\n  # even (got 255))\n") != NULL &&
                 strstr(written, "name: gemma2_attention\n") != NULL,
             "the spec:\n%s", written ? written : "");
    CU_ASSERT_EQUAL(tu_run("%s check '%s' >/dev/null", TU_SPECL, spec), 0);
    free(text);
    free(written);
    free(spec);
    free(said);
    tu_rmtree(tmp);
    free(tmp);
}

/* The note on biases: Qwen2's q, k and v always; other families' q, k,
 * v and o where attention_bias is true (Llama's, Qwen3's), none where it
 * is false or absent. */
static void test_import_bias_notes(void)
{
    static const char *const base =
        "{\"model_type\": \"%s\", \"hidden_size\": 64, "
        "\"intermediate_size\": 128, \"num_attention_heads\": 4, "
        "\"head_dim\": 16, \"vocab_size\": 100, \"rms_norm_eps\": "
        "1e-5%s}";
    static const struct {
        const char *family, *extra, *note; /* NULL: no note */
    } cases[] = {
        {"qwen2", "", "q_proj, k_proj and v_proj carry a bias"},
        {"llama", ", \"attention_bias\": true",
         "attention_bias: q_proj, k_proj, v_proj and o_proj carry a bias"},
        {"qwen3", ", \"attention_bias\": true",
         "attention_bias: q_proj, k_proj, v_proj and o_proj carry a bias"},
        {"llama", ", \"attention_bias\": false", NULL},
        {"qwen3", "", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char config[512];
        struct model m;
        struct diags d = {.out = stderr};
        struct import_options o = {8, 16, DTYPE_BF16, ALL_TARGETS, 0, NULL,
                                   "config.json"};
        struct buf text;
        int written, left;
        snprintf(config, sizeof config, base, cases[i].family,
                 cases[i].extra);
        buf_init(&text);
        int ok = import_read_config_text("config.json",
                                         (const unsigned char *)config,
                                         strlen(config), &m, &d) == 0 &&
                 import_write_spec(&m, &o, &text, &written, &left,
                                   NULL) == 0;
        char *flat = unwrapped(buf_str(&text));
        const char *bias = flat ? strstr(flat, "carry a bias") : NULL;
        TU_CHECK(ok && flat != NULL &&
                     (cases[i].note ? strstr(flat, cases[i].note) != NULL
                                    : bias == NULL),
                 "%s%s: %s\n%s", cases[i].family, cases[i].extra,
                 cases[i].note ? cases[i].note : "no note on biases",
                 buf_str(&text));
        free(flat);
        buf_free(&text);
    }
}

/* Whether NEEDLE starts in [FROM, TO). */
static int between(const char *from, const char *to, const char *needle)
{
    const char *at = strstr(from, needle);
    return at != NULL && at < to;
}

/* Gemma 3's layers by layer_types where the config has it (newer
 * transformers), by sliding_window_pattern where not (6 when absent);
 * an item of layer_types that names no kind is an error at it. */
static void test_import_gemma3_layers(void)
{
    static const char *const base =
        "{\"model_type\": \"gemma3_text\", \"hidden_size\": 64, "
        "\"intermediate_size\": 128, \"num_attention_heads\": 4, "
        "\"num_key_value_heads\": 1, \"head_dim\": 16, "
        "\"vocab_size\": 100, \"rms_norm_eps\": 1e-6, "
        "\"sliding_window\": 512%s}";
    static const struct {
        const char *extra, *local, *global; /* comments; NULL: an error */
    } cases[] = {
        {", \"layer_types\": [\"sliding_attention\", "
         "\"sliding_attention\", \"full_attention\"]",
         "# attention of the sliding_attention layers of layer_types (2)",
         "# attention of the full_attention layers of layer_types (1)"},
        {", \"sliding_window_pattern\": 4",
         "# attention of every layer but every 4th (sliding window)",
         "# attention of every 4th layer (global)"},
        {"", "# attention of every layer but every 6th (sliding window)",
         "# attention of every 6th layer (global)"},
        {",\n \"layer_types\": [\"full_attention\", \"bogus\"]", NULL,
         NULL},
        {", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 8}",
         "# attention of every layer but every 6th (sliding window)",
         "# attention of every 6th layer (global)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char config[640];
        struct model m;
        char *errs = NULL;
        size_t errs_len = 0;
        FILE *ef = open_memstream(&errs, &errs_len);
        struct diags d = {.out = ef};
        struct import_options o = {8, 16, DTYPE_BF16, ALL_TARGETS, 0, NULL,
                                   "config.json"};
        struct buf text;
        int written, left;
        snprintf(config, sizeof config, base, cases[i].extra);
        buf_init(&text);
        int read = import_read_config_text("config.json",
                                           (const unsigned char *)config,
                                           strlen(config), &m, &d);
        fclose(ef);
        if (cases[i].local == NULL) {
            TU_CHECK(read == 1 && errs != NULL &&
                         strstr(errs, "config.json:2:36: error: layer_types: "
                                      "a string \"bogus\" is neither") !=
                             NULL,
                     "case %zu: %d errors:\n%s", i, read, errs ? errs : "");
        } else {
            int ok = read == 0 && import_write_spec(&m, &o, &text, &written,
                                                    &left, NULL) == 0;
            const char *t = buf_str(&text);
            /* rope_scaling is the global layers' alone */
            const char *local = strstr(t, "name: gemma3_text_rope_q_local");
            const char *global = strstr(t, "name: gemma3_text_rope_q_global");
            const char *after = global ? strstr(global, "- name") : NULL;
            int scaled = strstr(cases[i].extra, "rope_scaling") != NULL;
            TU_CHECK(ok && strstr(t, cases[i].local) != NULL &&
                         strstr(t, cases[i].global) != NULL &&
                         strstr(t, "window: 512") != NULL && local &&
                         global && after &&
                         !between(local, global, "scaling") &&
                         between(global, after, "factor: 8") == scaled,
                     "case %zu: %s\n%s", i, errs ? errs : "", t);
        }
        free(errs);
        buf_free(&text);
    }
}

int add_import_suite(void)
{
    CU_pSuite s = CU_add_suite("import", NULL, NULL);
    return s == NULL ||
                   CU_add_test(s, "seven models' configs",
                               test_import_models) == NULL ||
                   CU_add_test(s, "one kernel per shape",
                               test_import_shared_shapes) == NULL ||
                   CU_add_test(s, "JSON edge cases", test_import_json) ==
                       NULL ||
                   CU_add_test(s, "JSON's syntax, strictly",
                               test_json_syntax) == NULL ||
                   CU_add_test(s, "bad configs", test_import_bad) == NULL ||
                   CU_add_test(s, "a rope_scaling rope does not take",
                               test_import_scaling_left_out) == NULL ||
                   CU_add_test(s, "a kernel its op rejects",
                               test_import_op_rejects) == NULL ||
                   CU_add_test(s, "Gemma 3's local and global layers",
                               test_import_gemma3_layers) == NULL ||
                   CU_add_test(s, "the notes on biases",
                               test_import_bias_notes) == NULL ||
                   CU_add_test(s, "command line", test_import_cli) == NULL ||
                   CU_add_test(s, "fuzz regressions replayed",
                               test_import_fuzz_regressions) == NULL
               ? -1
               : 0;
}

/* Qwen2.5-0.5B imported with an adapter on k and v: every kernel of the
 * spec built on the device and checked against its naive kernel and
 * float64 at a row and a few. */
static void test_import_runs(void)
{
    static const size_t rows[] = {1, 5};
    struct buf text;
    struct spec_set set;
    if (import_into(MODELS "/qwen2.5-0.5b.json",
                    TARGET_BIT(T_K) | TARGET_BIT(T_V), 0, &text, &set)) {
        CU_ASSERT(set.n_kernel >= 6);
        for (int i = 0; i < set.n_kernel; i++) {
            struct nu_kernel k;
            nu_adopt(&k, &set, i, "the imported Qwen2.5-0.5B");
            if (nu_build(&k)) {
                nu_run_rows(&k, rows, 2, nu_unit());
            }
            nu_kernel_free(&k);
        }
    }
    spec_set_free(&set);
    buf_free(&text);
}

int add_import_numeric_tests(CU_pSuite s)
{
    return CU_add_test(s, "import: Qwen2.5-0.5B's kernels run",
                       test_import_runs) == NULL
               ? -1
               : 0;
}
