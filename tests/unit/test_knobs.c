/* test_knobs.c — the environment knobs' registry (src/base/dd_knobs.h).
 *
 *   test-knobs        one process, no MPI: the table (every entry complete,
 *                     its default consistent, in --help-env's order), the
 *                     parse of each type (valid, out of range, malformed,
 *                     "auto"), the range texts, and the registry through
 *                     the environment: defaults when unset, a value parsed
 *                     once, a bad value's warning given exactly once per
 *                     value (naming the knob, the value, the range and what
 *                     is used), strict knobs refused with a message and no
 *                     warning, dd_knobs_warn and dd_knob_reject once.
 *   test-knobs mpi    under mpirun: a getter's warning comes from world
 *                     rank 0 alone, also when a worker thread reads first;
 *                     dd_knobs_warn's from the process told to speak.
 *
 * Each rank's stderr is captured in a file around the calls that may warn
 * (capture_begin / capture_end), and the lines counted. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dd_knobs.h"
#define DD_CHECK_MPI
#include "dd_check.h"

/* ---- stderr captured ---------------------------------------------------------- */

static int saved_fd = -1;
static FILE *cap;
static char captured[8192];

static void capture_begin(void)
{
    fflush(stderr);
    cap = tmpfile();
    saved_fd = dup(2);
    if (!cap || saved_fd < 0 || dup2(fileno(cap), 2) < 0) {
        fprintf(stderr, "test_knobs: cannot capture stderr\n");
        exit(1);
    }
}

/* The text written to stderr since capture_begin, in captured; its lines. */
static int capture_end(void)
{
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    rewind(cap);
    size_t n = fread(captured, 1, sizeof captured - 1, cap);
    captured[n] = '\0';
    fclose(cap);
    int lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += captured[i] == '\n';
    return lines;
}

static int has(const char *needle)
{
    return strstr(captured, needle) != NULL;
}

/* ---- the table -------------------------------------------------------------------- */

static int section(const dd_knob_spec *s)
{
    return s->flags & DD_KNOB_TEST      ? 3
           : s->flags & DD_KNOB_PROGRAM ? 0
           : s->flags & DD_KNOB_LIBRARY ? 1
                                        : 2;
}

