/* import_spec.c - writes the spec of a model read from its config.json:
 * a commented YAML spec of the kernels a LoRA model of it runs. A kernel
 * whose op (or one of whose fields) this specl lacks is written as a
 * comment with the values it would take, so that the same import writes
 * the kernel once the op is there; what a family does that no op says
 * (Gemma's 1 + gamma, Qwen2's biases, fused projections) is said in
 * notes at the top. */
#include "import_model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"
#include "version.h"

#define MAX_FIELDS 12

/* A kernel on its way into the spec. */
struct out_kernel {
    const char *op;
    char name[SPECL_NAME_MAX];
    char comment[256];        /* the line above it */
    int n;
    struct {
        const char *key;      /* "scaling.type": a field of a group */
        char value[40];
    } field[MAX_FIELDS];
};

struct writer {
    const struct model *m;
    const struct import_options *o;
    struct buf *out;
    const char *prefix;
    int written, left_out;
    struct buf *left_why; /* why, each reason once, "; " between (NULL:
                             not asked) */
};

#define COMMENT_WIDTH 78

/* X as the shortest text that reads back to it ("1e-06", "500000"). */
static void number_text(char *buf, size_t size, double x)
{
    if (x == floor(x) && fabs(x) < 1e15) {
        snprintf(buf, size, "%.0f", x);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) {
            return;
        }
    }
}

/* Appends the printf-style text as comment lines of at most
 * COMMENT_WIDTH columns, each INDENT then "# "; a text that begins "- "
 * (a list item) goes on two columns further on its later lines. */
