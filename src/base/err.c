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

/* The public statuses (dgemm_dist.h's dd_status, by value: DD_SUCCESS 0,
 * USAGE 1, MEMORY 2, IO 3, COMM 4, CHECK_FAILED 5, UNSUPPORTED 6, INTERNAL
 * 7, MPI 8) against the codes above, both ways. */
static const int code_by_status[] = {DD_OK,     DD_EUSAGE, DD_ENOMEM, DD_EIO,  DD_ECOMM,
                                     DD_ECHECK, DD_EUNSUP, DD_EFAIL,  DD_EFAIL};

int dd_status_of(int rc)
{
    if (rc == DD_OK)
        return 0;
    for (int s = 1; s < 7; s++)
        if (code_by_status[s] == rc)
            return s;
    return 7; /* internal */
}

int dd_code_of(int status)
{
    int n = (int)(sizeof code_by_status / sizeof code_by_status[0]);
    return status >= 0 && status < n ? code_by_status[status] : DD_EFAIL;
}
