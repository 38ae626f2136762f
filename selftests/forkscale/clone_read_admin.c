// SPDX-License-Identifier: GPL-2.0
/*
 * The administrative side of the clone-read hook: the sysctl, the stats file
 * and the module's registration refuse bad input without changing anything,
 * and the module can be loaded and unloaded 100 times while tasks fork
 * without leaking a css_set.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/klog.h>
#include <sys/prctl.h>

#include "kselftest_harness.h"
#include "forkscale_util.h"

static int sysctl_is(const char *impl)
{
	char buf[64], want[64];

	if (read_file(SYSCTL, buf, sizeof(buf)))
		return -errno;
	snprintf(want, sizeof(want), "%s\n", impl);
	return strcmp(buf, want) ? -EINVAL : 0;
}

static void fork_some(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		pid_t p = fork();

		if (p == 0)
			_exit(0);
		if (p > 0)
			waitpid(p, NULL, 0);
	}
}

TEST(sysctl_selects_each_builtin)
{
	const char *impls[] = { "seqcount", "pinned", "rwlock", "locked" };
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(impls); i++) {
		ASSERT_EQ(0, write_str(SYSCTL, impls[i]));
		EXPECT_EQ(0, sysctl_is(impls[i]));
		EXPECT_EQ(0, stats_impl_is(impls[i]));
		fork_some(10);
	}
}

TEST(sysctl_refuses_unknown_names)
{
	const char *bad[] = { "bogus", "", "seqcount2", "module", "lockedx" };
	int i;

	ASSERT_EQ(0, write_str(SYSCTL, "seqcount"));
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(-EINVAL, write_str(SYSCTL, bad[i])) TH_LOG("wrote '%s'", bad[i]);
		EXPECT_EQ(0, sysctl_is("seqcount"));
	}
	write_str(SYSCTL, "locked");
}

/* The series' defect switch (measure/0010): an unknown name changes nothing. */
FIXTURE(defect_switch) {
	int unused;
};

FIXTURE_SETUP(defect_switch)
{
}

/* whatever happened, no later test runs with a defect on */
FIXTURE_TEARDOWN(defect_switch)
{
	write_str(DEFECT, "none");
}

TEST_F(defect_switch, refuses_unknown_names)
{
	const char *bad[] = { "bogus", "unvalidated", "no_post_fork_kill2",
			      "a name far longer than the switch's buffer" };
	char buf[64];
	int i;

	ASSERT_EQ(0, write_str(DEFECT, "unvalidated_read"));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(-EINVAL, write_str(DEFECT, bad[i])) TH_LOG("wrote '%s'", bad[i]);
		EXPECT_EQ(0, read_file(DEFECT, buf, sizeof(buf)));
		EXPECT_STREQ("unvalidated_read\n", buf);
	}
	EXPECT_EQ(0, write_str(DEFECT, "none"));
	EXPECT_EQ(0, read_file(DEFECT, buf, sizeof(buf)));
	EXPECT_STREQ("none\n", buf);
}

TEST(stats_reset_accepts_only_zero)
{
	ASSERT_EQ(0, write_str(SYSCTL, "seqcount"));
	fork_some(20);
	ASSERT_LE(20, stats_value("lockless"));
	EXPECT_EQ(-EINVAL, write_str(STATS, "1"));
	EXPECT_EQ(-EINVAL, write_str(STATS, "abc"));
	EXPECT_EQ(-EINVAL, write_str(STATS, "-1"));
	/* refused writes left the counters alone */
	EXPECT_LE(20, stats_value("lockless"));
	EXPECT_EQ(0, write_str(STATS, "0"));
	EXPECT_GT(5, stats_value("lockless"));
	write_str(SYSCTL, "locked");
}

