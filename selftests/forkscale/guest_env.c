// SPDX-License-Identifier: GPL-2.0
/*
 * The guest provides what forkscale's tests rely on: every vCPU online, cgroup v2
 * with the controllers the fork path charges, the freezer, and pid and user
 * namespaces.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

static int read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t len;

	if (!f)
		return -errno;
	len = fread(buf, 1, size - 1, f);
	buf[len] = '\0';
	fclose(f);
	return len;
}

static int has_word(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p;

	for (p = strstr(list, word); p; p = strstr(p + 1, word))
		if ((p == list || p[-1] == ' ') &&
		    (p[len] == ' ' || p[len] == '\n' || p[len] == '\0'))
			return 1;
	return 0;
}

TEST(all_vcpus_online)
{
	char cmdline[4096];
	const char *arg;
	long want;

	ASSERT_LT(0, read_file("/proc/cmdline", cmdline, sizeof(cmdline)));
	arg = strstr(cmdline, "forkscale.smp=");
	if (!arg)
		SKIP(return, "no forkscale.smp= on the kernel command line");
	want = strtol(arg + strlen("forkscale.smp="), NULL, 10);
	EXPECT_EQ(want, sysconf(_SC_NPROCESSORS_ONLN));
}

TEST(cgroup2_controllers)
{
	char controllers[512];

	ASSERT_LT(0, read_file(CGROUP_ROOT "/cgroup.controllers", controllers,
			       sizeof(controllers)));
	EXPECT_TRUE(has_word(controllers, "cpu"));
	EXPECT_TRUE(has_word(controllers, "memory"));
	EXPECT_TRUE(has_word(controllers, "pids"));
}

TEST(cgroup2_freezer_and_kill)
{
	const char *dir = CGROUP_ROOT "/forkscale_env";
	struct stat st;

	rmdir(dir);
	ASSERT_EQ(0, mkdir(dir, 0755));
	EXPECT_EQ(0, stat(CGROUP_ROOT "/forkscale_env/cgroup.freeze", &st));
	EXPECT_EQ(0, stat(CGROUP_ROOT "/forkscale_env/cgroup.kill", &st));
	EXPECT_EQ(0, rmdir(dir));
}

/* In a new user and pid namespace, the first child is pid 1. */
TEST(pid_and_user_namespaces)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		pid_t init;

		if (unshare(CLONE_NEWUSER | CLONE_NEWPID))
			_exit(10);
		init = fork();
		if (init < 0)
			_exit(11);
		if (init == 0)
			_exit(getpid() == 1 ? 0 : 12);
		if (waitpid(init, &status, 0) != init || !WIFEXITED(status))
			_exit(13);
		_exit(WEXITSTATUS(status));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
