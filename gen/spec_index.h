/* spec_index.h - the index of kernel names that finds clashes across files
 * (spec_index.c): a part of the spec reader, for spec*.c only. */
#ifndef SPECL_SPEC_INDEX_H
#define SPECL_SPEC_INDEX_H

#include "diag.h"
#include "op.h"
#include "spec_strmap.h"

struct name_entry {
    char name[SPECL_NAME_MAX];
    const char *file;
    struct mark mark; /* of the kernel */
};

/* Kernel P emits symbols P_t for t in T: its host API, its header's
 * constants, the names of its NAME.c (stub_suffix: unity builds
 * compile several in one unit), and its naive stub P_naive with the same
 * symbols. A kernel named P_S clashes with P when P_S or one of its own
 * symbols P_S_t2 is one of P's: when S is a tail of T, that is, S is in T
 * or t = S_t2 for some t and t2 in T. (stub_lora_delta and stub_lora do
 * not clash.) */
struct spec_names {
    struct name_entry *entry;
    size_t n, cap;
    struct strmap by_name;   /* lower-cased name -> entry */
    struct strmap by_prefix; /* P -> the first entry named P_S, S a tail */
    int covers;              /* the set's kernels the index holds */
};

/* Makes *IX (allocated where NULL) hold exactly the names of the N
 * kernels at KERNEL. */
void spec_names_rebuild(struct spec_names **ix,
                        const struct kernel_spec *kernel, int n);
void spec_names_free(struct spec_names *ix);

/* Reports NAME (at WHERE in PATH, the mark of its value) through D if an
 * earlier kernel of the set or of this file (valid or not) has it, in any
 * case, or if the two clash (see stub_names.h): one is P, the other P_S
 * and S a tail. Else remembers it in IX with KERNEL, the mark of its
 * kernel. Returns 1 if reported. */
int spec_name_clash(struct spec_names *ix, struct diags *d, const char *path,
                    const char *name, struct mark where, struct mark kernel);

/* Whether every character of NAME may be in a C identifier and its length
 * fits. */
int spec_identifier_syntax(const char *name);

#endif
