/* import_config.c - reads a Hugging Face config.json into struct model.
 *
 * JSON is read with libyaml, through the spec reader's document
 * (spec_doc.c): every value keeps its line and column, so a missing or
 * ill-typed key is reported where it is, as the spec reader reports. A
 * JSON text is a YAML 1.2 document, and libyaml (YAML 1.1) reads the
 * JSON that configs hold: `"key":value` with no blank, `\/`, tabs
 * between tokens, `1e-06`. Its one gap, a character past U+FFFF escaped
 * as a UTF-16 surrogate pair (Python's json.dumps writes them so), is
 * closed by json_surrogates below. YAML takes more than JSON, though (a
 * block mapping `model_type: llama`, a trailing comma, a comment): the
 * text is first checked against JSON's syntax (json_syntax.c), which
 * says where it leaves JSON. Values are then read by JSON's rules, not
 * YAML's: numbers by JSON's grammar, true and false alone as booleans,
 * quoted text alone as strings. */
#include "import_model.h"
#include "json_syntax.h"
#include "spec_doc.h"
#include "spec_node.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_MAX_BYTES (16L * 1024 * 1024)

/* q, k, v, o, gate, up and down as separate modules (llama and most). */
static const struct proj separate[] = {
    {"q_proj", TARGET_BIT(T_Q), W_HIDDEN, W_Q},
    {"k_proj", TARGET_BIT(T_K), W_HIDDEN, W_KV},
    {"v_proj", TARGET_BIT(T_V), W_HIDDEN, W_KV},
    {"o_proj", TARGET_BIT(T_O), W_Q, W_HIDDEN},
    {"gate_proj", TARGET_BIT(T_GATE), W_HIDDEN, W_INTER},
    {"up_proj", TARGET_BIT(T_UP), W_HIDDEN, W_INTER},
    {"down_proj", TARGET_BIT(T_DOWN), W_INTER, W_HIDDEN},
    {NULL, 0, W_HIDDEN, W_HIDDEN},
};

/* phi3: q, k and v one module, gate and up another. */
static const struct proj fused[] = {
    {"qkv_proj", TARGET_BIT(T_Q) | TARGET_BIT(T_K) | TARGET_BIT(T_V),
     W_HIDDEN, W_QKV},
    {"o_proj", TARGET_BIT(T_O), W_Q, W_HIDDEN},
    {"gate_up_proj", TARGET_BIT(T_GATE) | TARGET_BIT(T_UP), W_HIDDEN,
     W_GATE_UP},
    {"down_proj", TARGET_BIT(T_DOWN), W_INTER, W_HIDDEN},
    {NULL, 0, W_HIDDEN, W_HIDDEN},
};

/* transformers' defaults, where a config leaves a key out */
const struct family import_families[] = {
    {"llama", "LlamaForCausalLM", separate, {"hidden_act", NULL}, "silu",
     0, 0, WINDOW_NONE, 0, 1e4},
    {"mistral", "MistralForCausalLM", separate, {"hidden_act", NULL},
     "silu", 0, 0, WINDOW_ALL, 0, 1e4},
    {"qwen2", "Qwen2ForCausalLM", separate, {"hidden_act", NULL}, "silu", 0,
     0, WINDOW_OPT_IN, QUIRK_QKV_BIAS, 1e4},
    {"qwen3", "Qwen3ForCausalLM", separate, {"hidden_act", NULL}, "silu", 1,
     0, WINDOW_OPT_IN, QUIRK_QK_NORM, 1e4},
    {"phi3", "Phi3ForCausalLM", fused, {"hidden_act", NULL}, "silu", 0, 0,
     WINDOW_ALL, QUIRK_FUSED, 1e4},
    {"gemma2", "Gemma2ForCausalLM", separate,
     {"hidden_activation", "hidden_act"}, "gelu_pytorch_tanh", 1, 1,
     WINDOW_ALTERNATE,
     QUIRK_NORM_PLUS_ONE | QUIRK_EMBED_SCALE | QUIRK_SANDWICH, 1e4},
    {"gemma3_text", "Gemma3ForCausalLM", separate,
     {"hidden_activation", "hidden_act"}, "gelu_pytorch_tanh", 1, 1,
     WINDOW_PATTERN,
     QUIRK_NORM_PLUS_ONE | QUIRK_EMBED_SCALE | QUIRK_SANDWICH |
         QUIRK_QK_NORM | QUIRK_LOCAL_ROPE,
     1e6},
    {NULL, NULL, NULL, {NULL, NULL}, NULL, 0, 0, WINDOW_NONE, 0, 0},
};

