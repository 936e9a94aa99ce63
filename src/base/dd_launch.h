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

#endif
