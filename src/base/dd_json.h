/* dd_json.h — the one JSON writer of the project: the run record
 * (src/driver/report_json.c) and the benches' records use it, so every record escapes
 * strings and writes numbers the same way. */
#ifndef DD_JSON_H
#define DD_JSON_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A JSON string with ", \ and control characters escaped; NULL → null. */
void dd_json_str(FILE *f, const char *s);
/* A number with 9 significant digits; NaN and ±Inf → null. */
void dd_json_num(FILE *f, double v);
/* A number with `digits` significant digits (a bench's records keep the
 * digits of the results already recorded); NaN and ±Inf → null. */
void dd_json_num_g(FILE *f, double v, int digits);
/* ,"key":"value" and ,"key":number — a record's fields after its first;
 * kv_int writes a whole number exactly (kv_num would round past 9 digits). */
void dd_json_kv_str(FILE *f, const char *key, const char *v);
void dd_json_kv_num(FILE *f, const char *key, double v);
void dd_json_kv_num_g(FILE *f, const char *key, double v, int digits);
void dd_json_kv_int(FILE *f, const char *key, long long v);

#ifdef __cplusplus
}
#endif

#endif