/* transformers' activation names, as swiglu's activation says them. */
static const struct {
    const char *hf, *act;
} activations[] = {
    {"silu", "silu"},
    {"swish", "silu"},
    {"gelu_pytorch_tanh", "gelu_tanh"},
    {"gelu_new", "gelu_tanh"},
    {"gelu_fast", "gelu_tanh"},
    {"gelu", "gelu"},
};

/* The config's value REF as a message shows it, in JSON's terms. */
static const char *json_shown(const struct reader *r, struct ref ref,
                              char *buf, size_t size)
{
    const struct node *n = node_of(r, ref);
    if (n->kind != NODE_SCALAR) {
        return n->kind == NODE_MAPPING ? "an object" : "an array";
    }
    char text[96];
    node_shown(r, ref, text, sizeof text);
    if (n->quoted) {
        snprintf(buf, size, "a string %s", text);
    } else {
        /* plain: a number, true, false, null (or not JSON at all) */
        snprintf(buf, size, "%.*s", (int)strlen(text) - 2, text + 1);
    }
    return buf;
}

/* Reading one config. */
struct config {
    struct reader r;
    struct ref root;
};

static int is_null(const struct config *c, struct ref v)
{
    return is_kind(&c->r, v, NODE_SCALAR) && !node_of(&c->r, v)->quoted &&
           strcmp(text_of(&c->r, v), "null") == 0;
}

/* The value of KEY in mapping MAP into *V: 1; 0 when absent or null (an
 * error when REQUIRED, at MAP: what the key is for says WHY). */
static int lookup(struct config *c, struct ref map, const char *key,
                  const char *why, struct ref *v)
{
    if (map_lookup(&c->r, map, key, v) && !is_null(c, *v)) {
        return 1;
    }
    if (why != NULL && map_lookup(&c->r, map, key, v)) {
        diag_error(c->r.d, c->r.path, at(&c->r, *v),
                   "%s is null; it needs a value (%s)", key, why);
    } else if (why != NULL) {
        diag_error(c->r.d, c->r.path, at(&c->r, map),
                   "config has no '%s' (%s)", key, why);
    }
    return 0;
}

/* V as a JSON number into *OUT: 1, or 0 after saying KEY must be one. */
static int number_of(struct config *c, struct ref v, const char *key,
                     double *out)
{
    char tmp[128];
    const struct node *n = node_of(&c->r, v);
    if (n->kind == NODE_SCALAR && !n->quoted &&
        json_number_syntax(text_of(&c->r, v))) {
        errno = 0;
        *out = strtod(text_of(&c->r, v), NULL);
        if (errno == 0) {
            return 1;
        }
    }
    diag_error(c->r.d, c->r.path, at(&c->r, v),
               "%s must be a number, found %s", key,
               json_shown(&c->r, v, tmp, sizeof tmp));
    return 0;
}

/* KEY of MAP as a number (*OUT untouched when absent or null). WHY:
 * required, as lookup's. Returns 1 when read. */
static int get_number(struct config *c, struct ref map, const char *key,
                      const char *why, double lo, double *out)
{
    struct ref v;
    double x;
    if (!lookup(c, map, key, why, &v) || !number_of(c, v, key, &x)) {
        return 0;
    }
    if (!(x > lo)) {
        diag_error(c->r.d, c->r.path, at(&c->r, v),
                   "%s must be more than %g (got %s)", key, lo,
                   text_of(&c->r, v));
        return 0;
    }
    *out = x;
    return 1;
}

/* KEY of MAP as a whole number in [1, 2^24] (a width or count). */
static int get_count(struct config *c, struct ref map, const char *key,
                     const char *why, long *out)
{
    struct ref v;
    double x;
    if (!lookup(c, map, key, why, &v) || !number_of(c, v, key, &x)) {
        return 0;
    }
    /* the range first: a double past long's is no long to compare */
    if (!(x >= 1 && x <= 16777216) || x != floor(x)) {
        diag_error(c->r.d, c->r.path, at(&c->r, v),
                   "%s must be a whole number in [1, 16777216] (got %s)",
                   key, text_of(&c->r, v));
        return 0;
    }
    *out = (long)x;
    return 1;
}

