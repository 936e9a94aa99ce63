/* _core.c — dgemm_dist's C extension: the public C API of dgemm-dist
 * (include/dgemm_dist.h) as Python functions, and nothing more.
 *
 * The Python side (context.py, arrays.py) checks and describes the arrays and
 * agrees on every check across ranks; this file takes plain numbers and
 * pointers (Python ints, 0 for NULL), calls the library with the GIL
 * released, and returns (status, message, ...) tuples that the Python side
 * turns into exceptions.  It is a C extension rather than ctypes or cffi for
 * three reasons: the compiler checks every call and struct against the
 * installed header (a ctypes mirror of dd_context_options or dd_matrix_desc
 * would go wrong silently when the header changes); mpi4py's C API
 * (PyMPIComm_Get) gives the MPI_Comm whatever the MPI's handle type; and the
 * library is linked at build time, with an rpath, so nothing searches for it
 * at import. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include <dgemm_dist.h>
#include <mpi4py/mpi4py.h>

#define CTX_CAPSULE "dgemm_dist._core.context"

/* A context's capsule holds this box, so that closing a context leaves the
 * capsule valid and every later use of it refused ("closed"). */
typedef struct {
    dd_context *ctx;
} ctx_box;

static void ctx_box_free(PyObject *cap)
{
    /* The context itself is destroyed by context_destroy (collective): a
     * capsule collected on some ranks only must not make an MPI call. */
    PyMem_Free(PyCapsule_GetPointer(cap, CTX_CAPSULE));
}

static dd_context *ctx_of(PyObject *cap)
{
    ctx_box *box = PyCapsule_GetPointer(cap, CTX_CAPSULE);
    if (!box)
        return NULL;
    if (!box->ctx) {
        PyErr_SetString(PyExc_ValueError, "dgemm_dist: the context is closed");
        return NULL;
    }
    return box->ctx;
}

