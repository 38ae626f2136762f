// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup.kill window, with every clone read.
 *
 * __cgroup_kill() bumps kill_seq, then walks the cgroup signalling each task.
 * cgroup_post_fork() kills the child if kill_seq changed since the fork read
 * it. In stock 7.3, a fork that read the new value is meant to fail at
 * copy_process()'s fatal-signal check; but if the walk signals the parent only
 * after that check and finishes before the child is linked, the child
 * survives. The cgroup series' first patch closes that window (CGRP_KILL
 * across the walk, a second increment after it). The series' debug delay
 * points (/sys/kernel/debug/cgroup_kill_window) hold the walk and the fork's
 * link step, so the two orders are reached on purpose:
 *
 *   read_before_kill: the fork reads kill_seq, then the kill runs: the child
 *     is killed at link time (what kill_seq exists for);
 *   read_inside_window: the kill's section runs, then the fork reads and
 *     passes its fatal-signal check, then the walk, then the link: the child
 *     is killed too, by the second increment. Stock 7.3 lets it survive, as
 *     the open_kill_window defect (tests/twins.txt) shows.
 *
 * Every read, the module's included, must behave as locked (stock's read)
 * does. The test orders the steps by waiting for the delayed task to sleep in
 * its delay point, not by timing.
 */
#define _GNU_SOURCE
#include <sys/prctl.h>

#include "kselftest_harness.h"
#include "forkscale_util.h"

#define KW_CG "forkscale_kw"
#define WALK_MS 1000
#define LINK_MS 2000

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * Waits until @pid sleeps in a delay point (wchan "msleep": nothing else on
 * these paths calls it), so the test orders the steps by state, not by time.
 */
static int wait_in_delay(pid_t pid)
{
	char path[64], buf[64];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	for (i = 0; i < 2000; i++) {
		if (!read_file(path, buf, sizeof(buf)) && !strcmp(buf, "msleep"))
			return 0;
		usleep(5000);
	}
	return -1;
}

/* The number of processes in the test cgroup, or -1. */
static int procs_in_cgroup(void)
{
	char buf[4096], *p;
	int n = 0;

	if (read_file(CGROOT "/" KW_CG "/cgroup.procs", buf, sizeof(buf)))
		return -1;
	for (p = buf; *p; p++)
		n += *p == '\n';
	return n;
}

/*
 * One run: a parent in the test cgroup forks a pausing child, either after
 * the kill's section (the killer sleeps before its walk) or before the kill
 * (the parent's fork sleeps before linking its child). Returns 1 if a child
 * is still in the cgroup once the kill is over, 0 if not, -1 if the run went
 * wrong; *held_ms is how long the parent lived after it was told to go.
 */
static int run_once(struct __test_metadata *_metadata, bool fork_after_section,
		    long long *held_ms)
{
	int go[2], status, left = -1;
	pid_t parent, killer;
	long long t, go_at;
	char c;

	if (pipe(go))
		return -1;
	parent = fork();
	if (parent < 0)
		return -1;
	if (parent == 0) {
		close(go[1]);
		if (move_pid(KW_CG, getpid()) || read(go[0], &c, 1) != 1)
			_exit(1);
		if (fork() == 0) {
			pause();
			_exit(0);
		}
		/* not reached: SIGKILL is pending when the fork returns */
		pause();
		_exit(0);
	}
	close(go[0]);
	for (t = 0; t < 500 && procs_in_cgroup() != 1; t++)
		usleep(10000);
	if (procs_in_cgroup() != 1)
		return -1;
	if (kw_set("tgid", parent) || kw_set("walk_delay_ms", WALK_MS) ||
	    kw_set("link_delay_ms", LINK_MS) || kw_set("enabled", 1))
		return -1;

	go_at = now_ms();
	if (!fork_after_section) {
		/* the parent reads kill_seq, then sleeps before the link */
		if (write(go[1], "g", 1) != 1 || wait_in_delay(parent))
			return -1;
	}
	killer = fork();
	if (killer == 0)
		_exit(write_str(CGROOT "/" KW_CG "/cgroup.kill", "1") ? 1 : 0);
	if (fork_after_section) {
		/* the section is done once the killer sleeps before its walk */
		if (wait_in_delay(killer) || write(go[1], "g", 1) != 1)
			return -1;
	}
	close(go[1]);
	waitpid(killer, NULL, 0);
	waitpid(parent, &status, 0);
	*held_ms = now_ms() - go_at;
	kw_off();
	/* the walk, not anything else, ended the parent */
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	/* a killed child may take a while to leave the cgroup on a slow guest */
	for (t = 0; t < 500; t++) {
		left = procs_in_cgroup();
		if (left <= 0)
			break;
		usleep(10000);
	}
	TH_LOG("parent held %lld ms, %d left in the cgroup", *held_ms, left);
	write_str(CGROOT "/" KW_CG "/cgroup.kill", "1");
	return left < 0 ? -1 : left > 0;
}

FIXTURE(kill_window) {
	int unused;
};

FIXTURE_VARIANT(kill_window) {
	const char *impl;
};

FIXTURE_VARIANT_ADD(kill_window, locked) { .impl = "locked" };
FIXTURE_VARIANT_ADD(kill_window, pinned) { .impl = "pinned" };
FIXTURE_VARIANT_ADD(kill_window, seqcount) { .impl = "seqcount" };
FIXTURE_VARIANT_ADD(kill_window, rwlock) { .impl = "rwlock" };
FIXTURE_VARIANT_ADD(kill_window, module) { .impl = "module" };
FIXTURE_VARIANT_ADD(kill_window, module_pinned) { .impl = "module-pinned" };

FIXTURE_SETUP(kill_window)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	ASSERT_EQ(0, access(KW_DIR "enabled", W_OK)) TH_LOG("no delay points in this kernel");
	kw_off();
	ASSERT_EQ(0, select_impl(variant->impl));
	ASSERT_EQ(0, make_cgroup(KW_CG));
}

FIXTURE_TEARDOWN(kill_window)
{
	kw_off();
	remove_cgroup(KW_CG);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	restore_impl(variant->impl);
}

/* The fork reads kill_seq before the kill: cgroup_post_fork() kills the child. */
TEST_F_TIMEOUT(kill_window, read_before_kill_child_killed, 60)
{
	long long held_ms;

	EXPECT_EQ(0, run_once(_metadata, false, &held_ms));
	/* the link delay held the fork while the kill ran */
	EXPECT_LE(LINK_MS, held_ms);
}

/*
 * The kill's section, then the fork's read and fatal-signal check, then the
 * walk, then the link: the child is killed all the same, under every read.
 * This is the reproducer of stock 7.3's window, where the child survives.
 */
TEST_F_TIMEOUT(kill_window, read_inside_window_child_killed, 60)
{
	long long held_ms;

	EXPECT_EQ(0, run_once(_metadata, true, &held_ms));
	EXPECT_LE(LINK_MS, held_ms);
}

TEST_HARNESS_MAIN
