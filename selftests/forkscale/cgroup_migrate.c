// SPDX-License-Identifier: GPL-2.0
/*
 * The css_set_for_clone_seq write side runs on every migration and cgroup.kill.
 * Exercise both while the affected tasks fork, so that lockdep (debug flavour)
 * checks the write side, and check that migrations and kills still do their job.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "forkscale_util.h"

#define MOVES 200

/* Returns 1 if /proc/<pid>/cgroup names @cgroup on the v2 hierarchy. */
static int in_cgroup(pid_t pid, const char *cgroup)
{
	char path[64], line[256], want[256];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	snprintf(want, sizeof(want), "0::/%s\n", cgroup);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strcmp(line, want))
			found = 1;
	fclose(f);
	return found;
}

TEST(migrate_a_forking_task)
{
	const char *cg[2] = { "forkscale_mig_a", "forkscale_mig_b" };
	int i, misplaced = 0, failed = 0, status;
	pid_t child;

	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, make_cgroup(cg[i]));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0)
		fork_forever();

	for (i = 0; i < MOVES; i++) {
		if (move_pid(cg[i % 2], child))
			failed++;
		else if (!in_cgroup(child, cg[i % 2]))
			misplaced++;
	}
	kill(child, SIGKILL);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	/* Kills the orphaned grandchildren and waits for the cgroups to empty. */
	for (i = 0; i < 2; i++)
		remove_cgroup(cg[i]);
	EXPECT_EQ(0, failed);
	EXPECT_EQ(0, misplaced);
}

TEST(kill_a_forking_cgroup)
{
	const char *dir = CGROOT "/forkscale_kill";
	int status, i;
	char procs[64];
	pid_t child;

	rmdir(dir);
	ASSERT_EQ(0, mkdir(dir, 0755));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0)
		fork_forever();
	ASSERT_EQ(0, move_pid("forkscale_kill", child));
	usleep(50000);
	ASSERT_EQ(0, write_str(CGROOT "/forkscale_kill/cgroup.kill", "1"));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));

	/* Children forked while the kill ran must die too: the cgroup empties. */
	for (i = 0; i < 500; i++) {
		FILE *f = fopen(CGROOT "/forkscale_kill/cgroup.procs", "r");
		int empty = f && !fgets(procs, sizeof(procs), f);

		if (f)
			fclose(f);
		if (empty)
			break;
		usleep(20000);
	}
	EXPECT_LT(i, 500); /* 10 s: generous for a TCG guest */
	EXPECT_EQ(0, rmdir(dir));
}

TEST_HARNESS_MAIN
