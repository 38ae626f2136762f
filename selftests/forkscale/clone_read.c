// SPDX-License-Identifier: GPL-2.0
/*
 * Races against the clone-time css_set read, for every implementation of
 * kernel.cgroup_clone_read and for the forkscale module:
 *  - forks and thread creations while their parent and other tasks migrate:
 *    every child starts in a cgroup its parent was in, and in the parent's
 *    cgroup when no move of the parent overlapped its fork;
 *  - a forking cgroup killed over and over: every kill empties the cgroup;
 *  - a fork after a kill of its cgroup is over: the child lives;
 *  - clone3(CLONE_INTO_CGROUP) while the parent migrates: the child lands in
 *    the requested cgroup;
 * and afterwards the number of live css_sets is back at the baseline taken
 * before the implementation's first test. The debug flavour adds lockdep,
 * KASAN and refcount checking underneath.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "forkscale_util.h"

#define CG_A "forkscale_cr_a"
#define CG_B "forkscale_cr_b"
#define CG_C "forkscale_cr_c"

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/*
 * What P's migrator and P share: @moves is odd while a move of P runs;
 * @window_us is a moving average of P's windows (from its read of @moves to
 * its next; the longer of each iteration's fork and thread), and @pause_ms
 * the longest pause the migrator has taken.
 */
struct migrator_pace {
	_Atomic unsigned long moves;
	_Atomic unsigned long window_us;
	_Atomic unsigned long pause_ms;
};

/*
 * Spawns a task that moves @pid between A and B until killed. With @pace, it
 * makes pace->moves odd while each move runs, and pauses after two moves of
 * every four (one into A, one into B): a task that sees the same even value
 * before and after a fork knows no move of it overlapped the fork, and the
 * gaps make that happen often, in both cgroups. The pause is 20 ms, or
 * FORKSCALE_MIGRATE_PAUSE_MS (under multi-threaded TCG a fork runs in
 * parallel with the moves and rarely fits 20 ms), and at least twice P's
 * average window: on a loaded host a TCG guest's forks take longer in
 * guest time, and a fixed pause then rarely holds a whole window.
 */
static pid_t start_migrator(pid_t pid, struct migrator_pace *pace)
{
	int env_ms = env_int("FORKSCALE_MIGRATE_PAUSE_MS", 20);
	unsigned long pause_ms = env_ms, ms, i;
	pid_t m;

	if (env_ms < 1 || env_ms > 900) {
		fprintf(stderr, "# FORKSCALE_MIGRATE_PAUSE_MS=%d is not in 1..900: 20 ms\n",
			env_ms);
		pause_ms = 20;
	}
	m = fork();
	if (m)
		return m;
	for (i = 0;; i++) {
		if (pace)
			atomic_fetch_add(&pace->moves, 1);
		move_pid(i % 2 ? CG_A : CG_B, pid);
		if (!pace)
			continue;
		atomic_fetch_add(&pace->moves, 1);
		if (i % 4 < 2)
			continue;
		ms = 2 * atomic_load(&pace->window_us) / 1000 + 1;
		ms = ms < pause_ms ? pause_ms : ms > 900 ? 900 : ms;
		if (ms > atomic_load(&pace->pause_ms))
			atomic_store(&pace->pause_ms, ms);
		usleep(1000 * ms);
	}
}