static int get_string(struct config *c, struct ref map, const char *key,
                      const char *why, char *out, size_t size)
{
    char tmp[128];
    struct ref v;
    if (!lookup(c, map, key, why, &v)) {
        return 0;
    }
    if (!is_kind(&c->r, v, NODE_SCALAR) || !node_of(&c->r, v)->quoted ||
        strlen(text_of(&c->r, v)) >= size) {
        diag_error(c->r.d, c->r.path, at(&c->r, v),
                   "%s must be a string%s, found %s", key,
                   is_kind(&c->r, v, NODE_SCALAR) &&
                           node_of(&c->r, v)->quoted
                       ? " of a few characters"
                       : "",
                   json_shown(&c->r, v, tmp, sizeof tmp));
        return 0;
    }
    snprintf(out, size, "%s", text_of(&c->r, v));
    return 1;
}

static int get_bool(struct config *c, struct ref map, const char *key,
                    int *out)
{
    char tmp[128];
    struct ref v;
    if (!lookup(c, map, key, NULL, &v)) {
        return 0;
    }
    const char *text = text_of(&c->r, v);
    if (!is_kind(&c->r, v, NODE_SCALAR) || node_of(&c->r, v)->quoted ||
        (strcmp(text, "true") != 0 && strcmp(text, "false") != 0)) {
        diag_error(c->r.d, c->r.path, at(&c->r, v),
                   "%s must be true or false, found %s", key,
                   json_shown(&c->r, v, tmp, sizeof tmp));
        return 0;
    }
    *out = strcmp(text, "true") == 0;
    return 1;
}

/* model_type into M->family; 0 when it names none (reported). */
static int read_family(struct config *c, struct model *m)
{
    char type[64], list[128] = "";
    struct ref v;
    if (!get_string(c, c->root, "model_type", "the model family",
                    type, sizeof type)) {
        return 0;
    }
    for (int i = 0; import_families[i].model_type != NULL; i++) {
        if (strcmp(type, import_families[i].model_type) == 0) {
            m->family = &import_families[i];
            return 1;
        }
        size_t at_ = strlen(list);
        snprintf(list + at_, sizeof list - at_, "%s%s", i ? ", " : "",
                 import_families[i].model_type);
    }
    map_lookup(&c->r, c->root, "model_type", &v);
    struct ref text;
    if (strcmp(type, "gemma3") == 0 &&
        map_lookup(&c->r, c->root, "text_config", &text)) {
        /* its text_config leaves most keys to transformers' defaults */
        diag_error(c->r.d, c->r.path, at(&c->r, v),
                   "model_type \"gemma3\" is Gemma 3's image-text model, "
                   "whose text_config leaves most keys to transformers' "
                   "defaults: import a config of its language model "
                   "(model_type \"gemma3_text\", every key given)");
        return 0;
    }
    diag_error(c->r.d, c->r.path, at(&c->r, v),
               "unknown model_type \"%s\" (specl imports: %s)", type, list);
    return 0;
}

/* rope_scaling: null, {rope_type|type: linear, factor} or {rope_type:
 * llama3, factor, low_freq_factor, high_freq_factor,
 * original_max_position_embeddings}; other types are kept by name (the
 * spec says rope cannot take them). */
static void read_rope_scaling(struct config *c, struct model *m)
{
    char tmp[128];
    struct ref s;
    if (!lookup(c, c->root, "rope_scaling", NULL, &s)) {
        return;
    }
    if (!is_kind(&c->r, s, NODE_MAPPING)) {
        diag_error(c->r.d, c->r.path, at(&c->r, s),
                   "rope_scaling must be an object or null, found %s",
                   json_shown(&c->r, s, tmp, sizeof tmp));
        return;
    }
    if (!map_check_keys(&c->r, s)) {
        return;
    }
    const char *key = "rope_type";
    struct ref v;
    if (!map_lookup(&c->r, s, key, &v) || is_null(c, v)) {
        key = "type"; /* before transformers 4.43 */
    }
    if (!get_string(c, s, key, "rope_scaling's type", m->scaling_name,
                    sizeof m->scaling_name)) {
        return;
    }
    const char *why = "rope_scaling's factor";
    m->scaling = SCALING_OTHER;
    if (strcmp(m->scaling_name, "linear") == 0) {
        m->scaling = SCALING_LINEAR;
        get_number(c, s, "factor", why, 0, &m->factor);
    } else if (strcmp(m->scaling_name, "llama3") == 0) {
        m->scaling = SCALING_LLAMA3;
        get_number(c, s, "factor", why, 0, &m->factor);
        get_number(c, s, "low_freq_factor", "llama3 scaling", 0,
                   &m->low_freq);
        get_number(c, s, "high_freq_factor", "llama3 scaling", 0,
                   &m->high_freq);
        get_count(c, s, "original_max_position_embeddings",
                  "llama3 scaling", &m->original_max);
    }
}

