/* test_bench_opts.c — the benches' option parser (bench/common/bench_opts.h):
 * what it refuses, with one message naming the option, and what it takes.
 * Refused: a number that is not one ("x", "1e99" for an integer, "", "5x"),
 * out of range ("-1", "0", 2^64, "1e99" and inf for a number), a missing
 * value, an unknown option, a stray argument, a value given to a flag, a
 * word not among the choices, an empty string, shapes that are not N or
 * MxNxK; taken: both spellings (--reps 5, --reps=5), the last of a repeated
 * option, hexadecimal seeds, shape lists.  A refusal prints exactly one
 * line on err (none where err is NULL, the verdict the same) and leaves
 * the option's value as it was. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"
#include "dd_check.h"

static int reps, flag, choice;
static int64_t big;
static uint64_t seed;
static double secs;
static const char *name;
static int64_t shapes[8][3];
static int nshapes;

static const char *take_shapes(const char *v, void *dest)
{
    (void)dest;
    return bench_shapes(v, shapes, 8, &nshapes) ? "N or MxNxK, comma separated" : NULL;
}

static const bench_opt table[] = {
    {"--reps", BENCH_INT, &reps, 1, 100, 0, 0, NULL, NULL},
    {"--big", BENCH_I64, &big, 0, INT64_MAX, 0, 0, NULL, NULL},
    {"--seed", BENCH_U64, &seed, 0, 0, 0, 0, NULL, NULL},
    {"--secs", BENCH_DOUBLE, &secs, 0, 0, 0, 3600, NULL, NULL},
    {"--name", BENCH_STRING, &name, 0, 0, 0, 0, NULL, NULL},
    {"--type", BENCH_CHOICE, &choice, 0, 0, 0, 0, "f64|f32|i8", NULL},
    {"--flag", BENCH_FLAG, &flag, 0, 0, 0, 0, NULL, NULL},
    {"--sizes", BENCH_CALL, NULL, 0, 0, 0, 0, NULL, take_shapes},
    {NULL, BENCH_FLAG, NULL, 0, 0, 0, 0, NULL, NULL}};

static void reset(void)
{
    reps = 7, flag = 0, choice = 0, big = 0, seed = 0, secs = 0, name = NULL, nshapes = 0;
}

/* bench_parse on "bench" and the words of args (space separated, at most
 * 15); err's text into msg. */
static int run(const char *args, char *msg, size_t len, int quiet)
{
    char buf[256], *argv[16] = {"bench"};
    int argc = 1;
    snprintf(buf, sizeof buf, "%s", args);
    for (char *w = strtok(buf, " "); w && argc < 16; w = strtok(NULL, " "))
        argv[argc++] = strcmp(w, "''") ? w : (char *)""; /* '' stands for an empty word */
    char *text = NULL;
    size_t size = 0;
    FILE *err = quiet ? NULL : open_memstream(&text, &size);
    int rc = bench_parse("bench", "usage: bench [options]\n", table, argc, argv, err);
    if (err)
        fclose(err);
    snprintf(msg, len, "%s", text ? text : "");
    free(text);
    return rc;
}

/* args refused: status 2, one line on err naming `names` (the option or
 * the argument), reps untouched; and the same verdict, silent, with err NULL */
static void refused(const char *args, const char *names)
{
    char msg[512];
    reset();
    int rc = run(args, msg, sizeof msg, 0);
    const char *nl = strchr(msg, '\n');
    CHECK(rc == 2, "'%s': status %d, not 2 (%s)", args, rc, msg);
    CHECK(nl && nl[1] == '\0', "'%s': not one line: '%s'", args, msg);
    CHECK(!strncmp(msg, "bench: ", 7) && strstr(msg, names), "'%s': '%s' does not name %s", args,
          msg, names);
    CHECK(reps == 7, "'%s': --reps changed to %d", args, reps);
    reset();
    rc = run(args, msg, sizeof msg, 1);
    CHECK(rc == 2 && msg[0] == '\0', "'%s' with err NULL: status %d, '%s'", args, rc, msg);
}

static void taken(const char *args)
{
    char msg[512];
    reset();
    int rc = run(args, msg, sizeof msg, 0);
    CHECK(rc == BENCH_GO && msg[0] == '\0', "'%s': status %d, '%s'", args, rc, msg);
}

