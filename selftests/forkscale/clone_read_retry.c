// SPDX-License-Identifier: GPL-2.0
/*
 * The seqcount clone read's rare paths, made to happen.
 *
 * A fork's read is retried when a write section of css_set_for_clone_seq ran
 * during it, and after CGROUP_CLONE_MAX_TRIES (4) such attempts it is done
 * under css_set_lock. Under the threadgroup rwsem the only writers that can
 * overlap a fork's read are cgroup.kill's kill_seq bumps, threads moving
 * themselves and, in the per-threadgroup rwsem mode (favordynmods), moves of
 * other processes; the read is a few dozen instructions, so neither path is
 * taken by chance. The series' debug delay
 * read_delay_us (/sys/kernel/debug/cgroup_kill_window) busy-waits inside the
 * reads of one process's forks, while another process kills an empty cgroup
 * in a loop:
 *
 *   delay_alone_never_retries: without the kills, no read retries (the
 *     control: the delay by itself invalidates nothing);
 *   kills_force_retries_and_the_locked_read: with them, reads retry and some
 *     fall back to the lock, and every child still starts in its parent's
 *     cgroup and exits normally. It needs two CPUs: the read runs with
 *     preemption off (rcu_read_lock()), so on one CPU no kill lands inside it.
 *
 * Both seqcount reads run it: the built-in and the module's (the kernel
 * crate's cgroup_clone::read_window_delay(), at the same place in its read).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "forkscale_util.h"

#define RR_PARENT "forkscale_rr"	/* where the forks happen */
#define RR_VICTIM "forkscale_rr_victim"	/* empty; killed again and again */
#define FORKS 40
#ifndef READ_US
#define READ_US 2000
#endif

/*
 * Moves into RR_PARENT, waits for the go, then forks FORKS children, each of
 * which exits 0 only if it started in RR_PARENT. Exits 0 if all of them did.
 */
static void __attribute__((noreturn)) forker(int go_fd)
{
	const char *want = "0::/" RR_PARENT "\n";
	int i, status, bad = 0;
	char c, buf[256];

	if (move_pid(RR_PARENT, getpid()) || read(go_fd, &c, 1) != 1)
		_exit(100);
	for (i = 0; i < FORKS; i++) {
		pid_t p = fork();

		if (p < 0)
			_exit(101);
		if (p == 0)
			_exit(read_file("/proc/self/cgroup", buf, sizeof(buf)) || strcmp(buf, want));
		if (waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	_exit(bad ? 102 : 0);
}

static void __attribute__((noreturn)) kill_loop(void)
{
	for (;;)
		write_str(CGROOT "/" RR_VICTIM "/cgroup.kill", "1");
}

FIXTURE(clone_read_retry) {
	pid_t forker, killer;
	long long lockless, retries, locked;
};

FIXTURE_VARIANT(clone_read_retry) {
	const char *impl;
};

FIXTURE_VARIANT_ADD(clone_read_retry, seqcount) { .impl = "seqcount" };
FIXTURE_VARIANT_ADD(clone_read_retry, module) { .impl = "module" };

FIXTURE_SETUP(clone_read_retry)
{
	self->forker = self->killer = -1;
	ASSERT_EQ(0, access(KW_DIR "read_delay_us", W_OK)) TH_LOG("no read delay in this kernel");
	kw_off();
	ASSERT_EQ(0, select_impl(variant->impl));
	ASSERT_EQ(0, make_cgroup(RR_PARENT));
	ASSERT_EQ(0, make_cgroup(RR_VICTIM));
}

FIXTURE_TEARDOWN(clone_read_retry)
{
	kw_off();
	if (self->killer > 0) {
		kill(self->killer, SIGKILL);
		waitpid(self->killer, NULL, 0);
	}
	remove_cgroup(RR_PARENT);
	remove_cgroup(RR_VICTIM);
	reap_all();
	restore_impl(variant->impl);
}

/* One run of the forker with the read delay on; fills in the read's counters. */
static void run(struct __test_metadata *_metadata,
		FIXTURE_DATA(clone_read_retry) *self,
		const FIXTURE_VARIANT(clone_read_retry) *variant, bool kills)
{
	int go[2], status;

	ASSERT_EQ(0, pipe(go));
	self->forker = fork();
	ASSERT_LE(0, self->forker);
	if (self->forker == 0) {
		close(go[1]);
		forker(go[0]);
	}
	close(go[0]);
	ASSERT_EQ(0, kw_set("tgid", self->forker));
	ASSERT_EQ(0, kw_set("read_delay_us", READ_US));
	ASSERT_EQ(0, kw_set("enabled", 1));
	if (kills) {
		self->killer = fork();
		ASSERT_LE(0, self->killer);
		if (self->killer == 0)
			kill_loop();
	}
	ASSERT_EQ(0, write_str(STATS, "0"));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(self->forker, waitpid(self->forker, &status, 0));
	self->lockless = stats_value("lockless");
	self->retries = stats_value("retries");
	self->locked = stats_value("locked");
	TH_LOG("%s", stats_line());
	EXPECT_EQ(0, stats_impl_is(impl_stats_name(variant->impl)));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("forker status %#x", status);
}

TEST_F_TIMEOUT(clone_read_retry, delay_alone_never_retries, 120)
{
	run(_metadata, self, variant, false);
	EXPECT_LE(FORKS, self->lockless);
	EXPECT_EQ(0, self->retries);
	EXPECT_EQ(0, self->locked);
}

TEST_F_TIMEOUT(clone_read_retry, kills_force_retries_and_the_locked_read, 120)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU: no kill can land inside a read");
	run(_metadata, self, variant, true);
	EXPECT_LT(0, self->retries);
	EXPECT_LT(0, self->locked);
	/* every fork was counted once, whichever way it read */
	EXPECT_LE(FORKS, self->lockless + self->locked);
}

TEST_HARNESS_MAIN