static void comment(struct buf *b, const char *indent, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void comment(struct buf *b, const char *indent, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    const char *more = strncmp(text, "- ", 2) == 0 ? "  " : "";
    size_t room = COMMENT_WIDTH - strlen(indent) - 2;
    const char *p = text;
    if (*p == '\0') {
        buf_printf(b, "%s#\n", indent);
    }
    for (int line = 0; *p != '\0'; line++) {
        size_t avail = room - (line ? strlen(more) : 0);
        size_t n = strlen(p);
        if (n > avail) {
            n = avail;
            while (n > 0 && p[n] != ' ') {
                n--;
            }
            n = n ? n : strcspn(p, " "); /* a word longer than a line */
        }
        buf_printf(b, "%s#%s%s%.*s\n", indent, n ? " " : "",
                   line ? more : "", (int)n, p);
        p += n;
        p += strspn(p, " ");
    }
}

/* Counts a kernel left as a comment, and adds WHY (the comment's own
 * words) to the reasons the summary gives, unless it is there already. */
static void left_out(struct writer *w, const char *why)
{
    w->left_out++;
    if (w->left_why == NULL) {
        return;
    }
    const char *had = buf_str(w->left_why);
    size_t n = strlen(why);
    for (const char *p = had; (p = strstr(p, why)) != NULL; p++) {
        if ((p == had || p[-1] == ' ') && (p[n] == '\0' || p[n] == ';')) {
            return; /* a whole reason of those held */
        }
    }
    buf_printf(w->left_why, "%s%s", had[0] ? "; " : "", why);
}

static long width(const struct model *m, enum width w)
{
    switch (w) {
    case W_HIDDEN:
        return m->hidden;
    case W_Q:
        return m->heads * m->head_dim;
    case W_KV:
        return m->kv_heads * m->head_dim;
    case W_QKV:
        return (m->heads + 2 * m->kv_heads) * m->head_dim;
    case W_INTER:
        return m->intermediate;
    case W_GATE_UP:
        return 2 * m->intermediate;
    }
    return 0;
}

static void begin(struct writer *w, struct out_kernel *k, const char *op,
                  const char *suffix)
{
    memset(k, 0, sizeof *k);
    k->op = op;
    snprintf(k->name, sizeof k->name, "%s_%s", w->prefix, suffix);
}

static void add_text(struct out_kernel *k, const char *key, const char *v)
{
    if (k->n < MAX_FIELDS) {
        k->field[k->n].key = key;
        snprintf(k->field[k->n].value, sizeof k->field[k->n].value, "%s",
                 v);
        k->n++;
    }
}

static void add_long(struct out_kernel *k, const char *key, long v)
{
    char text[32];
    snprintf(text, sizeof text, "%ld", v);
    add_text(k, key, text);
}

static void add_number(struct out_kernel *k, const char *key, double v)
{
    char text[40];
    number_text(text, sizeof text, v);
    add_text(k, key, text);
}

/* Whether OP (NULL: none) has field KEY taking the value TEXT: for a
 * choice, TEXT among its choices. */
static int field_takes(const struct op_def *op, const char *key,
                       const char *text)
{
    int i = op != NULL ? op_field_index(op, key) : -1;
    if (i < 0) {
        return 0;
    }
    const struct param_def *def = &op->fields[i];
    for (int c = 0; def->kind == VALUE_CHOICE && def->choices[c]; c++) {
        if (strcmp(def->choices[c], text) == 0) {
            return 1;
        }
    }
    return def->kind != VALUE_CHOICE;
}

/* Why K cannot be written with this specl's ops (NULL: it can). */
static const char *missing(const struct out_kernel *k, char *buf,
                           size_t size)
{
    const struct op_def *op = op_find(k->op);
    if (op == NULL) {
        return "op not in this version of specl";
    }
    for (int i = 0; i < k->n; i++) {
        if (!field_takes(op, k->field[i].key, k->field[i].value)) {
            snprintf(buf, size, "%s %s: %s not in this version of specl",
                     k->op, k->field[i].key, k->field[i].value);
            return buf;
        }
    }
    return NULL;
}

/* Writes K's fields, a group's ("scaling.type", ...) as a mapping of
 * its own. */
static void write_fields(struct buf *b, const struct out_kernel *k)
{
    for (int i = 0; i < k->n;) {
        const char *key = k->field[i].key;
        const char *dot = strchr(key, '.');
        if (dot == NULL) {
            buf_printf(b, "    %s: %s\n", key, k->field[i++].value);
            continue;
        }
        size_t len = (size_t)(dot - key);
        buf_printf(b, "    %.*s:\n", (int)len, key);
        for (; i < k->n && strncmp(k->field[i].key, key, len + 1) == 0;
             i++) {
            buf_printf(b, "      %s: %s\n", k->field[i].key + len + 1,
                       k->field[i].value);
        }
    }
}

static void defaults(const struct writer *w, struct buf *b);

/* Why the op rejects K (its first error, in BUF), or NULL: K alone under
 * the spec's defaults, through the spec reader. */
static const char *rejected(const struct writer *w,
                            const struct out_kernel *k, char *buf,
                            size_t size)
{
    struct buf text;
    struct spec_set set;
    struct diags quiet = {.out = NULL};
    buf_init(&text);
    defaults(w, &text);
    buf_printf(&text, "kernels:\n  - name: %s\n    op: %s\n", k->name,
               k->op);
    write_fields(&text, k);
    spec_set_init(&set);
    int errors = spec_read_buffer(&set, "import", (const unsigned char *)
                                  buf_str(&text), text.len, &quiet);
    spec_set_free(&set);
    buf_free(&text);
    if (errors == 0) {
        return NULL;
    }
    snprintf(buf, size, "%s", quiet.first);
    return buf;
}

/* Writes K into the spec, or as a comment when this specl lacks its op
 * or a field, or its op takes none of its values (an odd head_dim for
 * rope). */
static void put(struct writer *w, const struct out_kernel *k)
{
    char why[DIAG_MESSAGE_MAX], values[512] = "";
    const char *lacks = missing(k, why, sizeof why);
    if (lacks == NULL) {
        lacks = rejected(w, k, why, sizeof why);
    }
    buf_puts(w->out, "\n");
    comment(w->out, "  ", "%s", k->comment);
    if (lacks == NULL) {
        buf_printf(w->out, "  - name: %s\n    op: %s\n", k->name, k->op);
        write_fields(w->out, k);
        w->written++;
        return;
    }
    for (int i = 0; i < k->n; i++) {
        size_t at = strlen(values);
        snprintf(values + at, sizeof values - at, "%s%s %s", i ? ", " : "",
                 k->field[i].key, k->field[i].value);
    }
    comment(w->out, "  ", "%s (%s): %s (%s)", k->name, k->op, values, lacks);
    char why_left[SPECL_NAME_MAX + DIAG_MESSAGE_MAX + 32];
    snprintf(why_left, sizeof why_left, "%s (%s): %s", k->name, k->op, lacks);
    left_out(w, why_left);
}

/* The projections --targets selects that share one shape (in, out) with
 * projection FIRST, as "q_proj, o_proj"; 0 when an earlier one has its
 * shape (its kernel serves FIRST). */
static int same_shape(const struct writer *w, int first, char *list,
                      size_t size)
{
    const struct proj *p = w->m->family->proj;
    long in = width(w->m, p[first].in), out = width(w->m, p[first].out);
    list[0] = '\0';
    for (int i = 0; p[i].module != NULL; i++) {
        if (!(p[i].targets & w->o->targets) ||
            width(w->m, p[i].in) != in || width(w->m, p[i].out) != out) {
            continue;
        }
        if (i < first) {
            return 0;
        }
        size_t at = strlen(list);
        snprintf(list + at, size - at, "%s%s", at ? ", " : "", p[i].module);
    }
    return 1;
}

/* A lora kernel per shape among the targets (BACKWARD: lora_backward). */
static void lora_kernels(struct writer *w, int backward)
{
    const struct proj *p = w->m->family->proj;
    for (int i = 0; p[i].module != NULL; i++) {
        char list[128], suffix[48];
        if (!(p[i].targets & w->o->targets) ||
            !same_shape(w, i, list, sizeof list)) {
            continue;
        }
        struct out_kernel k;
        snprintf(suffix, sizeof suffix, "%s%s", p[i].module,
                 backward ? "_backward" : "");
        begin(w, &k, backward ? "lora_backward" : "lora_forward", suffix);
        snprintf(k.comment, sizeof k.comment, "%s%s: %ld -> %ld", list,
                 backward ? ", backward (dA, dB, dX)" : "",
                 width(w->m, p[i].in), width(w->m, p[i].out));
        add_long(&k, "in_features", width(w->m, p[i].in));
        add_long(&k, "out_features", width(w->m, p[i].out));
        put(w, &k);
    }
}

/* The norms: rmsnorm for the first layer's input (and Gemma's norms of
 * a block's output), add_rmsnorm for a residual add and the norm after
 * it; or with BACKWARD, rmsnorm_backward for both. */
static void norm_kernels(struct writer *w, int backward)
{
    int sandwich = (w->m->family->quirks & QUIRK_SANDWICH) != 0;
    struct out_kernel k;
    if (backward) {
        begin(w, &k, "rmsnorm_backward", "rmsnorm_backward");
        snprintf(k.comment, sizeof k.comment,
                 "every norm, backward (dx; after add_rmsnorm, add dx to "
                 "the residual's gradient)");
    } else {
        begin(w, &k, "rmsnorm", "rmsnorm");
        snprintf(k.comment, sizeof k.comment, "%s",
                 sandwich ? "input_layernorm of the first layer, "
                            "post_attention_layernorm, "
                            "post_feedforward_layernorm"
                          : "input_layernorm of the first layer");
    }
    add_long(&k, "features", w->m->hidden);
    add_number(&k, "eps", w->m->eps);
    put(w, &k);
    if (backward) {
        return;
    }
    begin(w, &k, "add_rmsnorm", "add_rmsnorm");
    snprintf(k.comment, sizeof k.comment,
             "the residual add, then %s, the next layer's input_layernorm "
             "or the final norm",
             sandwich ? "pre_feedforward_layernorm"
                      : "post_attention_layernorm");
    add_long(&k, "features", w->m->hidden);
    add_number(&k, "eps", w->m->eps);
    put(w, &k);
}

/* Qwen3's and Gemma 3's q_norm and k_norm: an RMS norm of each head's
 * head_dim values (rows: tokens x heads), after q_proj and k_proj and
 * before rope; with BACKWARD, its rmsnorm_backward. */
static void qk_norm_kernel(struct writer *w, int backward)
{
    struct out_kernel k;
    if (!(w->m->family->quirks & QUIRK_QK_NORM)) {
        return;
    }
    begin(w, &k, backward ? "rmsnorm_backward" : "rmsnorm",
          backward ? "qk_norm_backward" : "qk_norm");
    snprintf(k.comment, sizeof k.comment,
             "q_norm and k_norm: each head's %ld values (rows: tokens x "
             "heads), before rope%s",
             w->m->head_dim, backward ? ", backward (dx)" : "");
    add_long(&k, "features", w->m->head_dim);
    add_number(&k, "eps", w->m->eps);
    put(w, &k);
}

/* Which layers a rope kernel serves: all of them, or, where the local
 * layers' rope differs (QUIRK_LOCAL_ROPE), the local or global ones. */
enum rope_layers { ROPE_ALL, ROPE_LOCAL, ROPE_GLOBAL };

/* One rope kernel: HEADS heads named WHICH ("q", "k", "q, k"), of the
 * LAYERS. */
static void rope_kernel(struct writer *w, const char *suffix,
                        const char *which, long heads, int inverse,
                        enum rope_layers layers)
{
    const struct model *m = w->m;
    struct out_kernel k;
    char name[48];
    static const char *const of[] = {"", " in the sliding-window layers",
                                     " in the global layers"};
    static const char *const tail[] = {"", "_local", "_global"};
    snprintf(name, sizeof name, "%s%s%s", suffix, tail[layers],
             inverse ? "_inverse" : "");
    begin(w, &k, "rope", name);
    snprintf(k.comment, sizeof k.comment, "rotary embedding of %s%s: %ld "
             "head%s of %ld%s",
             which, of[layers], heads, heads == 1 ? "" : "s", m->head_dim,
             inverse ? ", inverse (the backward: their gradients)" : "");
    add_long(&k, "heads", heads);
    add_long(&k, "head_dim", m->head_dim);
    if (m->rotary_dim != m->head_dim) {
        add_long(&k, "rotary_dim", m->rotary_dim);
    }
    /* the local layers': rope_local_base_freq, without rope_scaling */
    int local = layers == ROPE_LOCAL;
    enum rope_scaling_kind scaling = local ? SCALING_NONE : m->scaling;
    add_number(&k, "theta", local ? m->local_theta : m->theta);
    if (scaling == SCALING_LINEAR || scaling == SCALING_LLAMA3) {
        add_text(&k, "scaling.type", m->scaling_name);
        add_number(&k, "scaling.factor", m->factor);
    }
    if (scaling == SCALING_LLAMA3) {
        add_number(&k, "scaling.low_freq_factor", m->low_freq);
        add_number(&k, "scaling.high_freq_factor", m->high_freq);
        add_long(&k, "scaling.original_max_position", m->original_max);
    }
    if (inverse) {
        add_text(&k, "inverse", "true");
    }
    put(w, &k);
}

/* The rope kernels of LAYERS: of q and k, one when they have as many
 * heads. */
static void rope_pair(struct writer *w, int inverse, enum rope_layers layers)
{
    const struct model *m = w->m;
    if (m->heads == m->kv_heads) {
        rope_kernel(w, "rope", "q and k", m->heads, inverse, layers);
        return;
    }
    rope_kernel(w, "rope_q", "q", m->heads, inverse, layers);
    rope_kernel(w, "rope_k", "k", m->kv_heads, inverse, layers);
}

static void rope_kernels(struct writer *w, int inverse)
{
    const struct model *m = w->m;
    int local = (m->family->quirks & QUIRK_LOCAL_ROPE) && m->window > 0;
    if (local) {
        rope_pair(w, inverse, ROPE_LOCAL);
    }
    if (m->scaling == SCALING_OTHER) {
        char why[160];
        snprintf(why, sizeof why, "rope: no kernel%s: rope_scaling type "
                 "\"%s\" is none that rope takes (linear, llama3)",
                 local ? " for the global layers" : "", m->scaling_name);
        buf_puts(w->out, "\n");
        comment(w->out, "  ", "%s", why);
        left_out(w, why);
        return;
    }
    rope_pair(w, inverse, local ? ROPE_GLOBAL : ROPE_ALL);
}

/* One attention kernel (suffix SUFFIX) over WINDOW positions (0: all). */
static void attention_kernel(struct writer *w, const char *suffix,
                             const char *layers, long window, int backward)
{
    const struct model *m = w->m;
    struct out_kernel k;
    char name[48];
    snprintf(name, sizeof name, "%s%s", suffix, backward ? "_backward" : "");
    begin(w, &k, backward ? "attention_backward" : "attention", name);
    snprintf(k.comment, sizeof k.comment, "attention of %s%s", layers,
             backward ? ", backward (dq, dk, dv)" : "");
    add_long(&k, "heads", m->heads);
    add_long(&k, "kv_heads", m->kv_heads);
    add_long(&k, "head_dim", m->head_dim);
    add_text(&k, "causal", "true");
    if (window > 0) {
        add_long(&k, "window", window);
    }
    if (m->attn_softcap > 0) {
        add_number(&k, "softcap", m->attn_softcap);
    }
    if (m->query_scalar > 0 && m->query_scalar != (double)m->head_dim) {
        add_number(&k, "scale", 1 / sqrt(m->query_scalar));
    }
    put(w, &k);
}

static void attention_kernels(struct writer *w, int backward)
{
    const struct model *m = w->m;
    char layers[96];
    switch (m->window > 0 ? m->family->window : WINDOW_NONE) {
    case WINDOW_ALTERNATE:
        attention_kernel(w, "attention_local", "the even layers (sliding "
                         "window)", m->window, backward);
        attention_kernel(w, "attention_global", "the odd layers (global)",
                         0, backward);
        return;
    case WINDOW_OPT_IN:
        if (m->window_from > 0) {
            snprintf(layers, sizeof layers, "layers 0 to %ld (global)",
                     m->window_from - 1);
            attention_kernel(w, "attention_global", layers, 0, backward);
        }
        if (m->layers == 0 || m->window_from < m->layers) {
            snprintf(layers, sizeof layers, "layers %ld on (sliding "
                     "window)", m->window_from);
            attention_kernel(w, "attention_local", layers, m->window,
                             backward);
        }
        return;
    case WINDOW_PATTERN:
        if (m->window_every > 0) {
            snprintf(layers, sizeof layers, "every layer but every %ldth "
                     "(sliding window)", m->window_every);
            attention_kernel(w, "attention_local", layers, m->window,
                             backward);
            snprintf(layers, sizeof layers, "every %ldth layer (global)",
                     m->window_every);
            attention_kernel(w, "attention_global", layers, 0, backward);
            return;
        }
        if (m->local_layers > 0) {
            snprintf(layers, sizeof layers, "the sliding_attention layers "
                     "of layer_types (%ld)", m->local_layers);
            attention_kernel(w, "attention_local", layers, m->window,
                             backward);
        }
        if (m->global_layers > 0) {
            snprintf(layers, sizeof layers, "the full_attention layers of "
                     "layer_types (%ld)", m->global_layers);
            attention_kernel(w, "attention_global", layers, 0, backward);
        }
        return;
    case WINDOW_ALL:
        attention_kernel(w, "attention", "every layer (sliding window)",
                         m->window, backward);
        return;
    case WINDOW_NONE:
        attention_kernel(w, "attention", "every layer", 0, backward);
        return;
    }
}

static void mlp_kernel(struct writer *w, int backward)
{
    struct out_kernel k;
    begin(w, &k, backward ? "swiglu_backward" : "swiglu",
          backward ? "swiglu_backward" : "swiglu");
    snprintf(k.comment, sizeof k.comment, "the MLP's %s(gate) * up%s",
             w->m->activation, backward ? ", backward (dgate, dup)" : "");
    add_long(&k, "features", w->m->intermediate);
    add_text(&k, "activation", w->m->act);
    put(w, &k);
}

static void loss_kernel(struct writer *w)
{
    struct out_kernel k;
    begin(w, &k, "cross_entropy", "cross_entropy");
    snprintf(k.comment, sizeof k.comment, "the loss over lm_head's logits%s",
             w->o->train ? " and its gradient" : "");
    add_long(&k, "vocab", w->m->vocab);
    if (w->m->final_softcap > 0) {
        add_number(&k, "softcap", w->m->final_softcap);
    }
    if (!w->o->train) {
        add_text(&k, "grad", "false");
    }
    put(w, &k);
}

/* The header: where the spec comes from, the model and the LoRA. */
static void header(struct writer *w)
{
    const struct model *m = w->m;
    const struct import_options *o = w->o;
    static const char *const names[] = {"q", "k", "v", "o", "gate", "up",
                                        "down"};
    char targets[64] = "";
    for (int t = 0; t < N_TARGET_PROJ; t++) {
        if (o->targets & TARGET_BIT(t)) {
            size_t at = strlen(targets);
            snprintf(targets + at, sizeof targets - at, "%s%s",
                     at ? ", " : "", names[t]);
        }
    }
    char eps[40], theta[40], alpha[40], scale[40];
    number_text(eps, sizeof eps, m->eps);
    number_text(theta, sizeof theta, m->theta);
    number_text(alpha, sizeof alpha, o->alpha);
    number_text(scale, sizeof scale, o->alpha / (double)o->rank);
    struct buf *b = w->out;
    comment(b, "", "The kernels of a %s model (%s) with LoRA, written by "
            "`specl import` %s from %s.", m->family->model_type,
            m->family->architecture, SPECL_VERSION, o->config_path);
    comment(b, "", "%s", "");
    char layers[48] = ""; /* num_hidden_layers is not required */
    if (m->layers > 0) {
        snprintf(layers, sizeof layers, "%ld layers, ", m->layers);
    }
    char local[64] = "";
    if (m->family->quirks & QUIRK_LOCAL_ROPE) {
        char t[40];
        number_text(t, sizeof t, m->local_theta);
        snprintf(local, sizeof local, ", rope_local_base_freq %s", t);
    }
    comment(b, "", "Model: %shidden %ld, intermediate %ld, %ld "
            "heads of %ld over %ld kv heads, vocabulary %ld; rms_norm_eps "
            "%s, rope_theta %s%s%s.", layers, m->hidden, m->intermediate,
            m->heads, m->head_dim, m->kv_heads, m->vocab, eps, theta,
            m->theta_given ? "" : " (not given: transformers' default)",
            local);
    comment(b, "", "LoRA: rank %ld, alpha %s (scale %s) on %s; %s.",
            o->rank, alpha, scale, targets,
            o->train ? "forward and backward (--train)"
                     : "forward only (--train adds the backward)");
}

/* A note (comment lines of the header) per thing the ops do not do. */
static void notes(struct writer *w)
{
    const struct model *m = w->m;
    unsigned q = m->family->quirks;
    struct buf *b = w->out;
    comment(b, "", "%s", "");
    comment(b, "", "What the ops do not do:");
    if (q & QUIRK_QKV_BIAS) {
        comment(b, "", "- q_proj, k_proj and v_proj carry a bias: "
                "lora_forward adds none; add it to Y.");
    } else if (m->attn_bias) {
        comment(b, "", "- attention_bias: q_proj, k_proj, v_proj and o_proj "
                "carry a bias: lora_forward adds none; add it to Y.");
    }
    if (q & QUIRK_FUSED) {
        comment(b, "", "- qkv_proj writes q, k and v side by side in a row "
                "of %ld, gate_up_proj gate then up in a row of %ld: rope, "
                "attention and swiglu take each as a buffer of its own; "
                "split them.", width(m, W_QKV), width(m, W_GATE_UP));
    }
    if (q & QUIRK_NORM_PLUS_ONE) {
        comment(b, "", "- the norms scale by 1 + weight: pass gamma = 1 + "
                "the checkpoint's weight.");
    }
    if (q & QUIRK_EMBED_SCALE) {
        char s[40];
        number_text(s, sizeof s, sqrt((double)m->hidden));
        comment(b, "", "- the embeddings are scaled by sqrt(hidden_size) = "
                "%s before the first layer.", s);
    }
    if (m->tied) {
        comment(b, "", "- tie_word_embeddings: lm_head's weight is the "
                "embedding matrix.");
    }
    if (m->scaling == SCALING_OTHER) {
        comment(b, "", "- rope_scaling \"%s\": rope takes linear and llama3 "
                "only; no rope kernel.", m->scaling_name);
    }
    static const char *const lora_ops[] = {"lora_forward", "lora_backward"};
    char lacking[64] = "";
    for (int i = 0; i < 1 + w->o->train; i++) {
        if (!field_takes(op_find(lora_ops[i]), "weight_layout", "out_in")) {
            size_t at = strlen(lacking);
            snprintf(lacking + at, sizeof lacking - at, "%s%s",
                     at ? " and " : "", lora_ops[i]);
        }
    }
    if (lacking[0] != '\0') {
        comment(b, "", "- %s take%s W, A and B as in_out (K x N, K x r, r x "
                "N): transpose the checkpoint's nn.Linear and PEFT weights "
                "(out_in).", lacking, strchr(lacking, ' ') ? "" : "s");
    }
}

/* The spec's defaults: the options' dtype, rank and alpha. */
static void defaults(const struct writer *w, struct buf *b)
{
    char alpha[40];
    number_text(alpha, sizeof alpha, w->o->alpha);
    buf_printf(b,
               "defaults:\n"
               "  dtype: %s   # --dtype\n"
               "  rank: %ld\n"
               "  alpha: %s\n",
               dtype_name(w->o->dtype), w->o->rank, alpha);
    if (field_takes(op_find("lora_forward"), "weight_layout", "out_in")) {
        buf_puts(b, "  weight_layout: out_in   # as PyTorch and PEFT "
                         "store them\n");
    }
}

/* Whether the rank fits every projection the targets select; says which
 * one it does not on stderr. */
static int rank_fits(const struct writer *w)
{
    const struct proj *p = w->m->family->proj;
    for (int i = 0; p[i].module != NULL; i++) {
        long in = width(w->m, p[i].in), out = width(w->m, p[i].out);
        if ((p[i].targets & w->o->targets) &&
            (w->o->rank > in || w->o->rank > out)) {
            fprintf(stderr, "%s: error: --rank %ld is more than %s's %s "
                    "(%ld)\n", w->o->config_path, w->o->rank, p[i].module,
                    w->o->rank > in ? "in_features" : "out_features",
                    w->o->rank > in ? in : out);
            return 0;
        }
    }
    return 1;
}

int import_write_spec(const struct model *m, const struct import_options *o,
                      struct buf *out, int *written, int *n_left_out,
                      struct buf *left_why)
{
    struct writer w = {m, o, out, o->prefix ? o->prefix
                                            : m->family->model_type,
                       0, 0, left_why};
    if (!rank_fits(&w)) {
        return -1;
    }
    header(&w);
    notes(&w);
    buf_puts(out, "\n");
    defaults(&w, out);
    buf_puts(out, "\nkernels:");
    for (int backward = 0; backward <= o->train; backward++) {
        lora_kernels(&w, backward);
        norm_kernels(&w, backward);
        qk_norm_kernel(&w, backward);
        rope_kernels(&w, backward);
        attention_kernels(&w, backward);
        mlp_kernel(&w, backward);
    }
    loss_kernel(&w);
    *written = w.written;
    *n_left_out = w.left_out;
    return 0;
}
