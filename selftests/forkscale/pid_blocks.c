// SPDX-License-Identifier: GPL-2.0
/*
 * Pid numbers from per-CPU blocks (the forkscale module's pid_block): a fork
 * in the initial pid namespace takes its number from a block its CPU reserved
 * without pidmap_lock. Every case of the blocks fixture runs twice with the
 * same expectations: on the kernel's own allocation ("builtin", the code of
 * stock 7.3) and with the module's blocks of 16 ("blocks", its pid batching
 * off so that a reaped pid's number is free at once, as on stock; the lookup
 * audit and the kernel's suites run blocks beside batching). Each asks for a
 * number stock gives: the next after ns_last_pid, clone3(set_tid) of a number
 * a block holds, the count of forks that fit under pid_max, the order of
 * numbers at the wrap, after a write of pid_max and after unloading, the
 * answers of lookups by number.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <linux/sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "forkscale_util.h"

#define BLOCK_STATS "/sys/kernel/debug/pid_block/stats"
#define NS_LAST_PID "/proc/sys/kernel/ns_last_pid"
#define PID_MAX "/proc/sys/kernel/pid_max"
/* free numbers a case needs after the cursor it sets */
#define WINDOW 64
/* the kernel's RESERVED_PIDS: after a wrap, numbers start there */
#define RESERVED 300
/* pid_max for the exhaustion case: room for about 100 forks */
#define LOW_MAX 400
#define BLOCK_KIDS 512