/* The activation: the family's keys in order, else its default. */
static void read_activation(struct config *c, struct model *m)
{
    const struct family *f = m->family;
    snprintf(m->activation, sizeof m->activation, "%s", f->act_default);
    for (int k = 0; k < 2 && f->act_key[k] != NULL; k++) {
        struct ref v;
        if (lookup(c, c->root, f->act_key[k], NULL, &v)) {
            m->act_given = get_string(c, c->root, f->act_key[k], NULL,
                                      m->activation, sizeof m->activation);
            if (!m->act_given) {
                return;
            }
            break;
        }
    }
    for (size_t i = 0; i < sizeof activations / sizeof *activations; i++) {
        if (strcmp(m->activation, activations[i].hf) == 0) {
            m->act = activations[i].act;
            return;
        }
    }
    struct ref v;
    const char *key = f->act_key[0];
    if (!map_lookup(&c->r, c->root, key, &v) && f->act_key[1] != NULL) {
        key = f->act_key[1];
        map_lookup(&c->r, c->root, key, &v);
    }
    diag_error(c->r.d, c->r.path, at(&c->r, v),
               "%s \"%s\" is no activation swiglu takes (silu, swish, "
               "gelu_pytorch_tanh, gelu_new, gelu_fast, gelu)",
               key, m->activation);
}

/* layer_types (WINDOW_PATTERN): how many layers of each kind; 0 when
 * the config has none (the pattern says), else 1, reported when an item
 * is neither "sliding_attention" nor "full_attention". */
static int read_layer_types(struct config *c, struct model *m)
{
    struct ref v;
    char tmp[128];
    if (!lookup(c, c->root, "layer_types", NULL, &v)) {
        return 0;
    }
    if (!is_kind(&c->r, v, NODE_SEQUENCE)) {
        diag_error(c->r.d, c->r.path, at(&c->r, v),
                   "layer_types must be an array, found %s",
                   json_shown(&c->r, v, tmp, sizeof tmp));
        return 1;
    }
    size_t n = n_items(&c->r, v);
    if (m->layers > 0 && n != (size_t)m->layers) {
        diag_error(c->r.d, c->r.path, at(&c->r, v),
                   "layer_types has %zu item%s, one a layer: "
                   "num_hidden_layers is %ld", n, n == 1 ? "" : "s",
                   m->layers);
        return 1;
    }
    if (n == 0) {
        diag_error(c->r.d, c->r.path, at(&c->r, v),
                   "layer_types is empty: it needs one item a layer");
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        struct ref t = item_of(&c->r, v, i);
        const char *text = text_of(&c->r, t);
        int scalar = is_kind(&c->r, t, NODE_SCALAR) &&
                     node_of(&c->r, t)->quoted;
        if (scalar && strcmp(text, "sliding_attention") == 0) {
            m->local_layers++;
        } else if (scalar && strcmp(text, "full_attention") == 0) {
            m->global_layers++;
        } else {
            diag_error(c->r.d, c->r.path, at(&c->r, t),
                       "layer_types: %s is neither \"sliding_attention\" "
                       "nor \"full_attention\"",
                       json_shown(&c->r, t, tmp, sizeof tmp));
        }
    }
    return 1;
}

/* sliding_window, by the family's rule. */
static void read_window(struct config *c, struct model *m)
{
    enum window_rule rule = m->family->window;
    int use = rule != WINDOW_OPT_IN;
    if (rule == WINDOW_NONE) {
        return;
    }
    if (rule == WINDOW_OPT_IN) {
        get_bool(c, c->root, "use_sliding_window", &use);
        get_count(c, c->root, "max_window_layers", NULL, &m->window_from);
    }
    if (rule == WINDOW_PATTERN && !read_layer_types(c, m)) {
        m->window_every = 6;
        get_count(c, c->root, "sliding_window_pattern", NULL,
                  &m->window_every);
    }
    long window = 0;
    get_count(c, c->root, "sliding_window", NULL, &window);
    m->window = use ? window : 0;
}

