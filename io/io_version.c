/* io_version.c — the HDF5 library version, for reports. */
#include <hdf5.h>
#include <stdio.h>

#include "io.h"

const char *io_library_version(void)
{
    static char v[48];
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
#ifdef DD_HAVE_PHDF5
    snprintf(v, sizeof v, "%u.%u.%u (parallel)", maj, min, rel);
#else
    snprintf(v, sizeof v, "%u.%u.%u (serial)", maj, min, rel);
#endif
    return v;
}