int main(void)
{
    /* numbers that are not numbers, or out of range */
    refused("--reps x", "--reps");
    refused("--reps -1", "--reps");
    refused("--reps 1e99", "--reps");
    refused("--reps 0", "--reps");
    refused("--reps 101", "--reps");
    refused("--reps 5x", "--reps");
    refused("--reps 5.0", "--reps");
    refused("--reps ''", "--reps");
    refused("--reps=", "--reps");
    refused("--reps 99999999999999999999", "--reps");
    refused("--big -1", "--big");
    refused("--big 9223372036854775808", "--big");
    refused("--seed -1", "--seed");
    refused("--seed 18446744073709551616", "--seed");
    refused("--seed 0x", "--seed");
    refused("--secs 1e99", "--secs");
    refused("--secs -0.5", "--secs");
    refused("--secs inf", "--secs");
    refused("--secs nan", "--secs");
    refused("--secs 3x", "--secs");
    /* missing values, unknown options, stray words */
    refused("--reps", "--reps");
    refused("--flag --reps", "--reps");
    refused("--bogus", "--bogus");
    refused("--bogus=3", "--bogus");
    refused("--rep 5", "--rep");
    refused("-r 5", "-r");
    refused("5", "'5'");
    refused("--", "'--'");
    refused("--flag=1", "--flag");
    /* choices, strings, shapes */
    refused("--type f16", "--type");
    refused("--type F64", "--type");
    refused("--name ''", "--name");
    refused("--sizes 0", "--sizes");
    refused("--sizes 1x2", "--sizes");
    refused("--sizes 1x2x3x4", "--sizes");
    refused("--sizes 4096x", "--sizes");
    refused("--sizes 1,,2", "--sizes");
    refused("--sizes -5", "--sizes");
    refused("--sizes 3000000000", "--sizes");
    refused("--sizes 1e3", "--sizes");

    /* what is taken, and where it goes */
    taken("--reps 5");
    CHECK(reps == 5, "--reps 5: %d", reps);
    taken("--reps=6");
    CHECK(reps == 6, "--reps=6: %d", reps);
    taken("--reps 5 --reps 9");
    CHECK(reps == 9, "the last --reps counts: %d", reps);
    taken("--big 9223372036854775807 --seed 0x10 --secs 2.5 --name a --type i8 --flag");
    CHECK(big == INT64_MAX && seed == 16 && secs == 2.5 && name && !strcmp(name, "a") &&
              choice == 2 && flag == 1,
          "values: %lld %llu %g %s %d %d", (long long)big, (unsigned long long)seed, secs,
          name ? name : "(null)", choice, flag);
    taken("--seed 18446744073709551615");
    CHECK(seed == UINT64_MAX, "--seed 2^64-1: %llu", (unsigned long long)seed);
    taken("--sizes 4096,8x9x10");
    CHECK(nshapes == 2 && shapes[0][0] == 4096 && shapes[0][1] == 4096 && shapes[0][2] == 4096 &&
              shapes[1][0] == 8 && shapes[1][1] == 9 && shapes[1][2] == 10,
          "--sizes 4096,8x9x10: %d shapes", nshapes);
    taken("");
    CHECK(reps == 7, "no options: --reps %d", reps);

    /* --help: status 0, nothing on err */
    char msg[512];
    reset();
    int rc = run("--reps 5 --help --bogus", msg, sizeof msg, 0);
    CHECK(rc == 0 && msg[0] == '\0', "--help: status %d, '%s'", rc, msg);

    /* bench_int alone */
    long long v = 0;
    CHECK(bench_int("-3", -5, 5, &v) == 0 && v == -3, "bench_int -3: %lld", v);
    CHECK(bench_int(" 3", 0, 5, &v) == -1, "bench_int ' 3' taken");
    CHECK(bench_int("", 0, 5, &v) == -1, "bench_int '' taken");
    CHECK(bench_int(NULL, 0, 5, &v) == -1, "bench_int NULL taken");
    printf("test_bench_opts: %d failed checks\n", g_fail);
    return g_fail != 0;
}
