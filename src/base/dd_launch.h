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
 * watch, io/io_output_signals.c). */
long dd_launcher_pid(void);
/* This rank's place among the ranks of its node as the launcher's
 * environment says it, before MPI is started: OMPI_COMM_WORLD_LOCAL_RANK
 * (Open MPI), MPI_LOCALRANKID (MPICH's Hydra), PMI_LOCAL_RANK, PALS_LOCAL_RANKID,
 * SLURM_LOCALID (srun), the first that holds a whole number >= 0; 0 for a
 * singleton (none of them, and none of OMPI_COMM_WORLD_SIZE, PMI_SIZE,
 * PMIX_RANK, SLURM_PROCID set); -1 where a launcher ran but says nothing. */
int dd_launch_local_rank(void);
/* 1 where no launcher's variable is set (those above, and
 * OMPI_COMM_WORLD_RANK and PMI_RANK): a process started without mpirun or
 * srun, an MPI singleton; else 0. */
int dd_launch_singleton(void);

#endif
