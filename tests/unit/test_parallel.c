/* rd_parallel (src/api/api_parallel.c): every index of [0, n) visited
 * exactly once for every thread count and n (workers kept between calls,
 * more asked for than exist, fewer parts than workers), two callers at
 * once (the second on threads of its own), and a forked child (no workers
 * inherited: it must still finish). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_redist.h"

static int failures;

typedef struct {
    int *hits;
    int64_t n;
} job;

static void visit(void *arg, int64_t lo, int64_t hi)
{
    job *j = arg;
    for (int64_t i = lo; i < hi; i++)
        __atomic_add_fetch(&j->hits[i], 1, __ATOMIC_RELAXED);
}

static int sweep(const char *who, int rounds)
{
    static const int64_t ns[] = {0, 1, 2, 5, 17, 1000, 100003};
    static const int ts[] = {1, 2, 3, 7, 16, 17, 64, 100};
    int bad = 0;
    for (int r = 0; r < rounds; r++)
        for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
            for (size_t b = 0; b < sizeof ts / sizeof ts[0]; b++) {
                int64_t n = ns[a];
                job j = {calloc((size_t)n + 1, sizeof(int)), n};
                if (!j.hits)
                    return 1;
                rd_parallel(ts[b], n, visit, &j);
                for (int64_t i = 0; i < n; i++)
                    if (j.hits[i] != 1) {
                        if (bad++ < 5)
                            fprintf(stderr, "FAIL %s: n %lld threads %d: index %lld visited %d times\n",
                                    who, (long long)n, ts[b], (long long)i, j.hits[i]);
                        break;
                    }
                free(j.hits);
            }
    return bad;
}

static void *other(void *arg)
{
    *(int *)arg = sweep("concurrent caller", 20);
    return NULL;
}

int main(void)
{
    failures += sweep("one caller", 3);
    int bad2 = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, other, &bad2) != 0) {
        fprintf(stderr, "FAIL: pthread_create\n");
        return 1;
    }
    failures += sweep("beside another caller", 20);
    pthread_join(t, NULL);
    failures += bad2;
    pid_t pid = fork();
    if (pid == 0)
        _exit(sweep("forked child", 2) ? 1 : 0);
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "FAIL: the forked child did not finish its sweep (status %d)\n", st);
        failures++;
    }
    failures += sweep("after fork, the parent", 1);
    printf("test_parallel: %d failures\n", failures);
    return failures != 0;
}
