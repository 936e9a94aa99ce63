"""Builds dgemm_dist._core against libdgemm-dist (see docs/python.md).

Where the library is, first found wins:
  DGEMM_DIST_DIR   an install prefix (cmake --install --prefix DIR) or a
                   build tree (the folder cmake -B made)
  pkg-config       dgemm-dist.pc (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig)
  ../build         the repository's own build tree, when python/ is built
                   from a checkout
  built here       none of those, python/ in a checkout: the library is
                   built from the checkout with CMake (in build/libdgemm-dist
                   beside this file; CMake options from DGEMM_DIST_CMAKE_ARGS,
                   e.g. -DDD_ENABLE_CUDA=OFF) and shipped inside the package
The extension is linked with an rpath to the library's folder (or $ORIGIN,
the package's own folder, for a library built here): nothing searches for
the library at import.  MPI's compile and link flags come from mpicc
(MPICC, else the mpicc mpi4py was built with, else mpicc on PATH)."""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg):
    sys.exit("dgemm_dist setup: " + msg)


def libdir_with_library(prefix):
    for sub in ("lib", "lib64", os.path.join("lib", "x86_64-linux-gnu"), ""):
        d = os.path.join(prefix, sub)
        if os.path.exists(os.path.join(d, "libdgemm-dist.so")):
            return d
    return None


def from_prefix(prefix):
    """(include dirs, library dir, version) of an install prefix or a build tree.
    The real path: the extension's rpath then names the tree itself, not a
    link to it that may be gone when the extension is loaded."""
    prefix = os.path.realpath(prefix)
    cache = os.path.join(prefix, "CMakeCache.txt")
    if os.path.exists(cache):
        src = None
        for line in open(cache, encoding="utf-8", errors="replace"):
            if line.startswith("CMAKE_HOME_DIRECTORY:"):
                src = line.split("=", 1)[1].strip()
        if not src:
            fail(f"{cache} names no source folder (CMAKE_HOME_DIRECTORY)")
        incs = [os.path.join(src, "include"), os.path.join(prefix, "include"), os.path.join(src, "src", "abi")]
        lib = libdir_with_library(prefix)
        if not lib:
            fail(f"the build tree {prefix} has no libdgemm-dist.so: build it first (cmake --build {prefix})")
    else:
        incs = [os.path.join(prefix, "include")]
        lib = libdir_with_library(prefix)
        if not lib:
            fail(f"{prefix} holds no lib/libdgemm-dist.so: give DGEMM_DIST_DIR an install prefix "
                 "(cmake --install BUILD --prefix DIR) or a build tree")
    if not any(os.path.exists(os.path.join(i, "dgemm_dist.h")) for i in incs):
        fail(f"no dgemm_dist.h under {prefix}")
    return incs, lib


def from_pkg_config():
    pc = shutil.which("pkg-config")
    if not pc or subprocess.run([pc, "--exists", "dgemm-dist"]).returncode != 0:
        return None
    def var(*a):
        return subprocess.run([pc, *a, "dgemm-dist"], check=True, capture_output=True, text=True).stdout.strip()
    incs = [f[2:] for f in shlex.split(var("--cflags-only-I"))]
    return incs, var("--variable=libdir")


def find_library():
    d = os.environ.get("DGEMM_DIST_DIR")
    if d:
        return from_prefix(d), f"DGEMM_DIST_DIR={d}"
    found = from_pkg_config()
    if found:
        return found, "pkg-config dgemm-dist"
    tree = os.path.join(HERE, "..", "build")
    if os.path.exists(os.path.join(tree, "CMakeCache.txt")):
        return from_prefix(tree), f"the repository's build tree {os.path.abspath(tree)}"
    if os.path.exists(os.path.join(HERE, "..", "include", "dgemm_dist.h")):
        return build_library(), "built here from the checkout"
    fail("libdgemm-dist not found: set DGEMM_DIST_DIR to an install prefix or a build tree, "
         "or put its lib/pkgconfig on PKG_CONFIG_PATH")


BUNDLE = []  # the library files shipped inside the package (a library built here)


