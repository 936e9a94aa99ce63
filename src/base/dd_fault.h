/* dd_fault.h — fault injection for tests.
 *
 * DD_FAULT="point:rank[,point:rank...]" (rank a number or *) makes
 * dd_fault("point") true on that rank, so a test can make exactly one rank
 * fail at a named place (setup, multiply, write, ...) and assert that every
 * rank ends with the same message and code.  Read through the knobs
 * (dd_knobs.h); unset, it costs one look at the environment. */
#ifndef DD_FAULT_H
#define DD_FAULT_H

int dd_fault(const char *point);

#endif