static void test_table(void)
{
    int last_section = -1;
    const char *last_name = "";
    CHECK(dd_knob_spec_of(DDK_COUNT) == NULL && dd_knob_spec_of((dd_knob)-1) == NULL,
          "dd_knob_spec_of takes an id out of range");
    for (int k = 0; k < DDK_COUNT; k++) {
        const dd_knob_spec *s = dd_knob_spec_of((dd_knob)k);
        CHECK(s && s->name && !strncmp(s->name, "DD_", 3), "knob %d has no DD_ name", k);
        if (!s || !s->name)
            continue;
        CHECK(s->what && strlen(s->what) > 20, "%s says not what it does", s->name);
        CHECK(s->dflt_text && *s->dflt_text, "%s names no default", s->name);
        CHECK(s->flags & DD_KNOB_READERS, "%s has no reader", s->name);
        int sec = section(s);
        CHECK(sec > last_section || (sec == last_section && strcmp(last_name, s->name) < 0),
              "%s is out of order (by section: program, library, drop-in, test hooks; then by "
              "name)",
              s->name);
        last_section = sec, last_name = s->name;
        char num[32];
        switch (s->type) {
        case DD_KNOB_INT:
        case DD_KNOB_SIZE:
            CHECK(s->lo <= s->hi, "%s: range %lld..%lld", s->name, s->lo, s->hi);
            CHECK(s->type == DD_KNOB_INT || (s->lo >= 0 && s->unit),
                  "%s: a size needs lo >= 0 and a unit", s->name);
            snprintf(num, sizeof num, "%lld", s->dflt);
            if (s->dflt >= s->lo && s->dflt <= s->hi && !(s->flags & DD_KNOB_AUTO))
                CHECK(!strcmp(num, s->dflt_text), "%s: default %lld shown as '%s'", s->name,
                      s->dflt, s->dflt_text);
            else
                CHECK((s->dflt < s->lo || s->dflt > s->hi || (s->flags & DD_KNOB_AUTO)) &&
                           (s->dflt_text[0] < '0' || s->dflt_text[0] > '9'),
                      "%s: default %lld ('%s') is a number of the range, or a word outside it",
                      s->name, s->dflt, s->dflt_text);
            break;
        case DD_KNOB_BOOL:
            CHECK((s->dflt == 0 && !strcmp(s->dflt_text, "0")) ||
                       (s->dflt == 1 && !strcmp(s->dflt_text, "1")) ||
                       (s->dflt == -1 && (s->dflt_text[0] < '0' || s->dflt_text[0] > '9')),
                  "%s: bool default %lld shown as '%s'", s->name, s->dflt, s->dflt_text);
            break;
        case DD_KNOB_CHOICE: {
            int n = 0;
            while (s->choices && s->choices[n])
                n++;
            CHECK(n >= 2 && s->dflt >= 0 && s->dflt < n &&
                       !strcmp(s->choices[s->dflt], s->dflt_text),
                  "%s: default %lld ('%s') is not its choice", s->name, s->dflt, s->dflt_text);
            break;
        }
        case DD_KNOB_STRING:
            CHECK(s->unit && *s->unit, "%s: a string says what it is (unit)", s->name);
            break;
        }
        for (int j = 0; j < k; j++)
            CHECK(strcmp(dd_knob_spec_of((dd_knob)j)->name, s->name), "%s twice", s->name);
    }
    CHECK(!strcmp(dd_knob_spec_of(DDK_FAULT)->name, "DD_FAULT") &&
               (dd_knob_spec_of(DDK_FAULT)->flags & DD_KNOB_TEST),
          "DD_FAULT is not registered as a test hook");
}

/* ---- the parse ---------------------------------------------------------------------- */

static void parse_is(const dd_knob_spec *s, const char *raw, int want_rc, long long want,
                     const char *want_why)
{
    long long v = -777;
    char why[64] = "";
    int rc = dd_knob_parse(s, raw, &v, why, sizeof why);
    CHECK(rc == want_rc, "%s '%s': parse gave %d, not %d", dd_knob_type_name(s->type), raw, rc,
          want_rc);
    if (rc >= 0 && want_rc >= 0)
        CHECK(v == want, "%s '%s': value %lld, not %lld", dd_knob_type_name(s->type), raw, v,
              want);
    if (want_why)
        CHECK(!strcmp(why, want_why), "%s '%s': why '%s', not '%s'", dd_knob_type_name(s->type),
              raw, why, want_why);
}

static void range_is(const dd_knob_spec *s, const char *want)
{
    char r[128];
    dd_knob_range(s, r, sizeof r);
    CHECK(!strcmp(r, want), "range '%s', not '%s'", r, want);
}