static long read_long(const char *path)
{
	char buf[32];

	if (read_file(path, buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

static int write_long(const char *path, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	return write_str(path, buf);
}

static int pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void unpin(void)
{
	cpu_set_t set;
	int cpu;

	CPU_ZERO(&set);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* whether a task, a thread included, has the number @nr: /proc/<tid> resolves */
static int nr_used(int nr)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", nr);
	return !stat(path, &st);
}

/* how many numbers in [lo, hi) a task has */
static int used_in(int lo, int hi)
{
	int nr, n = 0;

	for (nr = lo; nr < hi; nr++)
		n += nr_used(nr);
	return n;
}

/*
 * Writes ns_last_pid so that the next WINDOW numbers are free, well past
 * every number handed out (which ns_last_pid reads) and, on a guest of a few
 * CPUs, every number their blocks reserved: the first of them, or -1. (The
 * write gives any waiting number back, so a block is never in the way.)
 */
static int free_run(void)
{
	long max = read_long(PID_MAX), start = read_long(NS_LAST_PID) + 1000;

	if (max < 0 || start < 1000)
		return -1;
	for (;;) {
		if (start + WINDOW >= max)
			start = 1000;
		if (!used_in(start, start + WINDOW))
			break;
		start += WINDOW;
	}
	return write_long(NS_LAST_PID, start - 1) ? -1 : (int)start;
}

/* a child that exits at once, reaped: its pid, or -1 */
static pid_t spawn_exit(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid > 0 && waitpid(pid, NULL, 0) != pid)
		return -1;
	return pid;
}

/* a child that waits to be killed: its pid, or -1 with errno */
static pid_t spawn_paused(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void kill_reap(pid_t pid)
{
	if (pid > 0 && !kill(pid, SIGKILL))
		waitpid(pid, NULL, 0);
}

/* clone3(set_tid = @tid) of a child that waits to be killed: its pid */
static pid_t clone3_set_tid(pid_t tid)
{
	struct clone_args args = {
		.exit_signal = SIGCHLD,
		.set_tid = (uint64_t)(uintptr_t)&tid,
		.set_tid_size = 1,
	};
	pid_t pid = syscall(__NR_clone3, &args, sizeof(args));

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

/* whether a readdir of /proc lists @pid: find_ge_pid() */
static int proc_lists(pid_t pid)
{
	struct dirent *e;
	int found = 0;
	DIR *dir = opendir("/proc");

	if (!dir)
		return -1;
	while ((e = readdir(dir)))
		if (atoi(e->d_name) == pid)
			found = 1;
	closedir(dir);
	return found;
}

FIXTURE(blocks) {
	long pid_max;
	int cpus;
	pid_t kids[BLOCK_KIDS];
	int nkids;
};

FIXTURE_VARIANT(blocks) {
	const char *args;	/* the module's parameters, NULL for no module */
};

FIXTURE_VARIANT_ADD(blocks, builtin) { .args = NULL };
/* pids freed at once, as stock frees them: a number freed is free */
FIXTURE_VARIANT_ADD(blocks, blocks) { .args = "pid_block=16 pid_batch=0" };

FIXTURE_SETUP(blocks)
{
	const char *want = variant->args ? "impl: forkscale\n" : "impl: builtin\n";
	char impl[64];

	unload_module();
	if (variant->args)
		ASSERT_EQ(0, load_module_args(variant->args));
	ASSERT_EQ(0, read_file(BLOCK_STATS, impl, sizeof(impl)));
	ASSERT_EQ(0, strncmp(impl, want, strlen(want)));
	self->pid_max = read_long(PID_MAX);
	ASSERT_LT(LOW_MAX, self->pid_max);
	self->cpus = sysconf(_SC_NPROCESSORS_ONLN);
	ASSERT_LT(0, self->cpus);
	self->nkids = 0;
	ASSERT_EQ(0, pin_cpu(0));
}

FIXTURE_TEARDOWN(blocks)
{
	while (self->nkids)
		kill_reap(self->kids[--self->nkids]);
	write_long(PID_MAX, self->pid_max);
	unpin();
	unload_module();
	reap_all();
}

/*
 * A restore writes ns_last_pid and expects the next fork to get the next
 * number, on every CPU, even one whose block holds older numbers.
 */
TEST_F(blocks, ns_last_pid_gives_next)
{
	int round, first;

	for (round = 0; round < 2 * self->cpus; round++) {
		ASSERT_EQ(0, pin_cpu(round % self->cpus));
		/* with blocks, this CPU now holds one */
		ASSERT_LT(0, spawn_exit());
		first = free_run();
		ASSERT_LT(0, first);
		EXPECT_EQ(first, spawn_exit()) {
			TH_LOG("round %d, cpu %d", round, round % self->cpus);
		}
	}
}

/*
 * clone3(set_tid), from another CPU, of a number waiting unclaimed in a block
 * gets it, as it gets any free number on stock; while it lives, the block's
 * next fork skips it, as stock's cursor does. A number a fork claimed is
 * EEXIST, as on stock.
 */
TEST_F(blocks, set_tid_of_a_waiting_number)
{
	int first = free_run();
	pid_t a, b;

	ASSERT_LT(0, first);
	a = spawn_paused();
	ASSERT_EQ(first, a);
	self->kids[self->nkids++] = a;
	/* from the other CPU: the number waits in CPU 0's block */
	ASSERT_EQ(0, pin_cpu(self->cpus > 1 ? 1 : 0));
	errno = 0;
	EXPECT_EQ(-1, clone3_set_tid(a));
	EXPECT_EQ(EEXIST, errno);
	b = clone3_set_tid(first + 1);
	ASSERT_EQ(first + 1, b);
	self->kids[self->nkids++] = b;
	ASSERT_EQ(0, pin_cpu(0));
	EXPECT_EQ(first + 2, spawn_exit());
}

/* lookups by number find a pid from a block, and not a number waiting in one */
TEST_F(blocks, lookups_by_number)
{
	int first = free_run(), fd;
	char path[64];
	struct stat st;
	pid_t a;

	ASSERT_LT(0, first);
	a = spawn_paused();
	ASSERT_EQ(first, a);
	self->kids[self->nkids++] = a;

	EXPECT_EQ(0, kill(a, 0));
	EXPECT_EQ(getpgid(0), getpgid(a));
	fd = syscall(__NR_pidfd_open, a, 0);
	EXPECT_LE(0, fd);
	close(fd);
	snprintf(path, sizeof(path), "/proc/%d/stat", a);
	EXPECT_EQ(0, stat(path, &st));
	EXPECT_EQ(1, proc_lists(a));

	/* with blocks, first + 1 is reserved but no pid: stock has no task there either */
	errno = 0;
	EXPECT_EQ(-1, kill(first + 1, 0));
	EXPECT_EQ(ESRCH, errno);
	snprintf(path, sizeof(path), "/proc/%d", first + 1);
	EXPECT_EQ(-1, stat(path, &st));
	EXPECT_EQ(0, proc_lists(first + 1));

	kill_reap(self->kids[--self->nkids]);
	errno = 0;
	EXPECT_EQ(-1, kill(a, 0));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(0, proc_lists(a));
}

/*
 * A run of forks and reaps on alternating CPUs gets distinct numbers, none
 * before the cursor: a block never hands out a number twice, nor one the
 * cursor had passed. (no_reuse_before_the_wrap asks the same at the wrap.)
 */
TEST_F(blocks, distinct_numbers_after_the_cursor)
{
	int first = free_run(), i, j;
	pid_t got[WINDOW / 2];

	ASSERT_LT(0, first);
	for (i = 0; i < WINDOW / 2; i++) {
		ASSERT_EQ(0, pin_cpu(i % self->cpus));
		got[i] = spawn_exit();
		ASSERT_LE(first, got[i]);
		for (j = 0; j < i; j++)
			ASSERT_NE(got[j], got[i]);
	}
}

/*
 * Under a low pid_max, exactly as many forks fit as there are free numbers,
 * even while another CPU's block holds some: a fork that finds no free number
 * takes one of those before it fails with EAGAIN, as stock fails. The other
 * CPU reserves its block once the cursor has wrapped, so that its numbers
 * still wait when the free ones run out.
 */
TEST_F(blocks, exhaustion_where_stock_fails)
{
	int expected, retry, wrapped;

	for (retry = 0; ; retry++) {
		pid_t pid;

		ASSERT_EQ(0, write_long(PID_MAX, LOW_MAX));
		/* past RESERVED, so that the allocator wraps to RESERVED */
		ASSERT_EQ(0, write_long(NS_LAST_PID, RESERVED + 50));
		expected = LOW_MAX - RESERVED - used_in(RESERVED, LOW_MAX);
		ASSERT_EQ(0, pin_cpu(0));
		for (wrapped = 0; !wrapped && self->nkids < BLOCK_KIDS; ) {
			pid = spawn_paused();
			ASSERT_LT(0, pid);
			self->kids[self->nkids++] = pid;
			wrapped = pid <= RESERVED + 50;
		}
		/* with blocks, the other CPU then holds numbers after the wrap */
		ASSERT_EQ(0, pin_cpu(self->cpus > 1 ? 1 : 0));
		pid = spawn_paused();
		ASSERT_LT(0, pid);
		self->kids[self->nkids++] = pid;
		ASSERT_EQ(0, pin_cpu(0));
		while (self->nkids < BLOCK_KIDS && (pid = spawn_paused()) > 0)
			self->kids[self->nkids++] = pid;
		EXPECT_EQ(EAGAIN, errno);
		/* an unrelated task of the guest may take a number meanwhile */
		if (self->nkids == expected)
			break;
		TH_LOG("try %d: %d forks, %d free numbers", retry, self->nkids,
		       expected);
		if (retry == 1)
			break;
		while (self->nkids)
			kill_reap(self->kids[--self->nkids]);
	}
	EXPECT_EQ(expected, self->nkids);
}

/*
 * Stock's cursor wraps to reuse freed numbers only once it has handed out
 * every free number up to pid_max. With blocks, the numbers after the other
 * CPU's fork wait in its block when this CPU's forks reach pid_max: they must
 * still come before any number below them, and no number freed meanwhile may
 * come twice, or a freed number is reused sooner than on stock. Forks, each
 * reaped at once, until one wraps; then asks that no fork got a number twice
 * and that every number of the window was handed out or is in use.
 */
TEST_F(blocks, no_reuse_before_the_wrap)
{
	const int start = LOW_MAX - 2 * 16;
	int skipped, retry, n, nr, i;
	pid_t got[2 * (LOW_MAX - RESERVED)];

	if (self->cpus < 2)
		SKIP(return, "one CPU: no other CPU's block");
	for (retry = 0; ; retry++) {
		ASSERT_EQ(0, write_long(PID_MAX, LOW_MAX));
		ASSERT_EQ(0, write_long(NS_LAST_PID, start - 1));
		/* with blocks, the other CPU then holds the numbers after its fork's */
		ASSERT_EQ(0, pin_cpu(1));
		got[0] = spawn_exit();
		ASSERT_LE(start, got[0]);
		if (variant->args)
			ASSERT_LT(0, stat_value(BLOCK_STATS, "waiting"));
		ASSERT_EQ(0, pin_cpu(0));
		for (n = 1; n < 2 * (LOW_MAX - RESERVED); n++) {
			got[n] = spawn_exit();
			ASSERT_LT(0, got[n]);
			if (got[n] < start)
				break;
			for (i = 0; i < n; i++)
				ASSERT_NE(got[i], got[n]) {
					TH_LOG("fork %d got %d again before the wrap", n, got[n]);
				}
		}
		/* the cursor wrapped: a fork got a number below the window */
		ASSERT_LT(n, 2 * (LOW_MAX - RESERVED));
		ASSERT_GT(start, got[n]);
		skipped = 0;
		for (nr = start; nr < LOW_MAX; nr++) {
			int handed = nr_used(nr);

			for (i = 0; i < n && !handed; i++)
				handed = got[i] == nr;
			if (handed)
				continue;
			if (!skipped++)
				TH_LOG("try %d: %d was free, and the cursor wrapped to %d",
				       retry, nr, got[n]);
		}
		/* an unrelated task of the guest may take a number meanwhile */
		if (!skipped || retry == 1)
			break;
	}
	EXPECT_EQ(0, skipped);
}

/*
 * A block reserved eight numbers before pid_max holds those eight, and no
 * number after the wrap: the other CPU's next fork gets the next of them, as
 * on stock, not a number from after the wrap.
 */
TEST_F(blocks, no_block_across_the_wrap)
{
	const int start = LOW_MAX - 8;
	pid_t first, next, want;
	int retry;

	if (self->cpus < 2)
		SKIP(return, "one CPU: no other CPU's block");
	for (retry = 0; ; retry++) {
		ASSERT_EQ(0, write_long(PID_MAX, LOW_MAX));
		ASSERT_EQ(0, write_long(NS_LAST_PID, start - 1));
		ASSERT_EQ(0, pin_cpu(0));
		first = spawn_exit();
		ASSERT_LE(start, first);
		if (variant->args)
			ASSERT_LT(0, stat_value(BLOCK_STATS, "waiting"));
		/* stock's next: the first number after @first that no task has */
		for (want = first + 1; want < LOW_MAX && nr_used(want); want++)
			;
		ASSERT_GT(LOW_MAX, want);
		ASSERT_EQ(0, pin_cpu(1));
		next = spawn_exit();
		ASSERT_LT(0, next);
		/* an unrelated task of the guest may take a number meanwhile */
		if (next == want || retry == 1)
			break;
	}
	EXPECT_EQ(want, next) {
		TH_LOG("after %d, the other CPU got %d", first, next);
	}
}

/*
 * In a nested namespace with its lowest pid_max, as many forks fit as on
 * stock (its init and 299 children), and its teardown completes: its init
 * exits and the kernel kills the rest.
 */
TEST_F(blocks, nested_exhaustion_and_teardown)
{
	int fds[2], n = -1, status;
	pid_t outer;

	ASSERT_EQ(0, pipe(fds));
	outer = fork();
	ASSERT_LE(0, outer);
	if (outer == 0) {
		pid_t init;

		if (unshare(CLONE_NEWPID))
			_exit(1);
		init = fork();
		if (init == 0) {
			int count = 0;

			/* this namespace's own limit */
			if (write_long(PID_MAX, RESERVED + 1))
				_exit(2);
			while (spawn_paused() > 0)
				count++;
			if (errno != EAGAIN)
				count = -errno;
			if (write(fds[1], &count, sizeof(count)) != sizeof(count))
				_exit(3);
			/* the namespace's teardown kills the children */
			_exit(0);
		}
		_exit(init > 0 && waitpid(init, &status, 0) == init &&
		      WIFEXITED(status) ? WEXITSTATUS(status) : 4);
	}
	close(fds[1]);
	EXPECT_EQ((ssize_t)sizeof(n), read(fds[0], &n, sizeof(n)));
	close(fds[0]);
	/* pid 1 and 2 to 300 */
	EXPECT_EQ(RESERVED - 1, n);
	alarm(60);
	ASSERT_EQ(outer, waitpid(outer, &status, 0));
	alarm(0);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * Unloading gives every block up: none waits in a block after it, and the
 * next fork gets the number after the last, as on stock. The numbers a block
 * held when it was given up come before the cursor's; given back behind the
 * cursor, they would wait for the next wrap.
 */
TEST_F(blocks, unload_gives_numbers_back)
{
	int first = free_run();

	ASSERT_LT(0, first);
	EXPECT_EQ(first, spawn_exit());
	if (variant->args) {
		/* the CPU's block holds the numbers after @first */
		EXPECT_LT(0, stat_value(BLOCK_STATS, "waiting"));
		EXPECT_EQ(0, unload_module());
	}
	EXPECT_EQ(0, stat_value(BLOCK_STATS, "waiting"));
	EXPECT_EQ(first + 1, spawn_exit());
}

/*
 * A write of pid_max gives back only the numbers it puts out of reach: the
 * next fork on the same CPU gets the number after the last, as on stock,
 * whether the write keeps the limit or lowers it just past that number; once
 * those are handed out, the next fork wraps, as stock's cursor does, to the
 * lowest free number. (The write makes the module give its blocks up, and the
 * next allocation on any CPU takes the parked numbers: a stray fork meanwhile,
 * a kernel thread's, would take one, as it would take the next on stock.)
 */
TEST_F(blocks, pid_max_write_keeps_the_next_number)
{
	int first = free_run(), want;

	ASSERT_LT(0, first);
	EXPECT_EQ(first, spawn_exit());
	ASSERT_EQ(0, write_long(PID_MAX, self->pid_max));
	EXPECT_EQ(first + 1, spawn_exit());
	/* room for two more */
	ASSERT_EQ(0, write_long(PID_MAX, first + 4));
	EXPECT_EQ(first + 2, spawn_exit());
	EXPECT_EQ(first + 3, spawn_exit());
	for (want = RESERVED; want < first && nr_used(want); want++)
		;
	ASSERT_GT(first, want);
	EXPECT_EQ(want, spawn_exit());
}

/* the last field of /proc/loadavg: the last pid created, or -1 */
static long loadavg_last_pid(void)
{
	char buf[128], *last;

	if (read_file("/proc/loadavg", buf, sizeof(buf)))
		return -1;
	last = strrchr(buf, ' ');
	return last ? atol(last + 1) : -1;
}

/*
 * Whether reads of the last pid give @nr: the fifth field of /proc/loadavg
 * and ns_last_pid, as proc(5) documents them, or else a number that a task
 * started since holds (a kernel thread may start meanwhile, as on stock).
 */
static int last_pid_is(struct __test_metadata *_metadata, const char *when, int nr)
{
	long loadavg = loadavg_last_pid(), ns_last = read_long(NS_LAST_PID);
	int ok = (loadavg == nr || (loadavg > 0 && nr_used(loadavg))) &&
		 (ns_last == nr || (ns_last > 0 && nr_used(ns_last)));

	if (!ok)
		TH_LOG("%s: loadavg gives %ld, ns_last_pid %ld, where the last pid is %d",
		       when, loadavg, ns_last, nr);
	return ok;
}

/*
 * The last pid read is the last created, on every CPU: with blocks, a fork
 * takes its number from its CPU's block, whose numbers lie below the newest
 * block's end, where the cursor is. A write of ns_last_pid is read back until
 * the next fork.
 */
TEST_F(blocks, last_pid_is_the_last_fork)
{
	char when[64];
	int round, first;
	pid_t pid;

	for (round = 0; round < 4 * self->cpus; round++) {
		ASSERT_EQ(0, pin_cpu(round % self->cpus));
		pid = spawn_exit();
		ASSERT_LT(0, pid);
		snprintf(when, sizeof(when), "round %d, cpu %d", round, round % self->cpus);
		EXPECT_TRUE(last_pid_is(_metadata, when, pid));
	}
	first = free_run();
	ASSERT_LT(0, first);
	EXPECT_TRUE(last_pid_is(_metadata, "after a write of ns_last_pid", first - 1));
	EXPECT_EQ(first, spawn_exit());
	EXPECT_TRUE(last_pid_is(_metadata, "after the fork that followed it", first));
}

static void *thread_exits(void *arg)
{
	return NULL;
}

/* Thread creations take their numbers from blocks: one reservation per 16. */
TEST(thread_storm_reserves_blocks)
{
	long long blocks0, blocks1;
	int i, cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const int n = 320;

	unload_module();
	ASSERT_EQ(0, load_module_args("pid_block=16"));
	blocks0 = stat_value(BLOCK_STATS, "blocks");
	ASSERT_LE(0, blocks0);
	for (i = 0; i < n; i++) {
		pthread_t t;

		ASSERT_EQ(0, pthread_create(&t, NULL, thread_exits, NULL));
		ASSERT_EQ(0, pthread_join(t, NULL));
	}
	blocks1 = stat_value(BLOCK_STATS, "blocks");
	TH_LOG("%d threads: %lld blocks reserved", n, blocks1 - blocks0);
	/* each CPU's last block may be partly used, and a move may cost one */
	EXPECT_LE(n / 16, blocks1 - blocks0);
	EXPECT_GE(n / 16 + 4 * cpus, blocks1 - blocks0);
	EXPECT_EQ(0, unload_module());
}

/* A bad block size, or any bad parameter beside a good one, registers nothing. */
TEST(bad_parameters_refused)
{
	const char *bad[] = { "pid_block=17", "pid_block=abc", "pid_block=-1",
			      "pid_block=16 dead_batch=65" };
	unsigned int i;
	char impl[64];

	unload_module();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, load_module_args(bad[i])) {
			TH_LOG("%s", bad[i]);
		}
		ASSERT_EQ(0, read_file(BLOCK_STATS, impl, sizeof(impl)));
		EXPECT_EQ(0, strncmp(impl, "impl: builtin\n", 14)) {
			TH_LOG("%s left %s", bad[i], impl);
		}
	}
}

TEST_HARNESS_MAIN
