// SPDX-License-Identifier: GPL-2.0
/*
 * Process and thread life cycles complete with the right exit status, serially
 * and from every CPU at once. These are the paths forkscale changes.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

/*
 * The harness gives TEST() a 30 s timeout and no TEST_TIMEOUT(): not enough
 * under TCG on a busy host (the multi-threaded guest's every_cpu case took
 * over 30 s while the host also ran a debootstrap). TEST() reads the default
 * where it is used. These are correctness tests, not timed ones.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define ITERATIONS 300

/* Fork, exit with a per-iteration code, reap; returns the number of mismatches. */
static int fork_exit_wait(int iterations)
{
	int i, status, bad = 0;

	for (i = 0; i < iterations; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return iterations;
		if (pid == 0)
			_exit(i & 0x7f);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != (i & 0x7f))
			bad++;
	}
	return bad;
}

static void *echo_plus_one(void *arg)
{
	return (void *)((uintptr_t)arg + 1);
}

TEST(fork_exit_wait_serial)
{
	EXPECT_EQ(0, fork_exit_wait(ITERATIONS));
}

TEST(thread_create_join_serial)
{
	uintptr_t i;

	for (i = 0; i < ITERATIONS; i++) {
		pthread_t thread;
		void *ret;

		ASSERT_EQ(0, pthread_create(&thread, NULL, echo_plus_one, (void *)i));
		ASSERT_EQ(0, pthread_join(thread, &ret));
		ASSERT_EQ(i + 1, (uintptr_t)ret);
	}
}

/* One forker per CPU, each checking its own children; the parent checks the forkers. */
TEST(fork_exit_wait_every_cpu)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int i, status, failed = 0;

	ASSERT_LT(0, cpus);
	for (i = 0; i < cpus; i++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (pid == 0)
			_exit(fork_exit_wait(ITERATIONS) ? 1 : 0);
	}
	for (i = 0; i < cpus; i++) {
		ASSERT_LT(0, wait(&status));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	EXPECT_EQ(0, failed);
}

TEST_HARNESS_MAIN
