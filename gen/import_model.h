/* import_model.h - what `specl import` knows of a model: the decoder
 * families, a config.json read into a struct model (import_config.c) and
 * the spec written from it (import_spec.c). The command line is
 * import.c. */
#ifndef SPECL_IMPORT_MODEL_H
#define SPECL_IMPORT_MODEL_H

#include "buf.h"
#include "diag.h"
#include "op.h"

/* The projections a LoRA adapter may sit on, as --targets names them. */
enum target_proj { T_Q, T_K, T_V, T_O, T_GATE, T_UP, T_DOWN, N_TARGET_PROJ };
#define TARGET_BIT(t) (1u << (t))

/* The widths a projection reads or writes. */
enum width {
    W_HIDDEN,   /* hidden_size */
    W_Q,        /* heads * head_dim */
    W_KV,       /* kv_heads * head_dim */
    W_QKV,      /* (heads + 2 kv_heads) * head_dim: phi3's fused qkv_proj */
    W_INTER,    /* intermediate_size */
    W_GATE_UP   /* 2 * intermediate_size: phi3's fused gate_up_proj */
};

/* One projection of a layer: a module of the checkpoint. */
struct proj {
    const char *module;  /* "q_proj" */
    unsigned targets;    /* the --targets that select it (TARGET_BIT) */
    enum width in, out;
};

/* Which layers attend through a sliding window. */
enum window_rule {
    WINDOW_NONE,      /* none: sliding_window is not read */
    WINDOW_ALL,       /* every layer, when sliding_window is not null */
    WINDOW_OPT_IN,    /* qwen2: the layers from max_window_layers on, when
                         use_sliding_window is true */
    WINDOW_ALTERNATE, /* gemma2: every other layer (even ones), the rest
                         global */
    WINDOW_PATTERN    /* gemma3: as layer_types says, else every
                         sliding_window_pattern-th layer global (6 when
                         absent), the rest local */
};

/* What a family does that the ops cannot say (notes in the spec). */
enum quirk {
    QUIRK_QKV_BIAS = 1,      /* q, k and v projections carry a bias */
    QUIRK_NORM_PLUS_ONE = 2, /* RMS norm weight is 1 + the checkpoint's */
    QUIRK_EMBED_SCALE = 4,   /* embeddings times sqrt(hidden_size) */
    QUIRK_SANDWICH = 8,      /* norms after attention and MLP as well */
    QUIRK_FUSED = 16,        /* fused qkv_proj and gate_up_proj */
    QUIRK_QK_NORM = 32,      /* q and k RMS-normed per head before rope */
    QUIRK_LOCAL_ROPE = 64    /* the sliding-window layers' rope at
                                rope_local_base_freq, unscaled */
};

/* A model family, by config.json's model_type. */
struct family {
    const char *model_type;
    const char *architecture;     /* for the spec's header */
    const struct proj *proj;      /* NULL-module-terminated */
    const char *act_key[2];       /* the activation's keys, in order */
    const char *act_default;      /* transformers' default activation */
    int head_dim_required;        /* head_dim is not hidden / heads */
    int tied_default;             /* tie_word_embeddings when absent */
    enum window_rule window;
    unsigned quirks;              /* enum quirk bits */
    double theta_default;         /* rope_theta when absent */
};

/* rope_scaling as read. */
enum rope_scaling_kind { SCALING_NONE, SCALING_LINEAR, SCALING_LLAMA3,
                         SCALING_OTHER };

/* What the spec needs of a config.json. */
struct model {
    const struct family *family;
    long hidden, intermediate, heads, kv_heads, head_dim, layers, vocab;
    long rotary_dim;              /* head_dim unless partial_rotary_factor */
    double eps, theta;
    int theta_given;
    enum rope_scaling_kind scaling;
    char scaling_name[32];        /* as the config names it */
    double factor, low_freq, high_freq;
    long original_max;
    long window;                  /* 0: none */
    long window_from;             /* WINDOW_OPT_IN: the first such layer */
    long window_every;            /* WINDOW_PATTERN: every Nth layer global;
                                     0 where layer_types says which */
    long local_layers, global_layers; /* WINDOW_PATTERN by layer_types */
    double local_theta;           /* QUIRK_LOCAL_ROPE: rope_local_base_freq */
    double attn_softcap, final_softcap; /* 0: none */
    double query_scalar;          /* query_pre_attn_scalar; 0: none */
    char activation[32];          /* the config's name */
    const char *act;              /* swiglu's: silu, gelu_tanh, gelu */
    int act_given;
    int tied;
    int attn_bias;                /* attention_bias: q, k, v, o biases */
};

/* The families import knows, NULL-model_type-terminated. */
extern const struct family import_families[];

/* Reads config.json at PATH into M, reporting every problem through D
 * (at the value's line:col). Returns the number of errors. */
int import_read_config(const char *path, struct model *m, struct diags *d);

/* The same for LEN bytes at TEXT, named NAME in the messages. */
int import_read_config_text(const char *name, const unsigned char *text,
                            size_t len, struct model *m, struct diags *d);

/* What the command line asks of the spec. */
struct import_options {
    long rank;
    double alpha;
    enum dtype dtype;
    unsigned targets;          /* TARGET_BIT mask */
    int train;
    const char *prefix;        /* kernel names' prefix; NULL: model_type */
    const char *config_path;   /* for the header */
};

/* Appends the spec of M under O to OUT, and says in *WRITTEN and
 * *N_LEFT_OUT how many kernels it wrote, and how many it left as comments
 * (ops or fields this specl lacks); LEFT_WHY (unless NULL) gets why, in
 * the comments' words, each reason once, "; " between them. Returns 0,
 * or -1 after a message on stderr, naming the config (a rank past a
 * projection's width). */
int import_write_spec(const struct model *m, const struct import_options *o,
                      struct buf *out, int *written, int *n_left_out,
                      struct buf *left_why);

#endif
