/* cli_scan.c — argv through getopt_long (cli_impl.h): GNU forms, `--`,
 * abbreviations refused, and one message per mistake. */
#define _GNU_SOURCE /* getopt_long; the build's _XOPEN_SOURCE alone hides it */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli_impl.h"

static int spec_of_letter(int c)
{
    for (int id = 0; id < O_COUNT; id++)
        if (cli_specs[id].letter == c)
            return id;
    return -1;
}

/* getopt_long's table: every long option, in both modes (gen's refusal names the option). */
static void build_longopts(struct option *lo)
{
    int n = 0;
    for (int id = 0; id < O_COUNT; id++) {
        if (cli_specs[id].spelling[1] != '-')
            continue;
        lo[n++] = (struct option){cli_specs[id].spelling + 2,
                                  cli_specs[id].kind == K_FLAG ? no_argument : required_argument,
                                  NULL, 256 + id};
    }
    lo[n] = (struct option){NULL, 0, NULL, 0};
}

/* typed: the argv element getopt_long was reading ("--thr=4"); refuses abbreviations. */
static int check_spelled_out(cli_state *st, int id, const char *typed)
{
    const char *name = cli_specs[id].spelling + 2;
    size_t len = strcspn(typed + 2, "=");
    if (len == strlen(name) && !strncmp(typed + 2, name, len))
        return DD_OK;
    return dd_fail(st->err, DD_EUSAGE,
                   "unknown argument '%.*s': options are not abbreviated (did you mean %s?)",
                   (int)len + 2, typed, cli_specs[id].spelling);
}

/* getopt_long returned '?' or ':'; optopt says which option, 0 for an unknown long one. */
static int getopt_error(cli_state *st, int c, const char *typed)
{
    int id = optopt >= 256 ? optopt - 256 : spec_of_letter(optopt);
    if (optopt >= 256 && check_spelled_out(st, id, typed))
        return DD_EUSAGE;
    if (c == ':')
        return dd_fail(st->err, DD_EUSAGE, "option %s needs a value", cli_specs[id].spelling);
    if (optopt >= 256)
        return dd_fail(st->err, DD_EUSAGE, "option %s takes no value (got '%s')",
                       cli_specs[id].spelling, typed);
    if (optopt && strchr("mnko", optopt)) /* a run's getopt knows no -m -n -k -o */
        return dd_fail(st->err, DD_EUSAGE, "-%c is a gen option: a run takes %s", optopt,
                       optopt == 'o' ? "--out FILE" : "--size M,N,K");
    if (optopt)
        return dd_fail(st->err, DD_EUSAGE, "unknown argument '-%c' (see --help)", optopt);
    return dd_fail(st->err, DD_EUSAGE, "unknown argument '%s' (see --help)", typed);
}

/* A word that is no option's value (getopt_long's "-" mode hands these back in order). */
static int stray_word(cli_state *st, const char *w)
{
    if (!strcmp(w, "gen"))
        return dd_fail(st->err, DD_EUSAGE,
                       "'gen' must be the first argument (dgemm-dist gen --out FILE ...)");
    return dd_fail(st->err, DD_EUSAGE, "unknown argument '%s' (see --help)", w);
}

int cli_scan(cli_state *st, int argc, char **argv)
{
    struct option longopts[O_COUNT + 1];
    build_longopts(longopts);
    /* '-': words come back in order as 1; ':': a missing value returns ':' */
    const char *shorts = st->mode == MODE_GEN ? "-:hqo:m:n:k:" : "-:hq";
    opterr = 0;
    optind = 0; /* a full restart of getopt's state */
    for (;;) {
        int at = optind > 0 ? optind : 1; /* the element being read */
        int c = getopt_long(argc, argv, shorts, longopts, NULL);
        int rc;
        if (c == -1)
            break;
        if (c == 1)
            rc = stray_word(st, optarg);
        else if (c == '?' || c == ':')
            rc = getopt_error(st, c, argv[at]);
        else if (c >= 256)
            rc = check_spelled_out(st, c - 256, argv[at]) ? DD_EUSAGE
                                                          : cli_take_option(st, c - 256, optarg);
        else
            rc = cli_take_option(st, spec_of_letter(c), optarg);
        if (rc)
            return rc;
    }
    if (optind < argc) /* what follows `--` */
        return dd_fail(st->err, DD_EUSAGE,
                       "unexpected argument '%s' after '--': dgemm-dist takes no operands",
                       argv[optind]);
    return DD_OK;
}
