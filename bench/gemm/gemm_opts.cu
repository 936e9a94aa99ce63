/* gemm_opts.cu — gemm-bench's options (gemm_bench.h: parse, selected), read
 * by the benches' one parser (bench/common/bench_opts.h). */
#include <string.h>

#include "bench_opts.h"
#include "gemm_bench.h"
#include "i8gemm.h" /* DD_I8GEMM_MAX_MOD */

namespace gb
{

static const char USAGE[] =
    "usage: gemm-bench [--sizes LIST] [--kernels LIST] [--types f64,f32,c128,c64,i8]\n"
    "                  [--i8-batch B]"
    " [--reps N] [--warmup N] [--beta 0|1|auto] [--slow-limit N]\n"
    "                  [--sustain SECONDS] [--json FILE] [--quick] [--seed S]\n"
    "                  [--interleave] [--device D]\n"
    "  --sizes     comma list of N or MxNxK (default 1024,2048,4096,8192,16384,\n"
    "              8192x8192x1024,16384x16384x1024)\n"
    "  --kernels   comma list of names or name prefixes (default: all; earlier\n"
    "              names such as 23_dmma_pipe select their kernel); cublas is\n"
    "              always timed, as the reference\n"
    "  --sustain S also run cuBLAS and each kernel back to back for S seconds and\n"
    "              report the median over the last half, with its clock and power\n"
    "  --interleave also time cuBLAS and the kernels that passed in rounds, one run\n"
    "              of each a round (a Williams design of orders), so all see one clock\n"
    "              and temperature; medians per kernel, no per-kernel energy\n"
    "  --types     f64,f32 (default), c128,c64 (complex double / float, against\n"
    "              cuBLAS ZGEMM / CGEMM, 8 flops a multiply-add; z and c also name\n"
    "              them) and/or i8: the own INT8 GEMM (ozaki2's) against cuBLAS\n"
    "              INT8, checked exactly; --i8-batch B products per call\n"
    "  --quick     sizes 1024,2048,4096,4096x4096x1024; 3 reps, 1 warm-up\n"
    "  --json FILE append one JSON object per row (JSON Lines)\n";

static const char DEFAULT_SIZES[] = "1024,2048,4096,8192,16384,8192x8192x1024,16384x16384x1024";
static const char QUICK_SIZES[] = "1024,2048,4096,4096x4096x1024";

/* The items of a comma list, empty ones left out. */
static std::vector<std::string> split(const char *s)
{
    std::vector<std::string> v;
    std::string all(s);
    size_t pos = 0;
    while (pos <= all.size()) {
        size_t end = all.find(',', pos);
        if (end == std::string::npos)
            end = all.size();
        if (end > pos)
            v.push_back(all.substr(pos, end - pos));
        pos = end + 1;
    }
    return v;
}

static bool set_sizes(const char *s, std::vector<shape> *out)
{
    int64_t d[256][3];
    int n = 0;
    if (bench_shapes(s, d, 256, &n))
        return false;
    out->clear();
    for (int i = 0; i < n; ++i)
        out->push_back({d[i][0], d[i][1], d[i][2]});
    return true;
}

static const char *opt_sizes(const char *v, void *dest)
{
    return set_sizes(v, &((options *)dest)->sizes)
               ? nullptr
               : "N or MxNxK (each 1..2147483647), comma separated";
}

static const char *opt_kernels(const char *v, void *dest)
{
    options *o = (options *)dest;
    o->kernels = split(v);
    return o->kernels.empty() ? "names or name prefixes, comma separated" : nullptr;
}

static const char *opt_types(const char *v, void *dest)
{
    options *o = (options *)dest;
    bool f64 = false, f32 = false, i8 = false, c128 = false, c64 = false;
    std::vector<std::string> t = split(v);
    const char *what = "f64, f32, c128 (or z), c64 (or c) or i8, comma separated";
    for (auto &x : t) {
        if (x == "f64")
            f64 = true;
        else if (x == "f32")
            f32 = true;
        else if (x == "c128" || x == "z")
            c128 = true;
        else if (x == "c64" || x == "c")
            c64 = true;
        else if (x == "i8")
            i8 = true;
        else
            return what;
    }
    if (t.empty())
        return what;
    o->f64 = f64, o->f32 = f32, o->i8 = i8, o->c128 = c128, o->c64 = c64;
    return nullptr;
}

static const char *opt_beta(const char *v, void *dest)
{
    options *o = (options *)dest;
    if (!strcmp(v, "auto"))
        o->beta = -1;
    else if (!strcmp(v, "0") || !strcmp(v, "1"))
        o->beta = v[0] - '0';
    else
        return "0, 1 or auto";
    return nullptr;
}

/* --quick: its sizes, reps and warm-up, where it stands among the options
 * (a later --reps still counts) */
static const char *opt_quick(const char *, void *dest)
{
    options *o = (options *)dest;
    set_sizes(QUICK_SIZES, &o->sizes);
    o->reps = 3;
    o->warmup = 1;
    return nullptr;
}

int parse(int argc, char **argv, options *o)
{
    set_sizes(DEFAULT_SIZES, &o->sizes);
    for (int i = 0; i < argc; ++i) {
        if (i)
            o->command += " ";
        o->command += argv[i];
    }
    const bench_opt opts[] = {
        {"--sizes", BENCH_CALL, o, 0, 0, 0, 0, nullptr, opt_sizes},
        {"--kernels", BENCH_CALL, o, 0, 0, 0, 0, nullptr, opt_kernels},
        {"--types", BENCH_CALL, o, 0, 0, 0, 0, nullptr, opt_types},
        {"--i8-batch", BENCH_INT, &o->i8_batch, 1, DD_I8GEMM_MAX_MOD, 0, 0, nullptr, nullptr},
        {"--reps", BENCH_INT, &o->reps, 1, 100000, 0, 0, nullptr, nullptr},
        {"--warmup", BENCH_INT, &o->warmup, 0, 100000, 0, 0, nullptr, nullptr},
        {"--beta", BENCH_CALL, o, 0, 0, 0, 0, nullptr, opt_beta},
        {"--slow-limit", BENCH_I64, &o->slow_limit, 0, INT64_MAX, 0, 0, nullptr, nullptr},
        {"--sustain", BENCH_DOUBLE, &o->sustain, 0, 0, 0, 3600, nullptr, nullptr},
        {"--interleave", BENCH_FLAG, &o->interleave, 0, 0, 0, 0, nullptr, nullptr},
        {"--json", BENCH_STRING, &o->json, 0, 0, 0, 0, nullptr, nullptr},
        {"--quick", BENCH_FLAG, o, 0, 0, 0, 0, nullptr, opt_quick},
        {"--seed", BENCH_U64, &o->seed, 0, 0, 0, 0, nullptr, nullptr},
        {"--device", BENCH_INT, &o->device, 0, 1023, 0, 0, nullptr, nullptr},
        {nullptr, BENCH_FLAG, nullptr, 0, 0, 0, 0, nullptr, nullptr}};
    return bench_parse("gemm-bench", USAGE, opts, argc, argv, stderr);
}

bool selected(const options &o, const kernel_desc *kd)
{
    if (o.kernels.empty())
        return true;
    for (auto &k : o.kernels) {
        if (!strncmp(kd->name, k.c_str(), k.size()))
            return true;
        const kernel_desc *to = nullptr;
        for (int i = 0; const char *old = kernel_alias(i, &to); ++i)
            if (to == kd && !strncmp(old, k.c_str(), k.size()))
                return true;
    }
    return false;
}

} // namespace gb