def build_library():
    """libdgemm-dist built from the checkout python/ sits in; its shared
    library is shipped in the package, found through $ORIGIN."""
    cmake = shutil.which("cmake")
    if not cmake:
        fail("libdgemm-dist not found and no cmake to build it: install cmake, or set DGEMM_DIST_DIR")
    src = os.path.abspath(os.path.join(HERE, ".."))
    tree = os.path.join(HERE, "build", "libdgemm-dist")
    args = shlex.split(os.environ.get("DGEMM_DIST_CMAKE_ARGS", ""))
    jobs = str(os.cpu_count() or 2)
    print(f"dgemm_dist setup: building libdgemm-dist from {src} in {tree} ({' '.join(args) or 'no options'})")
    for cmd in ([cmake, "-S", src, "-B", tree, "-DBUILD_TESTING=OFF", "-DCMAKE_BUILD_TYPE=Release", *args],
                [cmake, "--build", tree, "--target", "dgemm_dist_shared", "-j", jobs]):
        if subprocess.run(cmd).returncode != 0:
            fail(f"building libdgemm-dist failed: {' '.join(cmd)}")
    incs, lib = from_prefix(tree)
    # the file the extension will ask for: the soname, the shortest versioned name
    names = sorted((f for f in os.listdir(lib) if re.fullmatch(r"libdgemm-dist\.so\.[0-9.]+", f)), key=len)
    if not names:
        fail(f"no libdgemm-dist.so.N in {lib} after the build")
    BUNDLE.append(os.path.join(lib, names[0]))
    return incs, lib


class build_ext_bundling(build_ext):
    """build_ext, then the library built here copied beside the extension.
    Always compiled and linked afresh (force): a python/build/ left by an
    install against another library folder would keep that folder's rpath."""

    def run(self):
        self.force = True
        super().run()
        for f in BUNDLE:
            shutil.copyfile(f, os.path.join(self.build_lib, "dgemm_dist", os.path.basename(f)))


def mpi_flags():
    """(include dirs, library dirs, libraries, extra link args) from mpicc."""
    cands = [os.environ.get("MPICC")]
    try:
        import mpi4py
        cands.append(mpi4py.get_config().get("mpicc"))
    except ImportError:
        fail("mpi4py is needed to build (its C header): pip install mpi4py, or apt-get install python3-mpi4py")
    cands.append("mpicc")
    for c in cands:
        if not c:
            continue
        exe = shlex.split(c)
        if not shutil.which(exe[0]):
            continue
        for probe in (["--showme:compile"], ["-show"]):
            r = subprocess.run(exe + probe, capture_output=True, text=True)
            if r.returncode == 0 and r.stdout.strip():
                break
        else:
            continue
        if probe == ["--showme:compile"]:
            comp = shlex.split(r.stdout)
            link = shlex.split(subprocess.run(exe + ["--showme:link"], capture_output=True, text=True,
                                              check=True).stdout)
        else:  # MPICH: one line, the compiler first
            comp = link = shlex.split(r.stdout)[1:]
        incs = [f[2:] for f in comp if f.startswith("-I")]
        libdirs = [f[2:] for f in link if f.startswith("-L")]
        libs = [f[2:] for f in link if f.startswith("-l")]
        extra = [f for f in link if f.startswith("-Wl,") or f == "-pthread"]
        return incs, libdirs, libs, extra
    fail("no mpicc found (set MPICC): the MPI the library was built with")


def version_of(incs):
    for i in incs:
        p = os.path.join(i, "dgemm_dist_version.h")
        if os.path.exists(p):
            m = re.search(r'#define\s+DGEMM_DIST_VERSION_STRING\s+"([^"]+)"', open(p).read())
            if m:
                return m.group(1)
    fail("dgemm_dist_version.h not found beside dgemm_dist.h (an install of an older dgemm-dist?)")


(incs, libdir), where = find_library()
import mpi4py  # noqa: E402  (found above)

mpi_incs, mpi_libdirs, mpi_libs, mpi_extra = mpi_flags()
print(f"dgemm_dist setup: libdgemm-dist from {where}: {libdir}")

setup(
    version=version_of(incs),
    ext_modules=[Extension(
        "dgemm_dist._core",
        sources=[os.path.join("src", "dgemm_dist", "_core.c")],  # relative to python/
        include_dirs=incs + [mpi4py.get_include()] + mpi_incs,
        library_dirs=[libdir] + mpi_libdirs,
        libraries=["dgemm-dist"] + mpi_libs,
        runtime_library_dirs=["$ORIGIN"] if BUNDLE else [libdir],
        extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Werror"],
        extra_link_args=mpi_extra,
    )],
    cmdclass={"build_ext": build_ext_bundling},
)
