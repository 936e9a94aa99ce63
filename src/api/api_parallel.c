/* api_parallel.c — rd_parallel (api_redist.h): a range of work cut over
 * threads, on workers kept for the process. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "api_redist.h"

typedef struct {
    void (*fn)(void *arg, int64_t lo, int64_t hi);
    void *arg;
    int64_t lo, hi;
} par_job;

static void *par_main(void *a)
{
    par_job *j = a;
    j->fn(j->arg, j->lo, j->hi);
    return NULL;
}

/* The process's copy workers, kept between calls: the host pipeline
 * (api_pipe.c) cuts every piece of every operand over them, about a
 * hundred times a call at n = 16384, and starting 15 threads each time
 * would cost tens of milliseconds of a 0.2 s call.  One caller at a time
 * uses them (a second, concurrent one starts threads of its own, as
 * before); workers wait on a condition variable between jobs; a child
 * after fork() starts with none (pthread_atfork). */
#define POOL_MAX 63
static struct {
    pthread_mutex_t busy;      /* held by the caller using the workers */
    pthread_mutex_t m;         /* guards the rest */
    pthread_cond_t go, done;   /* a new job / the last part finished */
    int workers;               /* started so far */
    unsigned long long gen;    /* job number */
    int parts;                 /* workers 0 .. parts-1 take jobs[1 .. parts] */
    int left;                  /* parts not yet finished */
    par_job *jobs;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
          PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, NULL};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_child(void)
{
    pthread_mutex_init(&pool.busy, NULL);
    pthread_mutex_init(&pool.m, NULL);
    pthread_cond_init(&pool.go, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.workers = 0, pool.parts = 0, pool.left = 0, pool.jobs = NULL;
}

static void pool_init(void)
{
    pthread_atfork(NULL, NULL, pool_child);
}

typedef struct {
    int id;
    unsigned long long seen;
} worker_arg;

static void *pool_main(void *a)
{
    worker_arg w = *(worker_arg *)a;
    free(a);
    pthread_mutex_lock(&pool.m);
    for (;;) {
        while (pool.gen == w.seen)
            pthread_cond_wait(&pool.go, &pool.m);
        w.seen = pool.gen;
        if (w.id >= pool.parts)
            continue;
        par_job *j = &pool.jobs[w.id + 1];
        pthread_mutex_unlock(&pool.m);
        par_main(j);
        pthread_mutex_lock(&pool.m);
        if (--pool.left == 0)
            pthread_cond_signal(&pool.done);
    }
    return NULL;
}

/* Workers up to `want` (as many as start); pool.m held. */
static void pool_grow(int want)
{
    while (pool.workers < want) {
        worker_arg *w = malloc(sizeof *w);
        pthread_t t;
        pthread_attr_t at;
        if (!w)
            return;
        *w = (worker_arg){pool.workers, pool.gen};
        int ok = pthread_attr_init(&at) == 0;
        if (ok && (pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) != 0 ||
                   pthread_create(&t, &at, pool_main, w) != 0))
            ok = 0;
        pthread_attr_destroy(&at);
        if (!ok) {
            free(w);
            return;
        }
        pool.workers++;
    }
}

void rd_parallel(int threads, int64_t n, void (*fn)(void *arg, int64_t lo, int64_t hi), void *arg)
{
    int T = threads < 1 ? 1 : threads > POOL_MAX + 1 ? POOL_MAX + 1 : threads;
    if (T > n)
        T = (int)n;
    if (T <= 1) {
        if (n > 0)
            fn(arg, 0, n);
        return;
    }
    par_job job[POOL_MAX + 1];
    for (int t = 0; t < T; t++)
        job[t] = (par_job){fn, arg, n * t / T, n * (t + 1) / T};
    pthread_once(&pool_once, pool_init);
    if (pthread_mutex_trylock(&pool.busy) == 0) {
        pthread_mutex_lock(&pool.m);
        pool_grow(T - 1);
        int parts = pool.workers < T - 1 ? pool.workers : T - 1;
        pool.jobs = job, pool.parts = pool.left = parts;
        pool.gen++;
        pthread_cond_broadcast(&pool.go);
        pthread_mutex_unlock(&pool.m);
        par_main(&job[0]);
        for (int t = parts + 1; t < T; t++) /* parts no worker could take */
            par_main(&job[t]);
        pthread_mutex_lock(&pool.m);
        while (pool.left > 0)
            pthread_cond_wait(&pool.done, &pool.m);
        pool.parts = 0, pool.jobs = NULL;
        pthread_mutex_unlock(&pool.m);
        pthread_mutex_unlock(&pool.busy);
        return;
    }
    pthread_t tid[POOL_MAX + 1];
    int started[POOL_MAX + 1] = {0};
    for (int t = 1; t < T; t++)
        started[t] = pthread_create(&tid[t], NULL, par_main, &job[t]) == 0;
    par_main(&job[0]);
    for (int t = 1; t < T; t++)
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            par_main(&job[t]);
}
