/* telemetry.c — GPU clock, power and energy through NVML opened at run time
 * (dd_telemetry.h).
 *
 * NVML's C ABI is stable: the few prototypes and constants used here are
 * declared below instead of taken from nvml.h, so the build needs no NVML
 * headers and the program no NVML library; libnvidia-ml.so.1 comes with the
 * driver wherever a GPU is.  nvmlInit/nvmlShutdown count references, so
 * every sampler initialises and shuts down its own.
 *
 * Sampling: between start and stop a thread reads the SM clock and the
 * board power every DD_TELE_PERIOD_MS and the clock event reasons with
 * them; energy is the difference of the board's energy counter (mJ) read
 * at start and stop, or, where the counter is refused, mean power × time. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dd_json.h"
#include "dd_telemetry.h"

#define DD_TELE_PERIOD_MS 20

/* ---- the NVML ABI (nvml.h) ---------------------------------------------- */
typedef int nvml_ret;                    /* nvmlReturn_t: 0 = NVML_SUCCESS */
typedef struct nvml_device *nvml_device; /* nvmlDevice_t */
enum { NVML_OK = 0, NVML_CLOCK_SM = 1, NVML_TEMPERATURE_GPU = 0 };

typedef struct {
    void *lib;
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    const char *(*error_string)(nvml_ret);
    nvml_ret (*by_pci)(const char *, nvml_device *);
    nvml_ret (*by_index)(unsigned, nvml_device *);
    nvml_ret (*clock)(nvml_device, int, unsigned *);
    nvml_ret (*power)(nvml_device, unsigned *);
    nvml_ret (*energy)(nvml_device, unsigned long long *);
    nvml_ret (*reasons)(nvml_device, unsigned long long *);
    nvml_ret (*temperature)(nvml_device, int, unsigned *);
    nvml_ret (*power_limit)(nvml_device, unsigned *);
} nvml_api;

struct dd_tele_sampler {
    nvml_api api;
    nvml_device dev;
    int ok;        /* NVML initialised and the device found */
    int is_static; /* the out-of-memory sampler: never freed */
    char why[120]; /* when not */
    pthread_t thread;
    int running; /* a thread was started */
    atomic_int stop;
    /* written by the thread between start and stop only */
    int n;
    double sum_mhz, min_mhz, max_mhz, sum_w, max_w;
    unsigned long long reasons;
    double t0;
    unsigned long long e0;
    int e0_ok;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A symbol of the library as the function pointer it is (POSIX allows the
 * conversion; the copy keeps ISO C's object/function pointer rule quiet). */
static int sym(void *lib, const char *name, void *fp)
{
    void *p = dlsym(lib, name);
    memcpy(fp, &p, sizeof p);
    return p != NULL;
}

static int load(nvml_api *a, char *why, size_t len)
{
    a->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a->lib) {
        snprintf(why, len, "NVML not available (no libnvidia-ml.so.1 here)");
        return 0;
    }
    int ok = sym(a->lib, "nvmlInit_v2", &a->init) && sym(a->lib, "nvmlShutdown", &a->shutdown) &&
             sym(a->lib, "nvmlErrorString", &a->error_string) &&
             sym(a->lib, "nvmlDeviceGetHandleByPciBusId_v2", &a->by_pci) &&
             sym(a->lib, "nvmlDeviceGetHandleByIndex_v2", &a->by_index) &&
             sym(a->lib, "nvmlDeviceGetClockInfo", &a->clock) &&
             sym(a->lib, "nvmlDeviceGetPowerUsage", &a->power);
    /* optional: each figure it gives is NaN without it */
    sym(a->lib, "nvmlDeviceGetTotalEnergyConsumption", &a->energy);
    if (!sym(a->lib, "nvmlDeviceGetCurrentClocksEventReasons", &a->reasons))
        sym(a->lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &a->reasons); /* older name */
    sym(a->lib, "nvmlDeviceGetTemperature", &a->temperature);
    sym(a->lib, "nvmlDeviceGetEnforcedPowerLimit", &a->power_limit);
    if (!ok) {
        snprintf(why, len, "NVML not available (libnvidia-ml.so.1 lacks a needed function)");
        dlclose(a->lib);
        a->lib = NULL;
    }
    return ok;
}

dd_tele_sampler *dd_tele_open(const char *pci_bus_id, int index)
{
    static dd_tele_sampler none; /* out of memory: a sampler that only says so */
    dd_tele_sampler *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(none.why, sizeof none.why, "telemetry not available (out of host memory)");
        none.is_static = 1;
        return &none;
    }
    atomic_init(&s->stop, 0);
    if (!load(&s->api, s->why, sizeof s->why))
        return s;
    nvml_ret r = s->api.init();
    if (r != NVML_OK) {
        snprintf(s->why, sizeof s->why, "NVML not available (nvmlInit: %s)",
                 s->api.error_string(r));
        dlclose(s->api.lib);
        s->api.lib = NULL;
        return s;
    }
    r = pci_bus_id ? s->api.by_pci(pci_bus_id, &s->dev)
                   : s->api.by_index((unsigned)(index < 0 ? 0 : index), &s->dev);
    if (r != NVML_OK) {
        snprintf(s->why, sizeof s->why, "NVML does not find GPU %s (%s)",
                 pci_bus_id ? pci_bus_id : "by index", s->api.error_string(r));
        s->api.shutdown();
        dlclose(s->api.lib);
        s->api.lib = NULL;
        return s;
    }
    s->ok = 1;
    return s;
}

