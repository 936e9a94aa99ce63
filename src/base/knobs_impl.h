/* knobs_impl.h — what the knobs' two files share, private to src/base:
 * knobs.c (the table, the environment's values and the warnings) and
 * knobs_parse.c (the parse of a value and the table's columns, pure).
 * dd_knobs.h is the interface. */
#ifndef DD_KNOBS_IMPL_H
#define DD_KNOBS_IMPL_H

/* knobs_parse.c: a value's whole number, which knobs.c's reading of the
 * launcher's rank takes too. */
int dd_knob_whole_number(const char *s, int sign, long long *v);

#endif