/* Sleeps until killed: a bystander whose migrations bump the sequence. */
static pid_t start_sleeper(void)
{
	pid_t s = fork();

	if (s)
		return s;
	for (;;)
		pause();
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

FIXTURE(clone_read) {
	int css_sets;
};

FIXTURE_VARIANT(clone_read) {
	const char *impl;	/* a built-in name, "module" or "module-pinned" */
	int kill_iters;		/* FORKSCALE_KILL_ITERS overrides */
};

/*
 * The module's reader is what forkscale ships, so it takes the most kills; the
 * built-ins fewer. On 7.3 a kill costs about 45 ms with the debug kernel under
 * single-threaded TCG, and two to three times that on a loaded CI host, so
 * make check's counts stay small: make soak runs 3000 kills for every read
 * (FORKSCALE_KILL_ITERS).
 */
FIXTURE_VARIANT_ADD(clone_read, locked) { .impl = "locked", .kill_iters = 200 };
FIXTURE_VARIANT_ADD(clone_read, pinned) { .impl = "pinned", .kill_iters = 200 };
FIXTURE_VARIANT_ADD(clone_read, seqcount) { .impl = "seqcount", .kill_iters = 200 };
FIXTURE_VARIANT_ADD(clone_read, rwlock) { .impl = "rwlock", .kill_iters = 200 };
FIXTURE_VARIANT_ADD(clone_read, module) { .impl = "module", .kill_iters = 600 };
FIXTURE_VARIANT_ADD(clone_read, module_pinned) { .impl = "module-pinned", .kill_iters = 200 };

/* Where the first test of an implementation leaves the baseline for the rest. */
static void baseline_path(char *path, size_t size, pid_t harness, const char *impl)
{
	snprintf(path, size, "/tmp/forkscale_css_sets.%d.%s", (int)harness, impl);
}

/*
 * The harness's pid, recorded before it forks a child per test (and a
 * grandchild for each TEST_F): it names this run's baseline files. A file an
 * earlier process with the same pid left behind is removed first.
 */
static pid_t harness_pid;

static void __attribute__((constructor)) record_harness(void)
{
	static const char *const impls[] = {
		"locked", "pinned", "seqcount", "rwlock", "module", "module-pinned",
	};
	char path[128];
	size_t i;

	harness_pid = getpid();
	for (i = 0; i < sizeof(impls) / sizeof(impls[0]); i++) {
		baseline_path(path, sizeof(path), harness_pid, impls[i]);
		unlink(path);
	}
}

/*
 * The first value @now this run of the harness saw for @impl. Each test runs
 * in a descendant of the harness, so it is kept in a file.
 */
static int run_baseline(const char *impl, int now)
{
	char path[128];
	FILE *f;
	int first;

	baseline_path(path, sizeof(path), harness_pid, impl);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &first) != 1)
			first = -1;
		fclose(f);
		return first;
	}
	f = fopen(path, "w");
	if (!f || fprintf(f, "%d\n", now) < 0)
		now = -1;
	if (f)
		fclose(f);
	return now;
}

FIXTURE_SETUP(clone_read)
{
	const char *cg[] = { CG_A, CG_B, CG_C };
	int i;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	ASSERT_EQ(0, select_impl(variant->impl));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, make_cgroup(cg[i]));
	/*
	 * After the cgroups exist: their css_sets are part of the baseline. One
	 * baseline for each implementation's whole run, taken by its first test:
	 * one taken per test would absorb what the tests before it leaked.
	 */
	self->css_sets = run_baseline(variant->impl, stats_value("css_sets"));
	ASSERT_LT(0, self->css_sets);
	ASSERT_EQ(0, write_str(STATS, "0"));
}

FIXTURE_TEARDOWN(clone_read)
{
	const char *cg[] = { CG_A, CG_B, CG_C };
	int i;

	reap_all();
	for (i = 0; i < 3; i++)
		remove_cgroup(cg[i]);
	restore_impl(variant->impl);
}

/* Checks the implementation under test did the reads, lockless where it can. */
static void impl_was_used(struct __test_metadata *_metadata, const char *impl)
{
	EXPECT_EQ(0, stats_impl_is(impl_stats_name(impl)));
	if (!strcmp(impl, "seqcount") || impl_is_module(impl))
		EXPECT_LT(0, stats_value("lockless"));
}

/* What the parent P of children_start_in_a_cgroup_of_the_parent counts. */
struct placement {
	struct migrator_pace pace;	/* shared with P's migrator */
	int exact;			/* children started while P stayed put */
	int exact_in_b;			/* ... in B, where P started only after a move */
	int elsewhere;			/* ... that started in another cgroup */
};

struct thread_report {
	int pipe_wr;
	char cgroup;
};

static void *thread_report(void *arg)
{
	struct thread_report *r = arg;

	r->cgroup = cgroup_letter("/proc/thread-self/cgroup");
	if (write(r->pipe_wr, &r->cgroup, 1) != 1)
		return NULL;
	return NULL;
}

/*
 * P's side of one child, which started in @child's cgroup: if no move of P
 * overlapped the time from @moves_before (when P read its own cgroup, @mine)
 * until @moves_after, the child must have started in @mine.
 */
static void placed(struct placement *pl, unsigned long moves_before,
		   unsigned long moves_after, char mine, char child)
{
	if (moves_before % 2 || moves_after != moves_before)
		return;
	pl->exact++;
	pl->exact_in_b += mine == 'B';
	pl->elsewhere += child != mine;
}

/*
 * Forks, and as many thread creations, per placement case. Under TCG about half
 * of the windows are quiet (no move of P inside them), and the exact check
 * needs some in each cgroup: 200 leave about 200, at two thirds of the time of
 * 300 (this test's six cases are the largest share of make check's main guest).
 */
#define PLACEMENT_CHILDREN 200

