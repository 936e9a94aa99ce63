/* knobs_parse.c — the knobs' parse (dd_knobs.h), pure: a value's string
 * read by its table entry's type (dd_knob_parse), and the type and range
 * columns that --help-env and the warnings show.  No environment, no
 * state: knobs.c reads the values and keeps what was parsed; test_knobs.c
 * calls these directly. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "dd_knobs.h"
#include "knobs_impl.h"

const char *dd_knob_type_name(dd_knob_type t)
{
    static const char *const names[] = {"int", "size", "bool", "string", "choice"};
    return (int)t >= 0 && t <= DD_KNOB_CHOICE ? names[t] : "?";
}

void dd_knob_range(const dd_knob_spec *s, char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = '\0';
    size_t n = 0;
    switch (s->type) {
    case DD_KNOB_INT:
    case DD_KNOB_SIZE:
        snprintf(buf, len, "%lld..%lld%s%s%s", s->lo, s->hi, s->unit ? " " : "",
                 s->unit ? s->unit : "", s->flags & DD_KNOB_AUTO ? " or auto" : "");
        break;
    case DD_KNOB_BOOL:
        snprintf(buf, len, "0|1");
        break;
    case DD_KNOB_STRING:
        snprintf(buf, len, "%s", s->unit ? s->unit : "any");
        break;
    case DD_KNOB_CHOICE:
        for (int i = 0; s->choices && s->choices[i]; i++) {
            int w = snprintf(buf + n, len - n, "%s%s", i ? "|" : "", s->choices[i]);
            if (w < 0 || (size_t)w >= len - n)
                break;
            n += (size_t)w;
        }
        break;
    }
}

/* Plain decimal digits (a leading '-' where sign) into *v; -1 malformed,
 * -2 beyond long long. */
int dd_knob_whole_number(const char *s, int sign, long long *v)
{
    int neg = sign && *s == '-';
    s += neg;
    if (!*s)
        return -1;
    unsigned long long x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (x > ((unsigned long long)LLONG_MAX + (unsigned)neg - d) / 10)
            return -2;
        x = x * 10 + d;
    }
    *v = neg ? (long long)(0 - x) : (long long)x;
    return 0;
}

int dd_knob_parse(const dd_knob_spec *s, const char *raw, long long *v, char *why, size_t len)
{
    const char *bad = NULL;
    if ((s->flags & DD_KNOB_AUTO) && !strcmp(raw, "auto")) {
        *v = s->dflt;
        return 1;
    }
    switch (s->type) {
    case DD_KNOB_INT:
    case DD_KNOB_SIZE: {
        long long x = 0;
        int r = dd_knob_whole_number(raw, s->type == DD_KNOB_INT, &x);
        if (r == -1)
            bad = "is not a whole number";
        else if (r == -2 || x < s->lo || x > s->hi)
            bad = "is out of range";
        else
            *v = x;
        break;
    }
    case DD_KNOB_BOOL: {
        static const char *const yes[] = {"1", "yes", "true", "on"}, *const no[] = {"0", "no",
                                                                                    "false", "off"};
        bad = "is not a boolean";
        for (int i = 0; i < 4 && bad; i++)
            if (!strcasecmp(raw, yes[i]) || !strcasecmp(raw, no[i])) {
                *v = !strcasecmp(raw, yes[i]);
                bad = NULL;
            }
        break;
    }
    case DD_KNOB_STRING:
        *v = 0;
        break;
    case DD_KNOB_CHOICE:
        bad = "is not one of the choices";
        for (int i = 0; s->choices && s->choices[i] && bad; i++)
            if (!strcmp(raw, s->choices[i])) {
                *v = i;
                bad = NULL;
            }
        break;
    }
    if (bad) {
        snprintf(why, len, "%s", bad);
        return -1;
    }
    return 0;
}
