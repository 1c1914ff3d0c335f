/* gen_in_place.c - writes stub_in_place.{c,h,cl} into DIR: stub_softmax
 * of tests/stubs.yaml with y allowed in place of x (may_alias), as an op
 * whose kernels work in place emits it, so that the stub suite checks the
 * stub's in-place rules on kernels it can run.
 *
 * Usage: gen_in_place STUBS.yaml DIR */
#include <stdio.h>
#include <string.h>

#include "diag.h"
#include "emit.h"
#include "op.h"
#include "spec.h"

int main(int argc, char **argv)
{
    struct spec_set s;
    struct diags d = {.out = stderr};
    char err[256] = "";
    int rc = 1;
    if (argc != 3) {
        fprintf(stderr, "usage: gen_in_place STUBS.yaml DIR\n");
        return 2;
    }
    spec_set_init(&s);
    if (spec_read_file(&s, argv[1], &d) == 0) {
        for (int k = 0; k < s.n_kernel; k++) {
            struct kernel_spec ks = s.kernel[k];
            struct plan p;
            struct emitted e;
            if (strcmp(ks.name, "stub_softmax") != 0) {
                continue;
            }
            snprintf(ks.name, sizeof ks.name, "stub_in_place");
            memset(&p, 0, sizeof p);
            ks.op->plan(&ks, &p);
            plan_buffer_may_alias(&p, "x");
            if (emit_stub(&ks, ks.name, &p, NULL, &e, err, sizeof err) == 0) {
                rc = emit_write(argv[2], &e, err, sizeof err) == 0 ? 0 : 1;
                emitted_free(&e);
            }
            break;
        }
    }
    if (rc != 0) {
        fprintf(stderr, "gen_in_place: %s\n", err[0] ? err : "no stub_softmax");
    }
    spec_set_free(&s);
    return rc;
}