static void sample(dd_tele_sampler *s)
{
    unsigned mhz = 0, mw = 0;
    unsigned long long bits = 0;
    if (s->api.clock(s->dev, NVML_CLOCK_SM, &mhz) == NVML_OK && mhz > 0) {
        s->sum_mhz += mhz;
        s->min_mhz = s->n && s->min_mhz < mhz ? s->min_mhz : mhz;
        s->max_mhz = s->max_mhz > mhz ? s->max_mhz : mhz;
    } else {
        return; /* a sample is a clock reading; power goes with it */
    }
    if (s->api.power(s->dev, &mw) == NVML_OK) {
        s->sum_w += mw * 1e-3;
        s->max_w = s->max_w > mw * 1e-3 ? s->max_w : mw * 1e-3;
    }
    if (s->api.reasons && s->api.reasons(s->dev, &bits) == NVML_OK)
        s->reasons |= bits;
    s->n++;
}

static void *sampler_main(void *arg)
{
    dd_tele_sampler *s = arg;
    struct timespec period = {0, DD_TELE_PERIOD_MS * 1000000L};
    while (!atomic_load(&s->stop)) {
        sample(s);
        nanosleep(&period, NULL);
    }
    return NULL;
}

void dd_tele_start(dd_tele_sampler *s)
{
    if (!s->ok || s->running)
        return;
    s->n = 0;
    s->sum_mhz = s->min_mhz = s->max_mhz = s->sum_w = s->max_w = 0;
    s->reasons = 0;
    s->e0_ok = s->api.energy && s->api.energy(s->dev, &s->e0) == NVML_OK;
    atomic_store(&s->stop, 0);
    s->t0 = now_s();
    s->running = pthread_create(&s->thread, NULL, sampler_main, s) == 0;
}

void dd_tele_unavailable(dd_telemetry *t, const char *why)
{
    memset(t, 0, sizeof *t);
    snprintf(t->why, sizeof t->why, "%s", why && *why ? why : "not available");
    t->seconds = t->sm_mhz_mean = t->sm_mhz_min = t->sm_mhz_max = NAN;
    t->power_w_mean = t->power_w_max = t->energy_j = t->power_limit_w = t->temp_c = NAN;
}