/*
 * The parent P forks processes and creates threads, each reporting the
 * cgroup it starts in, while one migrator moves P and another moves a
 * sleeping bystander between A and B. Each child must start in A or B; one
 * started while P stayed put must start in P's cgroup, not one P left.
 */
TEST_F_TIMEOUT(clone_read, children_start_in_a_cgroup_of_the_parent, 300)
{
	int fds[2], go[2], i, in_ab = 0, other = 0, n = 0;
	pid_t p, mig_p, sleeper, mig_s;
	struct placement *pl;
	struct timespec t0, t1;
	char c;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pl = mmap(NULL, sizeof(*pl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pl);
	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, pipe(go));
	p = fork();
	ASSERT_LE(0, p);
	if (p == 0) {
		struct thread_report r = { .pipe_wr = fds[1] };

		close(fds[0]);
		close(go[1]);
		/* start forking only once the parent has moved us into A */
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (i = 0; i < PLACEMENT_CHILDREN; i++) {
			long long t = now_us(), fork_us;
			unsigned long moves = atomic_load(&pl->pace.moves);
			char mine = cgroup_letter("/proc/self/cgroup");
			int status;
			pthread_t th;
			pid_t k = fork();
			/*
			 * The child is linked into its cgroup before fork()
			 * returns, and moves of P do not move it: the window
			 * ends here, not after the wait (which took longer
			 * than the migrator's pauses in one run).
			 */
			unsigned long after = atomic_load(&pl->pace.moves);

			fork_us = now_us() - t;
			if (k == 0) {
				c = cgroup_letter("/proc/self/cgroup");
				_exit(write(fds[1], &c, 1) == 1 ? c : 1);
			}
			if (k > 0 && waitpid(k, &status, 0) == k && WIFEXITED(status))
				placed(pl, moves, after, mine, WEXITSTATUS(status));

			t = now_us();
			moves = atomic_load(&pl->pace.moves);
			mine = cgroup_letter("/proc/self/cgroup");
			if (!pthread_create(&th, NULL, thread_report, &r)) {
				pthread_join(th, NULL);
				/* a thread moves with P: its window ends once it has read */
				placed(pl, moves, atomic_load(&pl->pace.moves), mine, r.cgroup);
			}
			t = now_us() - t;
			/* an average, so one slow window does not set the pace */
			atomic_store(&pl->pace.window_us,
				     (7 * atomic_load(&pl->pace.window_us) +
				      (t > fork_us ? t : fork_us)) / 8);
		}
		_exit(0);
	}
	close(fds[1]);
	close(go[0]);
	ASSERT_EQ(0, move_pid(CG_A, p));
	mig_p = start_migrator(p, &pl->pace);
	sleeper = start_sleeper();
	mig_s = start_migrator(sleeper, NULL);
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);

	while (read(fds[0], &c, 1) == 1) {
		n++;
		if (c == 'A' || c == 'B')
			in_ab++;
		else
			other++;
	}
	close(fds[0]);
	waitpid(p, NULL, 0);
	stop(mig_p);
	stop(mig_s);
	stop(sleeper);

	EXPECT_EQ(2 * PLACEMENT_CHILDREN, n);
	EXPECT_EQ(n, in_ab);
	EXPECT_EQ(0, other);
	/* the exact check ran in both cgroups, and found every child in P's cgroup */
	EXPECT_LT(0, pl->exact - pl->exact_in_b);
	EXPECT_LT(0, pl->exact_in_b);
	EXPECT_EQ(0, pl->elsewhere);
	impl_was_used(_metadata, variant->impl);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	TH_LOG("%s: %d children in A or B in %.1f s, %d of them (%d in B) started while the parent stayed put (windows %lu us on average at the end, pauses up to %lu ms); %s",
	       variant->impl, in_ab, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       pl->exact, pl->exact_in_b, atomic_load(&pl->pace.window_us),
	       atomic_load(&pl->pace.pause_ms), stats_line());
	munmap(pl, sizeof(*pl));
}

/*
 * A task forking in a loop inside C is killed with cgroup.kill while it
 * forks; the cgroup must then empty: the kill ends the forking task however
 * its reads race with the kill's kill_seq bump. Its children exit at once, so
 * this does not show that each of them was killed (fork_after_kill_survives
 * and kill_window test the read's kill_seq snapshot).
 */