/* The shape: widths, heads, and head_dim (given, or hidden / heads). */
static void read_shape(struct config *c, struct model *m)
{
    const char *why = "a width of every layer";
    get_count(c, c->root, "hidden_size", why, &m->hidden);
    get_count(c, c->root, "intermediate_size", why, &m->intermediate);
    get_count(c, c->root, "num_attention_heads", why, &m->heads);
    get_count(c, c->root, "vocab_size", "the width of the logits",
              &m->vocab);
    get_count(c, c->root, "num_hidden_layers", NULL, &m->layers);
    m->kv_heads = m->heads;
    get_count(c, c->root, "num_key_value_heads", NULL, &m->kv_heads);
    int given = get_count(c, c->root, "head_dim",
                          m->family->head_dim_required
                              ? "its heads are not hidden_size wide"
                              : NULL,
                          &m->head_dim);
    struct ref v;
    if (!given && m->heads > 0 && m->hidden % m->heads == 0) {
        m->head_dim = m->hidden / m->heads;
    } else if (!given && m->heads > 0 && c->r.d->count == 0) {
        diag_error(c->r.d, c->r.path, at(&c->r, c->root),
                   "config has no 'head_dim', and num_attention_heads "
                   "(%ld) does not divide hidden_size (%ld)",
                   m->heads, m->hidden);
    }
    if (m->kv_heads > 0 && m->heads % m->kv_heads != 0 &&
        map_lookup(&c->r, c->root, "num_key_value_heads", &v)) {
        diag_error(c->r.d, c->r.path, at(&c->r, v),
                   "num_key_value_heads (%ld) must divide "
                   "num_attention_heads (%ld)",
                   m->kv_heads, m->heads);
    }
    double partial = 1;
    m->rotary_dim = m->head_dim;
    if (get_number(c, c->root, "partial_rotary_factor", NULL, 0, &partial)) {
        if (partial <= 1) {
            m->rotary_dim = (long)(m->head_dim * partial) / 2 * 2;
        } else if (map_lookup(&c->r, c->root, "partial_rotary_factor", &v)) {
            diag_error(c->r.d, c->r.path, at(&c->r, v),
                       "partial_rotary_factor must be at most 1 (got %s)",
                       text_of(&c->r, v));
        }
    }
}

static void read_model(struct config *c, struct model *m)
{
    memset(m, 0, sizeof *m);
    if (!read_family(c, m)) {
        return;
    }
    read_shape(c, m);
    get_number(c, c->root, "rms_norm_eps", "the norms' epsilon", 0, &m->eps);
    m->theta = m->family->theta_default;
    m->theta_given =
        get_number(c, c->root, "rope_theta", NULL, 0, &m->theta);
    if (m->family->quirks & QUIRK_LOCAL_ROPE) {
        m->local_theta = 10000; /* transformers' default */
        get_number(c, c->root, "rope_local_base_freq", NULL, 0,
                   &m->local_theta);
    }
    read_rope_scaling(c, m);
    read_activation(c, m);
    read_window(c, m);
    get_number(c, c->root, "attn_logit_softcapping", NULL, 0,
               &m->attn_softcap);
    get_number(c, c->root, "final_logit_softcapping", NULL, 0,
               &m->final_softcap);
    get_number(c, c->root, "query_pre_attn_scalar", NULL, 0,
               &m->query_scalar);
    m->tied = m->family->tied_default;
    get_bool(c, c->root, "tie_word_embeddings", &m->tied);
    get_bool(c, c->root, "attention_bias", &m->attn_bias);
}

/* The escape "\\uXXXX" at P (6 bytes there) as its code unit: 1, or 0
 * when P holds none. */
static int u_escape(const unsigned char *p, unsigned *unit)
{
    *unit = 0;
    if (p[0] != '\\' || p[1] != 'u') {
        return 0;
    }
    for (int i = 2; i < 6; i++) {
        if (!isxdigit(p[i])) {
            return 0;
        }
        *unit = *unit * 16 + (unsigned)(isdigit(p[i]) ? p[i] - '0'
                                                      : (p[i] | 0x20) - 'a' +
                                                            10);
    }
    return 1;
}

