/* suites.h - the CUnit suites of the test driver; each file adds one. */
#ifndef SPECL_TESTS_SUITES_H
#define SPECL_TESTS_SUITES_H

#include <CUnit/CUnit.h>

/* Set by --full: wider sweeps (make test-full). */
extern int test_full;
/* Set by --wide: adds the wide device sweep (make test-wide). */
extern int test_wide;

/* Each returns 0 when the suite was added to the CUnit registry. */
int add_spec_suite(void);     /* test_spec.c: reader, bad-spec fixtures */
int add_emit_suite(void);     /* test_emit.c: golden files, determinism */
/* test_resolve.c: the emit suite's tests of resolved conditionals */
int add_resolve_tests(CU_pSuite s);
int add_prune_tests(CU_pSuite s);
/* test_layout.c: the emitted C laid out, added to the emit suite. */
int add_layout_tests(CU_pSuite s);
int add_syntax_suite(void);   /* test_syntax.c: libclang, no device */
int add_numeric_suite(void);  /* test_numeric.c: PoCL vs naive vs float64 */
int add_sweep_suite(void);    /* test_sweep.c: shapes, ranks, options */
int add_stub_suite(void);     /* test_stub.c: host stub contract, vendor */
int add_tune_suite(void);     /* test_tune.c: tuner, tuning database */
int add_wide_suite(void);     /* test_wide.c: wide sweep, --wide only */
int add_cli_suite(void);      /* test_cli.c: command line, build systems */
int add_caps_suite(void);     /* test_caps.c: capability table, no device */
int add_import_suite(void);   /* test_import.c: specl import, no device */

/* test_import.c: an imported spec's kernels run, added to the numeric
 * suite. */
int add_import_numeric_tests(CU_pSuite s);
/* test_defaults.c: defaults: of any field, added to the spec suite. */
int add_defaults_spec_tests(CU_pSuite s);
/* test_sizes.c: the runtime model beyond rows (op_gather.c's op), added
 * to the numeric and tune suites S. Return 0 when added. */
int add_sizes_numeric_tests(CU_pSuite s);
int add_sizes_tune_tests(CU_pSuite s);
/* test_ladder.c: tune --rows over a ladder of row counts, and the rows
 * ranges gen --db makes of it, added to the tune suite. */
int add_ladder_tune_tests(CU_pSuite s);
/* test_gated.c: swiglu and swiglu_backward, added to the numeric suite. */
int add_gated_numeric_tests(CU_pSuite s);
/* test_add_norm.c: add_rmsnorm, added to the numeric suite. */
int add_add_norm_numeric_tests(CU_pSuite s);
/* The same on the split path, added after the numeric suite's others so
 * that their inputs' seeds stay as they were. */
int add_add_norm_split_numeric_tests(CU_pSuite s);
/* test_rope.c: rope, added to the numeric suite. */
int add_rope_numeric_tests(CU_pSuite s);
/* test_norm_backward.c: rmsnorm_backward and layernorm_backward, added to
 * the numeric suite. */
int add_norm_backward_numeric_tests(CU_pSuite s);
/* test_softmax_split.c: softmax's split path, added to the numeric
 * suite. */
int add_softmax_split_numeric_tests(CU_pSuite s);
/* test_norm_split.c: the split path of rmsnorm, layernorm and
 * add_rmsnorm, added to the numeric suite after its others (their seeds
 * count the cases run before them). */
int add_norm_split_numeric_tests(CU_pSuite s);
/* test_cross_entropy.c: cross_entropy, added to the numeric suite. */
int add_cross_entropy_numeric_tests(CU_pSuite s);
/* test_attention.c: attention, added to the numeric suite. */
int add_attention_numeric_tests(CU_pSuite s);
int add_attention_backward_numeric_tests(CU_pSuite s);
/* test_tma_maps.c: tma_ptx.cl's tensor maps against the CUDA driver's,
 * added to the numeric suite. */
int add_tma_numeric_tests(CU_pSuite s);

#endif