void dd_tele_stop(dd_tele_sampler *s, dd_telemetry *t)
{
    if (!s->ok) {
        dd_tele_unavailable(t, s->why);
        return;
    }
    if (!s->running) {
        dd_tele_unavailable(t, "telemetry: the sampling thread did not start");
        return;
    }
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    s->running = 0;
    sample(s); /* the state at the end, and at least one sample */
    double dt = now_s() - s->t0;
    dd_tele_unavailable(t, NULL);
    t->available = s->n > 0;
    t->why[0] = '\0';
    if (!t->available) {
        snprintf(t->why, sizeof t->why, "NVML gave no SM clock for this GPU");
        return;
    }
    unsigned long long e1 = 0;
    unsigned v = 0;
    t->samples = s->n;
    t->seconds = dt;
    t->sm_mhz_mean = s->sum_mhz / s->n;
    t->sm_mhz_min = s->min_mhz;
    t->sm_mhz_max = s->max_mhz;
    t->power_w_mean = s->sum_w / s->n;
    t->power_w_max = s->max_w;
    t->reasons = s->reasons;
    t->energy_from_counter = s->e0_ok && s->api.energy(s->dev, &e1) == NVML_OK && e1 >= s->e0;
    t->energy_j = t->energy_from_counter ? (double)(e1 - s->e0) * 1e-3 : t->power_w_mean * dt;
    if (s->api.temperature && s->api.temperature(s->dev, NVML_TEMPERATURE_GPU, &v) == NVML_OK)
        t->temp_c = v;
    if (s->api.power_limit && s->api.power_limit(s->dev, &v) == NVML_OK)
        t->power_limit_w = v * 1e-3;
}

void dd_tele_close(dd_tele_sampler *s)
{
    if (!s || s->is_static)
        return;
    if (s->running) {
        atomic_store(&s->stop, 1);
        pthread_join(s->thread, NULL);
        s->running = 0;
    }
    if (s->ok) {
        s->api.shutdown();
        dlclose(s->api.lib);
    }
    free(s);
}

const char *dd_tele_reasons(unsigned long long bits, char *buf, size_t len)
{
    static const struct {
        unsigned long long bit;
        const char *name;
    } names[] = {
        {DD_TELE_SW_POWER_CAP, "SW power cap"},     {DD_TELE_HW_SLOWDOWN, "HW slowdown"},
        {DD_TELE_HW_POWER_BRAKE, "HW power brake"}, {DD_TELE_SW_THERMAL, "SW thermal"},
        {DD_TELE_HW_THERMAL, "HW thermal"},         {DD_TELE_APP_CLOCKS, "application clocks"},
        {DD_TELE_SYNC_BOOST, "sync boost"},         {DD_TELE_DISPLAY_CLOCKS, "display clocks"},
    };
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(bits & names[i].bit) || used >= len)
            continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", names[i].name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (!used)
        snprintf(buf, len, "none");
    return buf;
}

void dd_tele_json_reasons(FILE *f, unsigned long long bits)
{
    char buf[200];
    dd_tele_reasons(bits, buf, sizeof buf);
    fputc('[', f);
    if (strcmp(buf, "none")) {
        for (char *p = buf, *e; p; p = e ? e + 2 : NULL) {
            if ((e = strstr(p, ", ")))
                *e = '\0';
            if (p != buf)
                fputc(',', f);
            dd_json_str(f, p);
        }
    }
    fputc(']', f);
}

void dd_tele_json_open(FILE *f, const dd_telemetry *t)
{
    fprintf(f, "{\"available\":%s", t->available ? "true" : "false");
    if (!t->available) {
        dd_json_kv_str(f, "why", t->why);
        return;
    }
    fprintf(f, ",\"samples\":%d", t->samples);
    dd_json_kv_num(f, "seconds", t->seconds);
    dd_json_kv_num(f, "sm_mhz_mean", t->sm_mhz_mean);
    dd_json_kv_num(f, "sm_mhz_min", t->sm_mhz_min);
    dd_json_kv_num(f, "sm_mhz_max", t->sm_mhz_max);
    dd_json_kv_num(f, "power_w_mean", t->power_w_mean);
    dd_json_kv_num(f, "power_w_max", t->power_w_max);
    dd_json_kv_num(f, "power_limit_w", t->power_limit_w);
    dd_json_kv_num(f, "energy_j", t->energy_j);
    fprintf(f, ",\"energy_from_counter\":%s", t->energy_from_counter ? "true" : "false");
    dd_json_kv_num(f, "temp_c", t->temp_c);
    fputs(",\"reasons\":", f);
    dd_tele_json_reasons(f, t->reasons);
}
