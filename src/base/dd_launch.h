/* dd_launch.h — the launcher's share of the wall clock.
 *
 * What a user times is `mpirun ...` (or srun), which starts before any rank
 * does.  dd_launcher_age(): seconds since this process's parent started,
 * where the parent is an MPI or Slurm launcher (mpirun, orted, prterun,
 * slurmstepd, hydra); 0 otherwise (a singleton run from a shell) or where
 * /proc cannot tell.  Resolution: one clock tick (10 ms). */
#ifndef DD_LAUNCH_H
#define DD_LAUNCH_H

double dd_launcher_age(void);
/* This process's parent where that is such a launcher, else 0: a rank
 * whose parent changes has lost its launcher (the output discipline's
 * watch, io/io_output.c). */
long dd_launcher_pid(void);

#endif