/* Rewrites each UTF-16 surrogate pair escape of DATA ("\\ud83d\\ude00",
 * which libyaml refuses) as the one escape YAML has for it
 * ("\\U0001f600"), in place; returns the new length. Columns after one
 * on its line move left by 2. A backslash that is itself escaped starts
 * nothing. */
static size_t json_surrogates(unsigned char *data, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        unsigned hi, lo;
        if (i + 12 <= len && u_escape(data + i, &hi) &&
            u_escape(data + i + 6, &lo) && hi >= 0xD800 && hi <= 0xDBFF &&
            lo >= 0xDC00 && lo <= 0xDFFF) {
            unsigned cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
            char esc[16];
            snprintf(esc, sizeof esc, "\\U%08x", cp);
            memcpy(data + o, esc, 10);
            o += 10;
            i += 12;
            continue;
        }
        if (data[i] == '\\' && i + 1 < len) {
            data[o++] = data[i++]; /* an escape: its second byte too */
        }
        data[o++] = data[i++];
    }
    return o;
}

/* The whole file at PATH into *DATA (caller frees): 0, or -1 reported. */
static int read_all(const char *path, unsigned char **data, size_t *len,
                    struct diags *d)
{
    struct mark none = {0, 0};
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        diag_error(d, path, none, "cannot open: %s", strerror(errno));
        return -1;
    }
    size_t cap = 0;
    *data = NULL;
    *len = 0;
    for (;;) {
        if (*len == cap) {
            unsigned char *p = NULL;
            if (cap < (size_t)CONFIG_MAX_BYTES) {
                cap = cap ? 2 * cap : 65536;
                p = realloc(*data, cap);
            }
            if (p == NULL) {
                diag_error(d, path, none, "larger than %ld MiB",
                           CONFIG_MAX_BYTES >> 20);
                break;
            }
            *data = p;
        }
        size_t n = fread(*data + *len, 1, cap - *len, f);
        *len += n;
        if (n == 0) {
            break;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        diag_error(d, path, none, "cannot read: %s", strerror(errno));
    }
    if (bad || *len == cap) {
        free(*data);
        *data = NULL;
        return -1;
    }
    return 0;
}

/* A config to read: the file at PATH, or LEN bytes at TEXT named PATH. */
struct source {
    const char *path;
    const unsigned char *text;
    size_t len;
};

/* The source's bytes into *DATA (caller frees): 0, or -1 reported. */
static int source_bytes(const struct source *s, unsigned char **data,
                        size_t *len, struct diags *d)
{
    if (s->text == NULL) {
        return read_all(s->path, data, len, d);
    }
    if (s->len >= (size_t)CONFIG_MAX_BYTES) {
        diag_error(d, s->path, (struct mark){0, 0}, "larger than %ld MiB",
                   CONFIG_MAX_BYTES >> 20);
        return -1;
    }
    *data = malloc(s->len + 1);
    if (*data == NULL) {
        diag_error(d, s->path, (struct mark){0, 0}, "out of memory");
        return -1;
    }
    memcpy(*data, s->text, s->len);
    *len = s->len;
    return 0;
}

/* Reads the config S into M, reporting through D in reading order.
 * Returns the number of errors. */
static int read_config(const struct source *s, struct model *m,
                       struct diags *d)
{
    const char *path = s->path;
    int before = d->count;
    unsigned char *data;
    size_t len;
    memset(m, 0, sizeof *m);
    if (source_bytes(s, &data, &len, d) < 0) {
        return d->count - before;
    }
    if (json_syntax_check(data, len, path, d) != 0) {
        free(data);
        return d->count - before;
    }
    len = json_surrogates(data, len);
    yaml_parser_t parser;
    struct doc doc;
    memset(&doc, 0, sizeof doc);
    if (!yaml_parser_initialize(&parser)) {
        free(data);
        diag_error(d, path, (struct mark){0, 0}, "out of memory");
        return d->count - before;
    }
    yaml_parser_set_input_string(&parser, data, len);
    if (doc_compose(&parser, &doc, path, data, len, d) == 0) {
        struct config c;
        memset(&c, 0, sizeof c);
        c.r.doc = &doc;
        c.r.path = path;
        c.r.d = d;
        c.root = doc.root;
        if (!doc.stream_ended) {
            doc_check_rest(&parser, path, data, len, d);
        }
        if (doc.root.node < 0 || !is_kind(&c.r, doc.root, NODE_MAPPING)) {
            char tmp[128];
            diag_error(d, path, doc.root.node < 0 ? (struct mark){1, 1}
                                                  : at(&c.r, doc.root),
                       "expected a JSON object (a model's config.json), "
                       "found %s",
                       doc.root.node < 0
                           ? "nothing"
                           : json_shown(&c.r, doc.root, tmp, sizeof tmp));
        } else if (d->count == before && map_check_keys(&c.r, c.root)) {
            read_model(&c, m);
        }
    }
    doc_free(&doc);
    yaml_parser_delete(&parser);
    free(data);
    return d->count - before;
}