static void test_parse(void)
{
    static const char *const words[] = {"a", "bb", NULL};
    const dd_knob_spec i = {
        "DD_T_INT", DD_KNOB_INT, DD_KNOB_LIBRARY | DD_KNOB_AUTO, 3, -5, 10, NULL, NULL,
        "auto",     "x"};
    const dd_knob_spec z = {"DD_T_SIZE", DD_KNOB_SIZE, DD_KNOB_LIBRARY, 64, 1, 4096, "MiB", NULL,
                            "64",        "x"};
    const dd_knob_spec b = {"DD_T_BOOL", DD_KNOB_BOOL, DD_KNOB_LIBRARY, 0, 0, 0, NULL, NULL,
                            "0",         "x"};
    const dd_knob_spec c = {
        "DD_T_CHOICE", DD_KNOB_CHOICE, DD_KNOB_LIBRARY, 0, 0, 0, NULL, words, "a", "x"};
    const dd_knob_spec t = {"DD_T_STRING", DD_KNOB_STRING, DD_KNOB_LIBRARY, 0,  0, 0,
                            "a file",      NULL,           "unset",         "x"};
    const char *range = "is out of range", *number = "is not a whole number";
    /* int: the edges in, one past them out, signs, junk, "auto" */
    parse_is(&i, "0", 0, 0, NULL);
    parse_is(&i, "-5", 0, -5, NULL);
    parse_is(&i, "10", 0, 10, NULL);
    parse_is(&i, "007", 0, 7, NULL);
    parse_is(&i, "11", -1, 0, range);
    parse_is(&i, "-6", -1, 0, range);
    parse_is(&i, "99999999999999999999", -1, 0, range);
    parse_is(&i, "-9223372036854775808", -1, 0, range);
    parse_is(&i, "1x", -1, 0, number);
    parse_is(&i, " 1", -1, 0, number);
    parse_is(&i, "1 ", -1, 0, number);
    parse_is(&i, "+1", -1, 0, number);
    parse_is(&i, "-", -1, 0, number);
    parse_is(&i, "", -1, 0, number);
    parse_is(&i, "0x10", -1, 0, number);
    parse_is(&i, "1.5", -1, 0, number);
    parse_is(&i, "auto", 1, 3, NULL);
    parse_is(&i, "AUTO", -1, 0, number);
    /* size: no sign, its edges, beyond long long */
    parse_is(&z, "1", 0, 1, NULL);
    parse_is(&z, "4096", 0, 4096, NULL);
    parse_is(&z, "0", -1, 0, range);
    parse_is(&z, "4097", -1, 0, range);
    parse_is(&z, "-1", -1, 0, number);
    parse_is(&z, "9223372036854775807", -1, 0, range);
    parse_is(&z, "9223372036854775808", -1, 0, range);
    parse_is(&z, "64MiB", -1, 0, number);
    parse_is(&z, "auto", -1, 0, number); /* no DD_KNOB_AUTO */
    /* bool: every spelling, any case; nothing else */
    const char *yes[] = {"1", "yes", "YES", "true", "True", "on", "On"};
    const char *no[] = {"0", "no", "No", "false", "FALSE", "off", "oFF"};
    for (int k = 0; k < 7; k++) {
        parse_is(&b, yes[k], 0, 1, NULL);
        parse_is(&b, no[k], 0, 0, NULL);
    }
    const char *notbool[] = {"2", "-1", "y", "n", "", "01", "yes!", "enable"};
    for (int k = 0; k < 8; k++)
        parse_is(&b, notbool[k], -1, 0, "is not a boolean");
    /* choice: the index; case counts; "auto" only where a choice */
    parse_is(&c, "a", 0, 0, NULL);
    parse_is(&c, "bb", 0, 1, NULL);
    parse_is(&c, "BB", -1, 0, "is not one of the choices");
    parse_is(&c, "b", -1, 0, "is not one of the choices");
    parse_is(&c, "auto", -1, 0, "is not one of the choices");
    /* string: anything */
    parse_is(&t, "any thing\tat all", 0, 0, NULL);
    range_is(&i, "-5..10 or auto");
    range_is(&z, "1..4096 MiB");
    range_is(&b, "0|1");
    range_is(&c, "a|bb");
    range_is(&t, "a file");
    CHECK(!strcmp(dd_knob_type_name(DD_KNOB_SIZE), "size") &&
               !strcmp(dd_knob_type_name(DD_KNOB_CHOICE), "choice"),
          "type names");
}

/* ---- the registry through the environment ------------------------------------------ */

static void test_defaults(void)
{
    for (int k = 0; k < DDK_COUNT; k++)
        unsetenv(dd_knob_spec_of((dd_knob)k)->name);
    capture_begin();
    int wrong = 0;
    for (int k = 0; k < DDK_COUNT; k++) {
        const dd_knob_spec *s = dd_knob_spec_of((dd_knob)k);
        long long want = s->type == DD_KNOB_STRING ? 0 : s->dflt;
        if (dd_knob_int((dd_knob)k) != want || dd_knob_str((dd_knob)k) ||
            dd_knob_is_set((dd_knob)k))
            wrong++;
        char msg[64] = "untouched";
        if (dd_knob_error((dd_knob)k, msg, sizeof msg) || strcmp(msg, "untouched"))
            wrong++;
    }
    int lines = capture_end();
    CHECK(wrong == 0, "%d knobs unset but not at their defaults", wrong);
    CHECK(lines == 0, "unset knobs warned: %s", captured);
}

