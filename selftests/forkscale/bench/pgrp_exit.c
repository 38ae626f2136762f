// SPDX-License-Identifier: GPL-2.0
/*
 * pgrp_exit: each task forks a process-group leader that forks one member
 * and exits; the task reaps the leader, then lets the member exit and reaps
 * it. The leader's struct pid outlives the leader as the group's id, so the
 * member's release frees two pids, its own and the group's: the case where
 * free_pids() has more than one pid to free. Two process creates, exits and
 * reaps per operation.
 */
#include <sys/prctl.h>
#include "bench.h"

/* Per task (each task is a process of its own): the member's go-ahead. */
static int go[2] = { -1, -1 };

static int pgrp_exit_op(unsigned int task)
{
	pid_t leader, member;
	int pids[2];
	char c = 0;

	/* The member is reparented to the task when its leader exits. */
	if (go[0] < 0 && (prctl(PR_SET_CHILD_SUBREAPER, 1) || pipe(go)))
		return -1;
	/* The leader reports its member's pid on this pipe. */
	if (pipe(pids))
		return -1;
	leader = fork();
	if (leader == 0) {
		if (setpgid(0, 0))
			_exit(1);
		close(pids[0]);
		member = fork();
		if (member == 0) {
			/*
			 * Exit only once the leader has been reaped; without
			 * write ends of its own, a task that gave up ends it.
			 */
			close(go[1]);
			close(pids[1]);
			_exit(read(go[0], &c, 1) == 1 ? 7 : 1);
		}
		_exit(member > 0 && write(pids[1], &member, sizeof(member)) ==
		      sizeof(member) ? 7 : 1);
	}
	close(pids[1]);
	if (read(pids[0], &member, sizeof(member)) != sizeof(member))
		member = -1;
	close(pids[0]);
	if (bench_reap(leader, 7) || member < 0 || write(go[1], &c, 1) != 1)
		return -1;
	return bench_reap(member, 7);
}

static const struct bench_workload pgrp_exit = {
	.name = "pgrp_exit",
	.op = pgrp_exit_op,
};

int main(int argc, char **argv)
{
	return bench_main(argc, argv, &pgrp_exit);
}