/* The errors of one read, kept to be reported in file order. */
struct held {
    FILE *out;
    struct held_error {
        struct mark at;
        long end;     /* where its text ends in OUT */
    } *e;
    size_t n, cap;
};

/* diags' `then`: where the error just printed ends. */
static void hold(struct diags *d, const char *file, struct mark at,
                 void *ctx)
{
    struct held *h = ctx;
    (void)d;
    (void)file;
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 16;
        struct held_error *e = realloc(h->e, cap * sizeof *e);
        if (e == NULL) {
            return; /* reported unsorted, as it came */
        }
        h->e = e;
        h->cap = cap;
    }
    fflush(h->out);
    h->e[h->n].at = at;
    h->e[h->n++].end = ftell(h->out);
}

static int before_in_file(struct mark a, struct mark b)
{
    return a.line < b.line || (a.line == b.line && a.col < b.col);
}

/* Reports the held errors of TEXT through D in file order (a stable
 * sort), libyaml's "malformed YAML" said as what it is here. */
static void report_held(const struct held *h, const char *text,
                        const char *path, struct diags *d)
{
    size_t *order = malloc((h->n + 1) * sizeof *order);
    for (size_t i = 0; order != NULL && i < h->n; i++) {
        size_t j = i;
        for (; j > 0 && before_in_file(h->e[i].at, h->e[order[j - 1]].at);
             j--) {
            order[j] = order[j - 1];
        }
        order[j] = i;
    }
    for (size_t k = 0; k < h->n; k++) {
        size_t i = order != NULL ? order[k] : k;
        long start = i ? h->e[i - 1].end : 0;
        const char *msg = strstr(text + start, ": error: ");
        msg = msg != NULL ? msg + 9 : text + start;
        int n = (int)(text + h->e[i].end - msg - 1); /* no newline */
        const char *yaml = "malformed YAML: ";
        if (strncmp(msg, yaml, strlen(yaml)) == 0) {
            msg += strlen(yaml);
            n -= (int)strlen(yaml);
            diag_error(d, path, h->e[i].at, "not JSON: %.*s", n, msg);
        } else {
            diag_error(d, path, h->e[i].at, "%.*s", n, msg);
        }
    }
    free(order);
}

/* Reads S into M, its errors reported through D in file order. */
static int read_in_order(const struct source *s, struct model *m,
                         struct diags *d)
{
    const char *path = s->path;
    char *text = NULL;
    size_t size = 0;
    struct held h = {open_memstream(&text, &size), NULL, 0, 0};
    if (h.out == NULL) {
        return read_config(s, m, d);
    }
    struct diags held = {.out = h.out, .then = hold, .then_ctx = &h};
    int errors = read_config(s, m, &held);
    fclose(h.out);
    if (h.n == (size_t)errors) {
        report_held(&h, text, path, d);
    } else {
        d->count += errors; /* out of memory on the way: as they came */
        if (d->out != NULL) {
            fputs(text, d->out);
        }
    }
    free(h.e);
    free(text);
    return errors;
}

int import_read_config(const char *path, struct model *m, struct diags *d)
{
    struct source s = {path, NULL, 0};
    return read_in_order(&s, m, d);
}

int import_read_config_text(const char *name, const unsigned char *text,
                            size_t len, struct model *m, struct diags *d)
{
    struct source s = {name, text != NULL ? text : (const unsigned char *)"",
                       len};
    return read_in_order(&s, m, d);
}