static PyObject *py_context_create(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *comm_obj;
    const char *backend, *comm, *kernel;
    long long panel;
    int lookahead, P, Q, threads, type, tune;
    if (!PyArg_ParseTuple(args, "Ossz" "Liiiiii", &comm_obj, &backend, &comm, &kernel, &panel,
                          &lookahead, &P, &Q, &threads, &type, &tune))
        return NULL;
    MPI_Comm *mc = PyMPIComm_Get(comm_obj);
    if (!mc)
        return NULL;
    dd_context_options o;
    dd_context_options_init(&o);
    o.backend = backend;
    o.comm = comm;
    o.kernel = kernel;
    o.panel = panel;
    o.lookahead = lookahead;
    o.P = P;
    o.Q = Q;
    o.threads = threads;
    o.type = type;
    o.tune = tune;
    ctx_box *box = PyMem_Malloc(sizeof *box);
    if (!box)
        return PyErr_NoMemory();
    char err[1024] = "";
    dd_context *ctx = NULL;
    dd_status st;
    MPI_Comm c = *mc;
    Py_BEGIN_ALLOW_THREADS
    st = dd_context_create(c, &o, &ctx, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (st != DD_SUCCESS) {
        PyMem_Free(box);
        return Py_BuildValue("(isO)", (int)st, err, Py_None);
    }
    box->ctx = ctx;
    PyObject *cap = PyCapsule_New(box, CTX_CAPSULE, ctx_box_free);
    if (!cap) {
        /* every rank got a context; this one cannot hand it over: destroy
         * it here (collective: the other ranks fail later on their calls) */
        dd_context_destroy(ctx);
        PyMem_Free(box);
        return NULL;
    }
    return Py_BuildValue("(isN)", 0, "", cap);
}

static PyObject *py_context_destroy(PyObject *self, PyObject *cap)
{
    (void)self;
    ctx_box *box = PyCapsule_GetPointer(cap, CTX_CAPSULE);
    if (!box)
        return NULL;
    dd_context *ctx = box->ctx;
    box->ctx = NULL;
    Py_BEGIN_ALLOW_THREADS
    dd_context_destroy(ctx);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_context_grid(PyObject *self, PyObject *cap)
{
    (void)self;
    dd_context *ctx = ctx_of(cap);
    if (!ctx)
        return NULL;
    int P = 0, Q = 0, p = 0, q = 0;
    dd_status st = dd_context_grid(ctx, &P, &Q, &p, &q);
    if (st != DD_SUCCESS)
        return PyErr_Format(PyExc_RuntimeError, "dd_context_grid: %s", dd_status_string(st));
    return Py_BuildValue("(iiii)", P, Q, p, q);
}

static PyObject *py_context_backend(PyObject *self, PyObject *cap)
{
    (void)self;
    dd_context *ctx = ctx_of(cap);
    return ctx ? PyUnicode_FromString(dd_context_backend(ctx)) : NULL;
}

static PyObject *info_tuple(const dd_gemm_info *in)
{
    return Py_BuildValue("(ddddii)", in->multiply_seconds, in->exposed_comm_seconds, in->tflops,
                         in->check_residual, in->check_passed, in->bad_argument);
}

/* gemm(ctx, fp32, device, transa, transb, M, N, K, alpha, A, lda, B, ldb,
 *      beta, C, ldc, check) -> (status, message, info) */
static PyObject *py_gemm(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap;
    int fp32, device, check;
    int transa, transb;
    long long M, N, K, lda, ldb, ldc;
    double alpha, beta;
    unsigned long long A, B, C;
    if (!PyArg_ParseTuple(args, "OppCCLLLdKLKLdKLp", &cap, &fp32, &device, &transa, &transb, &M,
                          &N, &K, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc, &check))
        return NULL;
    dd_context *ctx = ctx_of(cap);
    if (!ctx)
        return NULL;
    dd_gemm_info info;
    memset(&info, 0, sizeof info);
    info.check = check;
    char ta = (char)transa, tb = (char)transb;
    dd_status st;
    Py_BEGIN_ALLOW_THREADS
    if (fp32)
        st = (device ? dd_sgemm_device : dd_sgemm)(
            ctx, ta, tb, M, N, K, (float)alpha, (const float *)(uintptr_t)A, lda,
            (const float *)(uintptr_t)B, ldb, (float)beta, (float *)(uintptr_t)C, ldc, &info);
    else
        st = (device ? dd_gemm_device : dd_gemm)(
            ctx, ta, tb, M, N, K, alpha, (const double *)(uintptr_t)A, lda,
            (const double *)(uintptr_t)B, ldb, beta, (double *)(uintptr_t)C, ldc, &info);
    Py_END_ALLOW_THREADS
    return Py_BuildValue("(isN)", (int)st, st ? dd_context_last_error(ctx) : "", info_tuple(&info));
}

/* A descriptor as the tuple (layout, m, n, mb, nb, rsrc, csrc, lld, nprow,
 * npcol, order) that descriptor.py keeps. */
static int desc_from(PyObject *t, dd_matrix_desc *d)
{
    long long m, n, mb, nb, lld;
    int order;
    memset(d, 0, sizeof *d);
    if (!PyArg_ParseTuple(t, "iLLLLiiLiiC", &d->layout, &m, &n, &mb, &nb, &d->rsrc, &d->csrc,
                          &lld, &d->nprow, &d->npcol, &order))
        return -1;
    d->m = m;
    d->n = n;
    d->mb = mb;
    d->nb = nb;
    d->lld = lld;
    d->order = (char)order;
    return 0;
}

static PyObject *desc_tuple(const dd_matrix_desc *d)
{
    return Py_BuildValue("(iLLLLiiLiiC)", d->layout, (long long)d->m, (long long)d->n,
                         (long long)d->mb, (long long)d->nb, d->rsrc, d->csrc, (long long)d->lld,
                         d->nprow, d->npcol, (int)d->order);
}

/* pgemm(ctx, fp32, device, transa, transb, M, N, K, alpha, A, ia, ja, descA,
 *       B, ib, jb, descB, beta, C, ic, jc, descC, check) -> (status, message, info) */
static PyObject *py_pgemm(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap, *tA, *tB, *tC;
    int fp32, device, check, transa, transb;
    long long M, N, K, ia, ja, ib, jb, ic, jc;
    double alpha, beta;
    unsigned long long A, B, C;
    if (!PyArg_ParseTuple(args, "OppCCLLLdKLLOKLLOdKLLOp", &cap, &fp32, &device, &transa,
                          &transb, &M, &N, &K, &alpha, &A, &ia, &ja, &tA, &B, &ib, &jb, &tB,
                          &beta, &C, &ic, &jc, &tC, &check))
        return NULL;
    dd_context *ctx = ctx_of(cap);
    if (!ctx)
        return NULL;
    dd_matrix_desc dA, dB, dC;
    if (desc_from(tA, &dA) || desc_from(tB, &dB) || desc_from(tC, &dC))
        return NULL;
    dd_gemm_info info;
    memset(&info, 0, sizeof info);
    info.check = check;
    char ta = (char)transa, tb = (char)transb;
    dd_status st;
    Py_BEGIN_ALLOW_THREADS
    if (fp32)
        st = (device ? dd_psgemm_device : dd_psgemm)(
            ctx, ta, tb, M, N, K, (float)alpha, (const float *)(uintptr_t)A, ia, ja, &dA,
            (const float *)(uintptr_t)B, ib, jb, &dB, (float)beta, (float *)(uintptr_t)C, ic, jc,
            &dC, &info);
    else
        st = (device ? dd_pgemm_device : dd_pgemm)(
            ctx, ta, tb, M, N, K, alpha, (const double *)(uintptr_t)A, ia, ja, &dA,
            (const double *)(uintptr_t)B, ib, jb, &dB, beta, (double *)(uintptr_t)C, ic, jc, &dC,
            &info);
    Py_END_ALLOW_THREADS
    return Py_BuildValue("(isN)", (int)st, st ? dd_context_last_error(ctx) : "", info_tuple(&info));
}

static PyObject *py_block_range(PyObject *self, PyObject *args)
{
    (void)self;
    long long n;
    int parts, index;
    if (!PyArg_ParseTuple(args, "Lii", &n, &parts, &index))
        return NULL;
    int64_t start = 0, len = 0;
    dd_status st = dd_block_range(n, parts, index, &start, &len);
    return Py_BuildValue("(iLL)", (int)st, (long long)start, (long long)len);
}

static PyObject *py_numroc(PyObject *self, PyObject *args)
{
    (void)self;
    long long n, nb;
    int iproc, isrc, nprocs;
    if (!PyArg_ParseTuple(args, "LLiii", &n, &nb, &iproc, &isrc, &nprocs))
        return NULL;
    return PyLong_FromLongLong(dd_numroc(n, nb, iproc, isrc, nprocs));
}

static PyObject *py_desc_block_cyclic(PyObject *self, PyObject *args)
{
    (void)self;
    long long m, n, mb, nb, lld;
    int rsrc, csrc, nprow, npcol, order;
    if (!PyArg_ParseTuple(args, "LLLLiiiiCL", &m, &n, &mb, &nb, &rsrc, &csrc, &nprow, &npcol,
                          &order, &lld))
        return NULL;
    dd_matrix_desc d;
    memset(&d, 0, sizeof d);
    dd_status st = dd_desc_block_cyclic(&d, m, n, mb, nb, rsrc, csrc, nprow, npcol, (char)order, lld);
    return Py_BuildValue("(iN)", (int)st, desc_tuple(&d));
}

static PyObject *py_desc_block(PyObject *self, PyObject *args)
{
    (void)self;
    long long m, n, ld;
    int nprow, npcol;
    if (!PyArg_ParseTuple(args, "LLiiL", &m, &n, &nprow, &npcol, &ld))
        return NULL;
    dd_matrix_desc d;
    memset(&d, 0, sizeof d);
    dd_status st = dd_desc_block(&d, m, n, nprow, npcol, ld);
    return Py_BuildValue("(iN)", (int)st, desc_tuple(&d));
}

static PyObject *py_status_string(PyObject *self, PyObject *arg)
{
    (void)self;
    int s = PyLong_AsLong(arg);
    if (s == -1 && PyErr_Occurred())
        return NULL;
    return PyUnicode_FromString(dd_status_string((dd_status)s));
}

static PyObject *py_version(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    int a = 0, b = 0, c = 0;
    dd_version(&a, &b, &c);
    return Py_BuildValue("(iii)", a, b, c);
}

static PyObject *py_blas_version(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return PyUnicode_FromString(dd_blas_version());
}

/* DLPack (dmlc/dlpack's dlpack.h, ABI version 0.x, the "dltensor" capsule):
 * the few fields read here, declared as that header declares them. */
typedef struct {
    int32_t device_type, device_id;
} dl_device;
typedef struct {
    uint8_t code, bits;
    uint16_t lanes;
} dl_dtype;
typedef struct {
    void *data;
    dl_device device;
    int32_t ndim;
    dl_dtype dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} dl_tensor;

static PyObject *int64_tuple(const int64_t *v, int n)
{
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

/* dlpack_tensor(capsule) -> (address, device_type, device_id, code, bits,
 * lanes, shape, strides or None).  The capsule is only read: it keeps its
 * name, so its own destructor frees the tensor when the caller drops it
 * (after the multiply). */
static PyObject *py_dlpack_tensor(PyObject *self, PyObject *cap)
{
    (void)self;
    const dl_tensor *t = PyCapsule_GetPointer(cap, "dltensor");
    if (!t)
        return NULL;
    if (t->ndim < 0 || t->ndim > 64)
        return PyErr_Format(PyExc_ValueError, "DLPack tensor with %d dimensions", (int)t->ndim);
    PyObject *shape = int64_tuple(t->shape, t->ndim);
    if (!shape)
        return NULL;
    PyObject *strides = t->strides ? int64_tuple(t->strides, t->ndim) : (Py_INCREF(Py_None), Py_None);
    if (!strides) {
        Py_DECREF(shape);
        return NULL;
    }
    return Py_BuildValue("(KiiiiiNN)", (unsigned long long)((uintptr_t)t->data + t->byte_offset),
                         (int)t->device.device_type, (int)t->device.device_id, (int)t->dtype.code,
                         (int)t->dtype.bits, (int)t->dtype.lanes, shape, strides);
}

static PyMethodDef methods[] = {
    {"context_create", py_context_create, METH_VARARGS, "dd_context_create"},
    {"context_destroy", py_context_destroy, METH_O, "dd_context_destroy"},
    {"context_grid", py_context_grid, METH_O, "dd_context_grid"},
    {"context_backend", py_context_backend, METH_O, "dd_context_backend"},
    {"gemm", py_gemm, METH_VARARGS, "dd_gemm, dd_sgemm and their _device forms"},
    {"pgemm", py_pgemm, METH_VARARGS, "dd_pgemm, dd_psgemm and their _device forms"},
    {"block_range", py_block_range, METH_VARARGS, "dd_block_range"},
    {"numroc", py_numroc, METH_VARARGS, "dd_numroc"},
    {"desc_block_cyclic", py_desc_block_cyclic, METH_VARARGS, "dd_desc_block_cyclic"},
    {"desc_block", py_desc_block, METH_VARARGS, "dd_desc_block"},
    {"status_string", py_status_string, METH_O, "dd_status_string"},
    {"version", py_version, METH_NOARGS, "dd_version: the library linked at run time"},
    {"blas_version", py_blas_version, METH_NOARGS, "dd_blas_version"},
    {"dlpack_tensor", py_dlpack_tensor, METH_O, "the fields of a DLPack capsule"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "dgemm_dist._core",
                                    "dgemm-dist's C API (include/dgemm_dist.h)", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void)
{
    if (import_mpi4py() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    if (PyModule_AddStringConstant(m, "HEADER_VERSION", DGEMM_DIST_VERSION_STRING) ||
        PyModule_AddIntConstant(m, "LOOKAHEAD_MAX", DGEMM_DIST_LOOKAHEAD_MAX) ||
        PyModule_AddIntConstant(m, "LAYOUT_BLOCK", DD_LAYOUT_BLOCK) ||
        PyModule_AddIntConstant(m, "LAYOUT_BLOCK_CYCLIC", DD_LAYOUT_BLOCK_CYCLIC)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
