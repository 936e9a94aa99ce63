/* err.c — the one-sentence error value (dd.h). */
#include <stdarg.h>
#include <stdio.h>

#include "dd.h"

int dd_fail(dd_err *e, int code, const char *fmt, ...)
{
    if (e && e->msg[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void dd_err_clear(dd_err *e)
{
    if (e)
        e->msg[0] = '\0';
}
