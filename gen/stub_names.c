/* stub_names.c - the names every emitted NAME.h and NAME.c define, as
 * suffixes of NAME_: one table that the emitter writes by and the spec
 * reader keeps kernel names from clashing by. */
#include "stub_names.h"

#include <stdio.h>

const char *const stub_host_api[] = {
    "create", "create_variant", "variant", "enqueue", "enqueue_scratch",
    "scratch_bytes", "clone", "build_log", "destroy", "N_VARIANTS",
    "enqueue_array", "scratch_bytes_array", "path_index", "N_SIZES",
    "N_BUFFERS", "variant_at", NULL};

/* The names of NAME.c that NAME.h does not declare, as suffixes of
 * NAME_ (stub_names.h): types, tables and static functions. */
static const char *const stub_suffixes[] = {
    "launch", "path", "variant_def", "match", "limits", "buffer_shape",
    "buffer_shapes",
    "variants", "matches", "log_append", "log_variant", "device_text",
    "read_build_log", "caps", "has_extension", "compute_capability",
    "device_caps", "caps_text", "sm90a_mark", "sm90a_ptx", "rebuild_sm90a",
    "fits", "build_variant",
    "create_in_order", "match_rank", "check_target", "check_buffer",
    "check_queue_and_wait", "mem_origin", "check_aliases", "path_for",
    "sync_fits", "units_fit",
    "coop_spread",
    "path_scratch", "enqueue_launch", "enqueue_buffers", "product", "count",
    "scratch_bytes_at", "sizes_ok", "runs_for", "zeroed", "range", "ranges",
    "create_ranges", "for_rows", NULL};

/* The tables numbered by variant; launches are numbered by variant and
 * path as well, kernel texts (textN) and argument lists (argsN) by their
 * order in NAME.c. */
static const char *const stub_numbered[] = {
    "source", "kernel_names", "kernel_threads", "paths", NULL};

int stub_suffix(int i, char *buf, size_t size)
{
    for (int s = 0; stub_suffixes[s] != NULL; s++, i--) {
        if (i == 0) {
            snprintf(buf, size, "%s", stub_suffixes[s]);
            return 1;
        }
    }
    for (int s = 0; stub_numbered[s] != NULL; s++) {
        if (i < SPECL_MAX_VARIANTS) {
            snprintf(buf, size, "%s%d", stub_numbered[s], i);
            return 1;
        }
        i -= SPECL_MAX_VARIANTS;
    }
    if (i < SPECL_MAX_VARIANTS * SPECL_MAX_PATHS) {
        snprintf(buf, size, "launches%d_%d", i / SPECL_MAX_PATHS,
                 i % SPECL_MAX_PATHS);
        return 1;
    }
    i -= SPECL_MAX_VARIANTS * SPECL_MAX_PATHS;
    if (i < STUB_MAX_TEXTS) {
        snprintf(buf, size, "text%d", i);
        return 1;
    }
    i -= STUB_MAX_TEXTS;
    if (i < STUB_MAX_ARG_LISTS) {
        snprintf(buf, size, "args%d", i);
        return 1;
    }
    return 0;
}
