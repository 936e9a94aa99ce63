/* json.c — JSON strings and numbers (dd_json.h). */
#include <math.h>

#include "dd_json.h"

void dd_json_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", f);
        else if (ch == '\t')
            fputs("\\t", f);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

void dd_json_num_g(FILE *f, double v, int digits)
{
    if (isfinite(v))
        fprintf(f, "%.*g", digits, v);
    else
        fputs("null", f);
}

void dd_json_num(FILE *f, double v)
{
    dd_json_num_g(f, v, 9);
}

void dd_json_kv_str(FILE *f, const char *key, const char *v)
{
    fprintf(f, ",\"%s\":", key);
    dd_json_str(f, v);
}

void dd_json_kv_num(FILE *f, const char *key, double v)
{
    fprintf(f, ",\"%s\":", key);
    dd_json_num(f, v);
}

void dd_json_kv_num_g(FILE *f, const char *key, double v, int digits)
{
    fprintf(f, ",\"%s\":", key);
    dd_json_num_g(f, v, digits);
}

void dd_json_kv_int(FILE *f, const char *key, long long v)
{
    fprintf(f, ",\"%s\":%lld", key, v);
}
