/* attention_fields.h - what attention and attention_backward read of
 * their shared fields (heads, kv_heads, head_dim, causal, scale, window,
 * softcap): the values, their checks, which keys a query sees, and the
 * shape as bench prints it. */
#ifndef SPECL_ATTENTION_FIELDS_H
#define SPECL_ATTENTION_FIELDS_H

#include <stddef.h>

#include "op.h"

/* What runs the kernels that can take tensor cores (the knob engine of
 * both ops): float multiply-adds on every device, or m16n8k16 products
 * on NVIDIA compute capability 8.0+, or warpgroup products on 9.0 (the
 * forward's prefill, the backward's dq, dk and dv). */
enum { ATTN_SIMT, ATTN_MMA, ATTN_WGMMA };
extern const char *const attn_engine_choices[];

/* Whether the kernels on warpgroups (both ops') take a head of D
 * elements: their tiles lie in blocks of 64, their outputs are
 * m64nDk16 products' (at 256 two warpgroups share the backward's). */
int attn_wgmma_head(long d);

/* The fields both ops take, as the spec reader knows them. */
#define ATTN_N_FIELDS 7
extern const struct param_def attn_fields[ATTN_N_FIELDS];

long attn_heads(const struct kernel_spec *ks);
/* kv_heads, heads where the spec leaves it out */
long attn_kv_heads(const struct kernel_spec *ks);
long attn_head_dim(const struct kernel_spec *ks);
int attn_causal(const struct kernel_spec *ks);
/* The scale as the kernels hold it: the spec's, else 1/sqrt(head_dim). */
double attn_scale(const struct kernel_spec *ks);

/* The checks of the shared fields: kv_heads divides heads, a window needs
 * causal, a softcap of 0 or a float's reciprocal, a scale other than 0. */
void attn_check_fields(const struct kernel_spec *ks, struct diags *d);

/* The keys [*LO, *HI) of SEQ_KV that the query at position POS sees:
 * the mask leaves one run of them (*LO == *HI: none). */
void attn_visible_keys(const struct kernel_spec *ks, long pos, long seq_kv,
                       long *lo, long *hi);

/* The (query, key) pairs a mask leaves visible at SEQ_Q queries over
 * SEQ_KV keys, counted exactly. */
double attn_visible_pairs(const struct kernel_spec *ks, long seq_q,
                          long seq_kv);

/* What both ops' plans and bench share; SIZES are (batch, seq_q,
 * seq_kv), the runtime sizes of both.
 *
 * The naive launch just added to P: a work-item per element of runtime
 * size SEQ (1: seq_q, 2: seq_kv) in dimension 0 (the kernel reads it
 * from there), one per (batch, head) of HEADS heads in dimension 1. */
void attn_naive_grid(struct plan *p, int seq, size_t heads);

/* Every buffer once, and PER flops per (visible pair, head, element of
 * the head). */
void attn_costs(const struct kernel_spec *ks, const size_t *sizes,
                double per, double *bytes, double *flops);

/* Batch 1 (--rows sets it), seq_q = seq_kv = SEQ for heads * head_dim
 * >= 1024 (a model's), heads * head_dim (at least 16) below, so that
 * small specs check fast. */
void attn_bench_sizes(const struct kernel_spec *ks, size_t *sizes, long seq);

/* "B=.. Sq=.. Skv=.. H=../.. D=..( causal)" of SIZES (batch, seq_q,
 * seq_kv). */
void attn_shape_text(const struct kernel_spec *ks, const size_t *sizes,
                     char *buf, size_t size);

#endif