static void test_values(void)
{
    /* valid: the value, no word */
    setenv("DD_RING_MIB", "128", 1);
    capture_begin();
    long long v = dd_knob_int(DDK_RING_MIB);
    int lines = capture_end();
    CHECK(v == 128 && lines == 0, "DD_RING_MIB=128 gave %lld and %d lines", v, lines);
    CHECK(dd_knob_is_set(DDK_RING_MIB) && !strcmp(dd_knob_str(DDK_RING_MIB), "128"),
          "DD_RING_MIB=128 is not set as given");
    /* out of range: the default, one warning over many reads */
    setenv("DD_RING_MIB", "0", 1);
    capture_begin();
    for (int k = 0; k < 5; k++)
        v = dd_knob_int(DDK_RING_MIB);
    dd_knob_str(DDK_RING_MIB);
    lines = capture_end();
    CHECK(v == 64, "DD_RING_MIB=0 gave %lld, not the default 64", v);
    CHECK(lines == 1 &&
               has("dgemm-dist: warning: DD_RING_MIB=\"0\" is out of range (1..4096 MiB); using 64 "
                   "(the default)\n"),
          "DD_RING_MIB=0, read 6 times, warned %d times: %s", lines, captured);
    CHECK(!dd_knob_is_set(DDK_RING_MIB) && !dd_knob_str(DDK_RING_MIB),
          "a bad value counts as set");
    /* empty: unset, no word */
    setenv("DD_RING_MIB", "", 1);
    capture_begin();
    v = dd_knob_int(DDK_RING_MIB);
    lines = capture_end();
    CHECK(v == 64 && lines == 0, "DD_RING_MIB='' gave %lld and %d lines", v, lines);
    /* a changed value is parsed anew: a bad one warns again, once */
    setenv("DD_RING_MIB", "0", 1);
    capture_begin();
    dd_knob_int(DDK_RING_MIB);
    dd_knob_int(DDK_RING_MIB);
    setenv("DD_RING_MIB", "lots", 1);
    dd_knob_int(DDK_RING_MIB);
    dd_knob_int(DDK_RING_MIB);
    lines = capture_end();
    CHECK(lines == 2 && has("DD_RING_MIB=\"0\" is out of range") &&
               has("DD_RING_MIB=\"lots\" is not a whole number"),
          "two bad values in turn: %d lines: %s", lines, captured);
    /* a value as a message shows it: one line, control bytes as '?', cut at 64 */
    setenv("DD_RING_MIB", "1\n2", 1);
    capture_begin();
    dd_knob_int(DDK_RING_MIB);
    lines = capture_end();
    CHECK(lines == 1 && has("DD_RING_MIB=\"1?2\""), "a newline in the value: %s", captured);
    char longv[200];
    memset(longv, '9', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    setenv("DD_RING_MIB", longv, 1);
    capture_begin();
    dd_knob_int(DDK_RING_MIB);
    lines = capture_end();
    CHECK(lines == 1 && has("99...\" is out of range") && strlen(captured) < 200,
          "a long value: %s", captured);
    unsetenv("DD_RING_MIB");
    /* bool and choice through the registry */
    setenv("DD_API_TIMING", "yes", 1);
    CHECK(dd_knob_int(DDK_API_TIMING) == 1, "DD_API_TIMING=yes is not on");
    setenv("DD_OZAKI2_INT8", "cublas", 1);
    CHECK(dd_knob_int(DDK_OZAKI2_INT8) == 1 && !strcmp(dd_knob_str(DDK_OZAKI2_INT8), "cublas"),
          "DD_OZAKI2_INT8=cublas");
    setenv("DD_OZAKI2_INT8", "CUBLAS", 1);
    capture_begin();
    v = dd_knob_int(DDK_OZAKI2_INT8);
    lines = capture_end();
    CHECK(v == 0 && lines == 1 &&
               has("DD_OZAKI2_INT8=\"CUBLAS\" is not one of the choices (auto|cublas); using auto "
                   "(the default)"),
          "DD_OZAKI2_INT8=CUBLAS: %lld, %s", v, captured);
    unsetenv("DD_OZAKI2_INT8");
    unsetenv("DD_API_TIMING");
    /* a string's pointer outlives a change of the value */
    setenv("DD_MODEL_RATES", "a.csv", 1);
    const char *p = dd_knob_str(DDK_MODEL_RATES);
    setenv("DD_MODEL_RATES", "b.csv", 1);
    const char *q = dd_knob_str(DDK_MODEL_RATES);
    CHECK(p && q && !strcmp(p, "a.csv") && !strcmp(q, "b.csv"), "strings across a change");
    unsetenv("DD_MODEL_RATES");
}

static void test_strict(void)
{
    char msg[256] = "";
    setenv("DD_IO_THREADS", "four", 1);
    capture_begin();
    long long v = dd_knob_int(DDK_IO_THREADS);
    int bad = dd_knob_error(DDK_IO_THREADS, msg, sizeof msg);
    int lines = capture_end();
    CHECK(v == 0 && bad && lines == 0, "DD_IO_THREADS=four: %lld, error %d, %d lines", v, bad,
          lines);
    CHECK(!strcmp(msg, "DD_IO_THREADS=\"four\" is not a whole number; set it to 1..256 or auto, "
                        "or unset it (dgemm-dist --help-env)"),
          "the refusal says '%s'", msg);
    setenv("DD_IO_THREADS", "257", 1);
    CHECK(dd_knob_error(DDK_IO_THREADS, msg, sizeof msg) && strstr(msg, "is out of range"),
          "DD_IO_THREADS=257: '%s'", msg);
    setenv("DD_IO_THREADS", "3", 1);
    CHECK(!dd_knob_error(DDK_IO_THREADS, msg, sizeof msg) && dd_knob_int(DDK_IO_THREADS) == 3 &&
               dd_knob_is_set(DDK_IO_THREADS),
          "DD_IO_THREADS=3");
    setenv("DD_IO_THREADS", "auto", 1);
    CHECK(!dd_knob_error(DDK_IO_THREADS, msg, sizeof msg) && dd_knob_int(DDK_IO_THREADS) == 0 &&
               !dd_knob_is_set(DDK_IO_THREADS),
          "DD_IO_THREADS=auto is not the default");
    unsetenv("DD_IO_THREADS");
    /* a strict knob is left out of dd_knobs_warn too */
    setenv("DD_MPI_STAGE_PIECES", "many", 1);
    capture_begin();
    dd_knobs_warn(DD_KNOB_LIBRARY, 1);
    lines = capture_end();
    CHECK(lines == 0, "dd_knobs_warn warned of a strict knob: %s", captured);
    unsetenv("DD_MPI_STAGE_PIECES");
}

static void test_warn_and_reject(void)
{
    setenv("DD_API_THREADS", "-2", 1);
    setenv("DD_SCALAPACK_VERBOSE", "loud", 1);
    capture_begin();
    dd_knobs_warn(DD_KNOB_LIBRARY, 0); /* not the speaker: parsed, not said */
    int quiet = capture_end();
    capture_begin();
    dd_knobs_warn(DD_KNOB_LIBRARY, 1);
    int said = capture_end();
    CHECK(quiet == 0 && said == 1 &&
               has("DD_API_THREADS=\"-2\" is out of range (1..64 or auto); "
                   "using auto (the default)") &&
               !has("DD_SCALAPACK_VERBOSE"),
          "dd_knobs_warn: %d then %d lines: %s", quiet, said, captured);
    capture_begin();
    dd_knobs_warn(DD_KNOB_LIBRARY, 1);
    long long v = dd_knob_int(DDK_API_THREADS);
    int again = capture_end();
    CHECK(again == 0 && v == 0, "warned again after dd_knobs_warn (%d lines), value %lld", again,
          v);
    capture_begin();
    dd_knobs_warn(DD_KNOB_DROPIN, 1);
    said = capture_end();
    CHECK(said == 1 && has("DD_SCALAPACK_VERBOSE=\"loud\" is not a boolean"),
          "the drop-in's knob: %s", captured);
    unsetenv("DD_API_THREADS");
    unsetenv("DD_SCALAPACK_VERBOSE");

    setenv("DD_MODEL_LINK", "warp", 1);
    capture_begin();
    const char *s = dd_knob_str(DDK_MODEL_LINK);
    dd_knob_reject(DDK_MODEL_LINK, 3, "is not a link", "mpi-shm"); /* rank 3: silent */
    quiet = capture_end();
    capture_begin();
    dd_knob_reject(DDK_MODEL_LINK, 0, "is not a link", "mpi-shm");
    dd_knob_reject(DDK_MODEL_LINK, 0, "is not a link", "mpi-shm");
    said = capture_end();
    CHECK(s && !strcmp(s, "warp") && quiet == 0 && said == 1 &&
               has("dgemm-dist: warning: DD_MODEL_LINK=\"warp\" is not a link; using mpi-shm\n"),
          "dd_knob_reject: %d then %d lines: %s", quiet, said, captured);
    unsetenv("DD_MODEL_LINK");
}

/* ---- under mpirun -------------------------------------------------------------------- */

static void *read_in_thread(void *arg)
{
    *(long long *)arg = dd_knob_int(DDK_OZAKI2_TILE_MB);
    return NULL;
}

static void test_mpi(void)
{
    /* dd_knobs_warn, first (it gives every warning not yet given): the
     * process told to speak, whatever its world rank */
    setenv("DD_API_TIMING", "sometimes", 1);
    capture_begin();
    dd_knobs_warn(DD_KNOB_LIBRARY, g_rank == g_size - 1);
    int lines = capture_end();
    CHECK(lines == (g_rank == g_size - 1) && (lines == 0 || has("DD_API_TIMING=\"sometimes\"")),
          "dd_knobs_warn(speak on the last rank): %d lines: %s", lines, captured);
    /* the world rank learnt on the main thread first */
    setenv("DD_RING_MIB", "5000", 1);
    capture_begin();
    long long v = dd_knob_int(DDK_RING_MIB);
    lines = capture_end();
    CHECK(v == 64 && lines == (g_rank == 0), "DD_RING_MIB=5000: %lld, %d lines: %s", v, lines,
          captured);
    /* a worker thread's read (MPI_THREAD_FUNNELED: it may not ask MPI) */
    setenv("DD_OZAKI2_TILE_MB", "huge", 1);
    pthread_t t;
    capture_begin();
    v = -1;
    int started = pthread_create(&t, NULL, read_in_thread, &v) == 0;
    if (started)
        pthread_join(t, NULL);
    lines = capture_end();
    CHECK(started && v == 0 && lines == (g_rank == 0),
          "DD_OZAKI2_TILE_MB=huge read on a thread: %lld, %d lines: %s", v, lines, captured);
    int all = 0;
    MPI_Allreduce(&g_fail, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    g_fail = all;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "mpi")) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &g_size);
        test_mpi();
        if (g_rank == 0)
            printf("test_knobs mpi: %d ranks, %s\n", g_size, g_fail ? "FAILED" : "all passed");
        MPI_Finalize();
        return g_fail != 0;
    }
    /* no MPI and no launcher: this process speaks */
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMIX_RANK");
    unsetenv("PMI_RANK");
    unsetenv("SLURM_PROCID");
    test_table();
    test_parse();
    test_defaults();
    test_values();
    test_strict();
    test_warn_and_reject();
    printf("test_knobs: %d knobs, %s\n", (int)DDK_COUNT, g_fail ? "FAILED" : "all passed");
    return g_fail != 0;
}
