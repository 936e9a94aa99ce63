/* cli_scalar.c — --alpha and --beta (cli_impl.h): a finite real or complex
 * number in the forms Python and numpy write (parse_scalar), taken into
 * dd_run_opts for cli.c's cli_take_option. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_impl.h"

/* One finite number by strtod's syntax, from s; *end after it.  -1 when
 * none starts at s (strtod's leading white space refused too) or it is
 * not finite. */
static int part_of(const char *s, double *x, const char **end)
{
    char *e = NULL;
    if (!*s || strchr(" \t\n\v\f\r", *s))
        return -1;
    *x = strtod(s, &e);
    *end = e;
    return e == s || !isfinite(*x) ? -1 : 0;
}

static int is_unit(char ch)
{
    return ch == 'i' || ch == 'j';
}

/* K_REAL: a finite real or complex number, nothing before or after:
 *   RE           1, -0.5, 2.5e-3 (strtod's syntax, as every part)
 *   IMi          0.5i, -2i; i, -i alone: 1i, -1i
 *   RE+IMi       2-0.5i, -1+2i, 1e-3+i; j for i as numpy and Python
 *                write it (1+2j), and the whole in parentheses as they
 *                print it ((1+2j)).
 * A value with an imaginary part is for the complex types: the driver
 * refuses it on real data once it knows the inputs' type (--in's file). */
static int parse_scalar(const char *v, double *re, double *im)
{
    char buf[256];
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '(' && v[n - 1] == ')') {
        if (n - 2 >= sizeof buf)
            return -1;
        memcpy(buf, v + 1, n - 2);
        buf[n - 2] = '\0';
        v = buf;
    }
    const char *p = v, *end;
    double x = 0, y = 0;
    if ((*p == '+' || *p == '-') && is_unit(p[1]) && !p[2]) { /* +i, -i */
        *re = 0;
        *im = *p == '-' ? -1 : 1;
        return 0;
    }
    if (is_unit(*p) && !p[1]) { /* i */
        *re = 0;
        *im = 1;
        return 0;
    }
    if (part_of(p, &x, &end))
        return -1;
    if (!*end) { /* RE */
        *re = x;
        *im = 0;
        return 0;
    }
    if (is_unit(*end) && !end[1]) { /* IMi */
        *re = 0;
        *im = x;
        return 0;
    }
    if (*end != '+' && *end != '-') /* anything else after RE */
        return -1;
    if (is_unit(end[1]) && !end[2]) /* RE+i, RE-i */
        y = *end == '-' ? -1 : 1;
    else if (end[1] == '+' || end[1] == '-' || part_of(end, &y, &end) || !is_unit(*end) || end[1])
        return -1; /* one sign between the parts, one i or j at the end */
    *re = x;
    *im = y;
    return 0;
}

int cli_take_real(cli_state *st, int id, const char *v)
{
    double re = 0, im = 0;
    if (parse_scalar(v, &re, &im))
        return dd_fail(st->err, DD_EUSAGE,
                       "bad value '%s' for %s: expected a finite number, e.g. 1, -0.5 or 2.5e-3, "
                       "or for complex data (--dtype c128|c64) RE+IMi, RE-IMi or IMi with finite "
                       "parts, e.g. 2-0.5i, 0.5i or (1+2j)",
                       v, cli_specs[id].spelling);
    dd_run_opts *r = &st->o->run;
    *(id == O_ALPHA ? &r->alpha : &r->beta) = re;
    *(id == O_ALPHA ? &r->alpha_im : &r->beta_im) = im;
    return DD_OK;
}