TEST(module_owns_the_read_while_loaded)
{
	fork_some(5);
	ASSERT_EQ(0, write_str(SYSCTL, "rwlock"));
	ASSERT_EQ(0, load_module());
	EXPECT_EQ(0, stats_impl_is("forkscale"));
	fork_some(20);
	EXPECT_LE(20, stats_value("lockless"));
	/* a second load and a switch of the built-in are refused */
	EXPECT_EQ(-EEXIST, load_module());
	EXPECT_EQ(-EBUSY, write_str(SYSCTL, "seqcount"));
	EXPECT_EQ(0, sysctl_is("rwlock"));
	EXPECT_EQ(0, stats_impl_is("forkscale"));
	/* the module's counters also reset with 0 only */
	EXPECT_EQ(-EINVAL, write_str(STATS, "7"));
	EXPECT_EQ(0, write_str(STATS, "0"));
	EXPECT_GT(5, stats_value("lockless"));
	EXPECT_EQ(0, unload_module());
	/* the selected built-in comes back */
	EXPECT_EQ(0, stats_impl_is("rwlock"));
	fork_some(5);
	write_str(SYSCTL, "locked");
}

static void *noop(void *arg)
{
	return arg;
}

static void *spin_threads(void *arg)
{
	for (;;) {
		pthread_t t;

		if (!pthread_create(&t, NULL, noop, NULL))
			pthread_join(t, NULL);
	}
	return NULL;
}

FIXTURE(storm) {};
FIXTURE_SETUP(storm) {}
FIXTURE_TEARDOWN(storm) {}

/*
 * insmod/rmmod cycles (FORKSCALE_LOAD_CYCLES, 60 by default) while processes
 * fork and threads come and go, each load with all four takeovers: the read,
 * pid batching, the batched exit unlink and pid blocks.
 */
TEST_F_TIMEOUT(storm, load_unload_under_fork_storm, 600)
{
	int cycles = env_int("FORKSCALE_LOAD_CYCLES", 60), i, loads = 0, unloads = 0;
	/* the kernel log holds what tests before this one printed: count from here */
	int imbalances = unload_imbalances();
	long long baseline;
	pid_t storm[3];

	ASSERT_LE(0, imbalances);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	ASSERT_EQ(0, make_cgroup("forkscale_cr_storm"));
	ASSERT_EQ(0, write_str(SYSCTL, "locked"));
	baseline = stats_value("css_sets");
	ASSERT_LT(0, baseline);
	for (i = 0; i < 3; i++) {
		storm[i] = fork();
		ASSERT_LE(0, storm[i]);
		if (storm[i] == 0) {
			pthread_t t;

			if (i == 2 && pthread_create(&t, NULL, spin_threads, NULL))
				_exit(1);
			fork_forever();
		}
	}
	/* the storm's own cgroup gives it a css_set that must go away again */
	ASSERT_EQ(0, move_pid("forkscale_cr_storm", storm[0]));
	/*
	 * With a 1 s delay, pids and dead tasks are still queued when the
	 * module goes: with 10 ms the timer empties the queues during the
	 * unload's grace period, and the unload flush would have nothing to
	 * free or unlink.
	 */
	for (i = 0; i < cycles; i++) {
		loads += load_module_args("pid_max_delay_ms=1000 dead_batch=32 "
					  "dead_max_delay_ms=1000 pid_block=16") == 0;
		fork_some(1);
		unloads += unload_module() == 0;
	}
	for (i = 0; i < 3; i++) {
		kill(storm[i], SIGKILL);
		waitpid(storm[i], NULL, 0);
	}
	remove_cgroup("forkscale_cr_storm");
	reap_all();
	EXPECT_EQ(cycles, loads);
	EXPECT_EQ(cycles, unloads);
	EXPECT_EQ(0, stats_impl_is("locked"));
	EXPECT_EQ(0, wait_css_sets(baseline, 5000));
	/* each unload freed every pid and unlinked every task it had queued */
	EXPECT_EQ(imbalances, unload_imbalances());
	/* and gave back every number its blocks held */
	EXPECT_EQ(0, stat_value("/sys/kernel/debug/pid_block/stats", "waiting"));
	TH_LOG("%d load/unload cycles; css_sets back at %lld", cycles, baseline);
}

TEST_HARNESS_MAIN
