/* emit_caps.c - the stub's own reading of a device's capabilities,
 * written from caps.c's table so that the two cannot differ: each rule
 * the variants ask for becomes one test in NAME_device_caps. */
#include "emit_caps.h"

#include <stdio.h>
#include <string.h>

#include "caps.h"

unsigned stub_caps_asked(const struct emit_variant *ev, int n,
                         unsigned *needed)
{
    unsigned plans = 0, asked = 0;
    for (int v = 0; v < n; v++) {
        plans |= ev[v].plan.needs;
        for (int m = 0; m < ev[v].n_match; m++) {
            asked |= ev[v].match[m].caps;
        }
    }
    if (needed != NULL) {
        *needed = plans;
    }
    return asked | plans;
}

/* NAME_has_extension, and NAME_compute_capability where a rule of ASKED
 * reads it (USES_CC). */
static void extension_helpers(const char *name, int uses_cc, struct buf *out)
{
    buf_printf(out,
        "/* Whether EXT, a space-separated list (NULL: none), holds NAME as "
        "a\n * whole word. */\n"
        "static int %s_has_extension(const char *_ext, const char *_name)\n"
        "{\n"
        "    size_t _n = strlen(_name);\n"
        "    const char *_p = _ext != NULL ? strstr(_ext, _name) : NULL;\n"
        "    for (; _p != NULL; _p = strstr(_p + 1, _name)) {\n"
        "        if ((_p == _ext || _p[-1] == ' ') &&\n"
        "            (_p[_n] == ' ' || _p[_n] == '\\0')) {\n"
        "            return 1;\n"
        "        }\n"
        "    }\n"
        "    return 0;\n"
        "}\n\n", name);
    if (!uses_cc) {
        return;
    }
    buf_printf(out,
        "/* DEV's NVIDIA compute capability as 10 * major + minor (80: "
        "8.0),\n * from cl_nv_device_attribute_query, which EXT lists; 0 "
        "for any\n * other device. */\n"
        "static int %s_compute_capability(cl_device_id _dev, "
        "const char *_ext)\n"
        "{\n"
        "    /* CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV and _MINOR_NV */\n"
        "    const cl_device_info _major_nv = (cl_device_info)0x4000;\n"
        "    const cl_device_info _minor_nv = (cl_device_info)0x4001;\n"
        "    cl_uint _major = 0, _minor = 0;\n"
        "    if (!%s_has_extension(_ext, \"cl_nv_device_attribute_query\") "
        "||\n"
        "        clGetDeviceInfo(_dev, _major_nv, sizeof _major, &_major, "
        "NULL) !=\n"
        "            CL_SUCCESS ||\n"
        "        clGetDeviceInfo(_dev, _minor_nv, sizeof _minor, &_minor, "
        "NULL) !=\n"
        "            CL_SUCCESS) {\n"
        "        return 0;\n"
        "    }\n"
        "    return (int)(_major * 10 + _minor);\n"
        "}\n\n", name, name);
}

/* Rule R as the condition of an if in NAME_device_caps. */
static void rule_condition(const char *name, const struct cap_rule *r,
                           struct buf *out)
{
    const char *and = "";
    if (r->extension != NULL) {
        buf_printf(out, "%s_has_extension(_ext, \"%s\")", name,
                   r->extension);
        and = " && ";
    }
    if (r->cc_min != 0 && r->cc_min == r->cc_max) {
        buf_printf(out, "%s_cc == %d", and, r->cc_min);
    } else if (r->cc_min != 0) {
        buf_printf(out, "%s_cc >= %d", and, r->cc_min);
        if (r->cc_max != 0) {
            buf_printf(out, " && _cc <= %d", r->cc_max);
        }
    }
}

/* The test of NAME_device_caps that grants the capabilities of ASKED
 * whose rule reads as that of rule FIRST (their bits into *DONE). */
static void grant_test(const char *name, unsigned asked, int first,
                       unsigned *done, struct buf *out)
{
    struct buf cond, other;
    unsigned bits = 0;
    char names[128];
    buf_init(&cond);
    rule_condition(name, cap_rule(first), &cond);
    for (int i = first; cap_rule(i) != NULL; i++) {
        const struct cap_rule *r = cap_rule(i);
        buf_init(&other);
        rule_condition(name, r, &other);
        if ((asked & r->bit) && strcmp(buf_str(&cond), buf_str(&other)) == 0) {
            bits |= r->bit;
        }
        buf_free(&other);
    }
    caps_names(bits, names, sizeof names);
    buf_printf(out, "    if (%s) {\n        _have |= 0x%xu; /* %s */\n    }\n",
               buf_str(&cond), bits, names);
    buf_free(&cond);
    *done |= bits;
}

/* NAME_device_caps: the rule of each capability of ASKED, those that
 * read the same in one test. */
static void device_caps_function(const char *name, unsigned asked,
                                 int uses_cc, struct buf *out)
{
    buf_printf(out,
        "/* What DEV offers of the capabilities the variants ask for, "
        "granted by\n * the rules of specl's table (gen/caps.c). */\n"
        "static unsigned %s_device_caps(cl_device_id _dev)\n{\n", name);
    buf_printf(out,
               "    unsigned _have = 0u;\n"
               "    char *_ext = %s_device_text(_dev, "
               "CL_DEVICE_EXTENSIONS);\n",
               name);
    if (uses_cc) {
        buf_printf(out, "    int _cc = %s_compute_capability(_dev, _ext);\n",
                   name);
    }
    unsigned done = 0;
    for (int i = 0; cap_rule(i) != NULL; i++) {
        if ((asked & cap_rule(i)->bit & ~done) != 0) {
            grant_test(name, asked, i, &done, out);
        }
    }
    buf_puts(out, "    free(_ext);\n    return _have;\n}\n");
}

/* TEXT as adjacent C string literals of at most 64 characters, broken
 * after spaces, each line after the first opened by INDENT. */
static void string_lines(const char *text, const char *indent,
                         struct buf *out)
{
    const size_t most = 64;
    for (int first = 1; first || *text != '\0'; first = 0) {
        size_t n = strlen(text);
        if (n > most) {
            n = most;
            while (n > 1 && text[n - 1] != ' ') {
                n--;
            }
            n = n > 1 ? n : most;
        }
        buf_printf(out, "%s\"", first ? "" : indent);
        c_escape(out, text, n);
        buf_puts(out, "\"");
        text += n;
        buf_puts(out, *text != '\0' ? "\n" : "");
    }
}

void stub_caps_code(const char *name, unsigned asked, unsigned needed,
                    struct buf *out)
{
    int uses_cc = 0;
    if (asked == 0) {
        return;
    }
    if (needed != 0) {
        buf_printf(out,
            "/* The capabilities some variant needs to build (bits of "
            "specl's table),\n * and what each is. */\n"
            "static const struct {\n"
            "    unsigned bit;\n"
            "    const char *what;\n"
            "} %s_caps[] = {\n", name);
    }
    for (int i = 0; cap_rule(i) != NULL; i++) {
        const struct cap_rule *r = cap_rule(i);
        if (asked & r->bit) {
            uses_cc |= r->cc_min != 0;
        }
        if (needed & r->bit) {
            char what[256];
            snprintf(what, sizeof what, "%s: %s", r->name, r->what);
            buf_printf(out, "    {0x%xu, ", r->bit);
            string_lines(what, "            ", out);
            buf_puts(out, "},\n");
        }
    }
    if (needed != 0) {
        buf_puts(out, "    {0u, NULL}\n};\n\n");
    }
    extension_helpers(name, uses_cc, out);
    device_caps_function(name, asked, uses_cc, out);
}
