// SPDX-License-Identifier: GPL-2.0
/*
 * forkexit: each task forks a child that exits at once, and waits for it. One
 * process create, exit and reap per operation, page-table copy included.
 */
#include "bench.h"

static int forkexit_op(unsigned int task)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(7);
	return bench_reap(pid, 7);
}

static const struct bench_workload forkexit = {
	.name = "forkexit",
	.op = forkexit_op,
};

int main(int argc, char **argv)
{
	return bench_main(argc, argv, &forkexit);
}
