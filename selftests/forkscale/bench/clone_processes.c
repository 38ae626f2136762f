// SPDX-License-Identifier: GPL-2.0
/*
 * clone_processes: each task clones a process that shares its memory
 * (CLONE_VM, own thread group, SIGCHLD) and waits for it. Without a page-table
 * copy, the task, pid and cgroup bookkeeping is most of what an operation costs.
 */
#include "bench.h"
#include <sched.h>

#define STACK_SIZE (64 * 1024)

static char *stacks[BENCH_MAX_TASKS];

static int child_fn(void *arg)
{
	return 7;
}

static int clone_setup(void)
{
	unsigned int i;

	for (i = 0; i < BENCH_MAX_TASKS; i++) {
		stacks[i] = malloc(STACK_SIZE);
		if (!stacks[i])
			return -1;
	}
	return 0;
}

static int clone_op(unsigned int task)
{
	return bench_reap(clone(child_fn, stacks[task] + STACK_SIZE, CLONE_VM | SIGCHLD, NULL), 7);
}

static const struct bench_workload clone_processes = {
	.name = "clone_processes",
	.setup = clone_setup,
	.op = clone_op,
};

int main(int argc, char **argv)
{
	return bench_main(argc, argv, &clone_processes);
}