TEST_F_TIMEOUT(clone_read, kill_empties_a_forking_cgroup, 900)
{
	int iters = env_int("FORKSCALE_KILL_ITERS", variant->kill_iters), i, stuck = 0;
	int cgfd = open_cgroup(CG_C);
	struct timespec t0, t1;

	ASSERT_LE(0, cgfd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < iters && !stuck; i++) {
		int ready[2];
		pid_t f;
		char c;

		ASSERT_EQ(0, pipe(ready));
		f = clone_into(cgfd);
		ASSERT_LE(0, f);
		if (f == 0) {
			close(ready[0]);
			c = 1;
			if (write(ready[1], &c, 1) != 1)
				_exit(1);
			fork_forever();
		}
		close(ready[1]);
		ASSERT_EQ(1, read(ready[0], &c, 1));
		close(ready[0]);
		ASSERT_EQ(0, write_str(CGROOT "/" CG_C "/cgroup.kill", "1"));
		if (wait_unpopulated(CG_C, 10000))
			stuck = 1;
		reap_all();
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(cgfd);
	EXPECT_EQ(0, stuck);
	EXPECT_EQ(iters, i);
	impl_was_used(_metadata, variant->impl);
	TH_LOG("%s: %d kills in %.1f s, each emptied the cgroup; %s", variant->impl, i,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, stats_line());
}

/*
 * A kill reaches what is in the cgroup when it is written and the forks it
 * overlaps, nothing later: a task started in C after a kill of C forks a child
 * that must live. The read's kill_seq snapshot decides this; a read that took
 * none would have cgroup_post_fork() kill the child.
 */
TEST_F(clone_read, fork_after_kill_survives)
{
	int cgfd = open_cgroup(CG_C), status;
	pid_t f;

	ASSERT_LE(0, cgfd);
	ASSERT_EQ(0, write_str(CGROOT "/" CG_C "/cgroup.kill", "1"));
	ASSERT_EQ(0, wait_unpopulated(CG_C, 10000));
	f = clone_into(cgfd);
	ASSERT_LE(0, f);
	if (f == 0) {
		pid_t c = fork();

		if (c == 0)
			_exit(0);
		if (c < 0 || waitpid(c, &status, 0) != c)
			_exit(2);
		/* 3: the child was killed */
		_exit(WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 3);
	}
	close(cgfd);
	ASSERT_EQ(f, waitpid(f, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	impl_was_used(_metadata, variant->impl);
}

/* clone3(CLONE_INTO_CGROUP) from a parent that migrates between A and B. */
TEST_F_TIMEOUT(clone_read, clone_into_cgroup_lands_there_while_parent_moves, 300)
{
	int fds[2], i, in_c = 0, n = 0;
	pid_t p, mig_p;
	char c;

	ASSERT_EQ(0, pipe(fds));
	p = fork();
	ASSERT_LE(0, p);
	if (p == 0) {
		int cgfd = open_cgroup(CG_C);

		close(fds[0]);
		for (i = 0; i < CHILDREN && cgfd >= 0; i++) {
			pid_t k = clone_into(cgfd);

			if (k == 0) {
				c = cgroup_letter("/proc/self/cgroup");
				_exit(write(fds[1], &c, 1) == 1 ? 0 : 1);
			}
			if (k > 0)
				waitpid(k, NULL, 0);
		}
		_exit(0);
	}
	close(fds[1]);
	ASSERT_EQ(0, move_pid(CG_A, p));
	mig_p = start_migrator(p, NULL);
	while (read(fds[0], &c, 1) == 1) {
		n++;
		in_c += c == 'C';
	}
	close(fds[0]);
	waitpid(p, NULL, 0);
	stop(mig_p);
	EXPECT_EQ(CHILDREN, n);
	EXPECT_EQ(n, in_c);
	TH_LOG("%s: %d of %d clone3 children in C", variant->impl, in_c, n);
}

/* Runs last for each variant: what the races left behind. */
TEST_F(clone_read, css_sets_back_to_baseline)
{
	int go[2], i;
	pid_t p;
	char c;

	ASSERT_EQ(0, pipe(go));
	p = fork();
	ASSERT_LE(0, p);
	if (p == 0) {
		/*
		 * A css_set for B exists only while someone uses it. The forks
		 * wait for the move, so they all read B's css_set.
		 */
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (i = 0; i < 100; i++)
			if (!fork())
				_exit(0);
		_exit(0);
	}
	close(go[0]);
	ASSERT_EQ(0, move_pid(CG_B, p));
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	/*
	 * Reap p and every orphan it left (we are their subreaper): a zombie
	 * still pins its css_set.
	 */
	while (waitpid(-1, NULL, 0) > 0)
		;
	EXPECT_EQ(0, wait_css_sets(self->css_sets, 5000));
}

TEST_HARNESS_MAIN
