// SPDX-License-Identifier: GPL-2.0
/*
 * migrate_pingpong: each task moves itself between two cgroups by writing 0
 * (the writer) to their cgroup.procs, alternately; one migration per operation.
 * This is the case of the 2013 attach regression (synchronize_rcu() per
 * migration), and what Android does per binder call; the seqcount write side
 * must not slow it. Run as `-t 1 -n 1000`.
 */
#include <sys/stat.h>
#include "bench.h"

#define CG_A "/sys/fs/cgroup/forkscale-bench-a"
#define CG_B "/sys/fs/cgroup/forkscale-bench-b"

static int fd_a = -1, fd_b = -1;

static int migrate_setup(void)
{
	rmdir(CG_A);
	rmdir(CG_B);
	if ((mkdir(CG_A, 0755) && errno != EEXIST) || (mkdir(CG_B, 0755) && errno != EEXIST))
		return -1;
	fd_a = open(CG_A "/cgroup.procs", O_WRONLY);
	fd_b = open(CG_B "/cgroup.procs", O_WRONLY);
	return fd_a < 0 || fd_b < 0 ? -1 : 0;
}

static int migrate_op(unsigned int task)
{
	static unsigned long n;

	return write(n++ & 1 ? fd_b : fd_a, "0", 1) == 1 ? 0 : -1;
}

static void migrate_teardown(void)
{
	/* The tasks have exited; nothing is left in either cgroup. */
	close(fd_a);
	close(fd_b);
	if (rmdir(CG_A) || rmdir(CG_B))
		perror("migrate_pingpong: rmdir");
}

static const struct bench_workload migrate_pingpong = {
	.name = "migrate_pingpong",
	.setup = migrate_setup,
	.op = migrate_op,
	.teardown = migrate_teardown,
};

int main(int argc, char **argv)
{
	return bench_main(argc, argv, &migrate_pingpong);
}
