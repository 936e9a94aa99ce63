/* bench_opts.c — the benches' option parser (bench_opts.h). */
#include "bench_opts.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int bench_int(const char *s, long long lo, long long hi, long long *v)
{
    if (!s || !*s || (*s != '-' && *s != '+' && (*s < '0' || *s > '9')))
        return -1;
    char *end = NULL;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return -1;
    *v = x;
    return 0;
}

/* A uint64_t, decimal or 0x hexadecimal, nothing after it. */
static int bench_u64(const char *s, uint64_t *v)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || *end)
        return -1;
    *v = (uint64_t)x;
    return 0;
}

static int bench_double(const char *s, double lo, double hi, double *v)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || *end || !isfinite(x) || x < lo || x > hi)
        return -1;
    *v = x;
    return 0;
}

/* The index of word (len bytes) in "a|b|c", or -1. */
static int choice_of(const char *choices, const char *word)
{
    size_t len = strlen(word);
    int i = 0;
    for (const char *p = choices; *p; i++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && !strncmp(p, word, n))
            return i;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

int bench_shapes(const char *s, int64_t (*out)[3], int max, int *n)
{
    int count = 0;
    if (!s || !*s)
        return -1;
    for (const char *p = s;; count++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[96];
        if (len == 0 || len >= sizeof item || count >= max)
            return -1;
        memcpy(item, p, len);
        item[len] = '\0';
        long long d[3];
        int dims = 0;
        for (char *q = item, *x; dims < 3; q = x + 1) {
            x = strchr(q, 'x');
            if (x)
                *x = '\0';
            if (*q == '-' || *q == '+' || bench_int(q, 1, INT_MAX, &d[dims++]))
                return -1;
            if (!x)
                break;
            if (dims == 3)
                return -1; /* a fourth dimension */
        }
        if (dims == 2)
            return -1;
        out[count][0] = d[0];
        out[count][1] = dims == 3 ? d[1] : d[0];
        out[count][2] = dims == 3 ? d[2] : d[0];
        if (!comma)
            break;
        p = comma + 1;
    }
    *n = count + 1;
    return 0;
}

/* What an option takes, for its refusal. */
static void takes(const bench_opt *o, char *buf, size_t len)
{
    switch (o->kind) {
    case BENCH_INT:
    case BENCH_I64:
        snprintf(buf, len, "an integer in %lld..%lld", o->lo, o->hi);
        break;
    case BENCH_U64:
        snprintf(buf, len, "an integer in 0..18446744073709551615 (decimal or 0x hexadecimal)");
        break;
    case BENCH_DOUBLE:
        snprintf(buf, len, "a number in %g..%g", o->dlo, o->dhi);
        break;
    case BENCH_STRING:
        snprintf(buf, len, "a value that is not empty");
        break;
    case BENCH_CHOICE: {
        size_t at = (size_t)snprintf(buf, len, "one of ");
        for (const char *c = o->choices; *c && at + 1 < len; c++, at++)
            buf[at] = *c == '|' ? ',' : *c;
        buf[at < len ? at : len - 1] = '\0';
        break;
    }
    default:
        buf[0] = '\0';
    }
}

/* Takes value for o; NULL when it was taken, else what o takes (in buf). */
static const char *take(const bench_opt *o, const char *value, char *buf, size_t len)
{
    long long ll;
    int ok = -1;
    switch (o->kind) {
    case BENCH_INT:
        if (!(ok = bench_int(value, o->lo, o->hi, &ll)))
            *(int *)o->dest = (int)ll;
        break;
    case BENCH_I64:
        if (!(ok = bench_int(value, o->lo, o->hi, &ll)))
            *(int64_t *)o->dest = (int64_t)ll;
        break;
    case BENCH_U64:
        ok = bench_u64(value, (uint64_t *)o->dest);
        break;
    case BENCH_DOUBLE:
        ok = bench_double(value, o->dlo, o->dhi, (double *)o->dest);
        break;
    case BENCH_STRING:
        if (value[0]) {
            *(const char **)o->dest = value;
            ok = 0;
        }
        break;
    case BENCH_CHOICE: {
        int i = choice_of(o->choices, value);
        if (i >= 0) {
            *(int *)o->dest = i;
            ok = 0;
        }
        break;
    }
    case BENCH_CALL: {
        const char *why = o->call(value, o->dest);
        if (why) {
            snprintf(buf, len, "%s", why);
            return buf;
        }
        return NULL;
    }
    case BENCH_FLAG:
        break;
    }
    if (ok == 0)
        return NULL;
    takes(o, buf, len);
    return buf;
}

int bench_parse(const char *tool, const char *usage, const bench_opt *opts, int argc, char **argv,
                FILE *err)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (err)
                fputs(usage, stdout);
            return 0;
        }
        if (strncmp(a, "--", 2) || !a[2]) {
            if (err)
                fprintf(err, "%s: unexpected argument '%s' (%s --help lists the options)\n", tool,
                        a, tool);
            return 2;
        }
        const char *eq = strchr(a, '=');
        size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
        const bench_opt *o = opts;
        while (o->name && (strlen(o->name) != nlen || strncmp(o->name, a, nlen)))
            o++;
        if (!o->name) {
            if (err)
                fprintf(err, "%s: unknown option '%.*s' (%s --help lists the options)\n", tool,
                        (int)nlen, a, tool);
            return 2;
        }
        if (o->kind == BENCH_FLAG) {
            if (eq) {
                if (err)
                    fprintf(err, "%s: %s takes no value\n", tool, o->name);
                return 2;
            }
            if (o->call)
                o->call(NULL, o->dest);
            else
                *(int *)o->dest = 1;
            continue;
        }
        const char *value = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!value) {
            if (err)
                fprintf(err, "%s: %s needs a value\n", tool, o->name);
            return 2;
        }
        char why[256];
        if (take(o, value, why, sizeof why)) {
            if (err)
                fprintf(err, "%s: %s takes %s, not '%s'\n", tool, o->name, why, value);
            return 2;
        }
    }
    return BENCH_GO;
}
