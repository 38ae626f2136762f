// SPDX-License-Identifier: GPL-2.0
/*
 * The central claim, counted by the kernel rather than by the module: each
 * takeover's lock acquisitions per thread create+exit, from /proc/lock_stat
 * (CONFIG_LOCK_STAT, the debug kernel), around a paced workload of one thread
 * creating and joining THREADS threads, one at a time.
 *
 * The module's own counters say how often it took a lock; lock_stat counts
 * every acquisition of the lock's class, whoever takes it. A module that
 * counted a read as lockless but took css_set_lock, or batched in its books
 * only, passes its own counters and fails here. What else the guest does
 * meanwhile (a kworker starting, say) takes these locks rarely: every bound
 * allows SLACK acquisitions for it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>

#include "kselftest_harness.h"
#include "forkscale_util.h"

#define LOCK_STAT "/proc/lock_stat"
#define DEAD_STATS "/sys/kernel/debug/cgroup_dead/stats"
#define BLOCK_STATS "/sys/kernel/debug/pid_block/stats"
#define THREADS 320
#define SLACK (2 + THREADS / 100)

/*
 * A class's acquisitions: its row is "name:" then con-bounces, contentions,
 * four wait times, acq-bounces and acquisitions. -1 if it has no row.
 */
static long long lock_acquisitions(const char *class)
{
	char line[512], name[64], want[72];
	unsigned long long cb, con, ab, acq;
	double w[4];
	long long ret = -1;
	FILE *f = fopen(LOCK_STAT, "r");

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%s:", class);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %63s %llu %llu %lf %lf %lf %lf %llu %llu", name, &cb, &con,
			   &w[0], &w[1], &w[2], &w[3], &ab, &acq) == 9 &&
		    !strcmp(name, want)) {
			ret = acq;
			break;
		}
	fclose(f);
	return ret;
}

/* This process's threads, from /proc/self/task. */
static int own_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void *nothing(void *arg)
{
	return arg;
}

/*
 * THREADS thread creates and joins; then waits until each is released (a
 * join returns at the exit's futex wake, before release_task()). 0 or -1.
 */
static int threads_lifecycles(void)
{
	pthread_t t;
	int i;

	for (i = 0; i < THREADS; i++)
		if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
			return -1;
	for (i = 0; i < 1000 && own_threads() != 1; i++)
		usleep(1000);
	/* a thread leaves the list before release_task() frees its pid */
	usleep(50000);
	return own_threads() == 1 ? 0 : -1;
}

struct counted {
	long long css_set_lock, pidmap_lock;
};

/* The acquisitions of both locks over threads_lifecycles(). */
static int count_lifecycles(struct counted *c)
{
	if (write_str(LOCK_STAT, "0") || threads_lifecycles())
		return -1;
	c->css_set_lock = lock_acquisitions("css_set_lock");
	c->pidmap_lock = lock_acquisitions("pidmap_lock");
	fprintf(stderr, "# %d thread lifecycles: css_set_lock %lld, pidmap_lock %lld\n",
		THREADS, c->css_set_lock, c->pidmap_lock);
	return c->css_set_lock < 0 || c->pidmap_lock < 0 ? -1 : 0;
}

FIXTURE(lock_counts) {
	struct counted c;
	char read[32];
};

FIXTURE_SETUP(lock_counts)
{
	unload_module();
	ASSERT_EQ(0, access(LOCK_STAT, R_OK)) TH_LOG("no %s: not a LOCK_STAT kernel", LOCK_STAT);
	/* the built-in read must be stock 7.3's, locked, whatever the boot chose */
	ASSERT_EQ(0, read_file(SYSCTL, self->read, sizeof(self->read)));
	self->read[strcspn(self->read, "\n")] = '\0';
	ASSERT_EQ(0, write_str(SYSCTL, "locked"));
}

FIXTURE_TEARDOWN(lock_counts)
{
	unload_module();
	write_str(SYSCTL, self->read);
}

/*
 * Stock's path, the baseline every other case assumes: 3 css_set_lock per
 * thread create+exit (the clone read, the link, the unlink) and 2 pidmap_lock
 * (the number's allocation and its release).
 */
TEST_F_TIMEOUT(lock_counts, stock_path, 300)
{
	ASSERT_EQ(0, count_lifecycles(&self->c));
	EXPECT_GE(self->c.css_set_lock, 3 * THREADS);
	EXPECT_LE(self->c.css_set_lock, 3 * THREADS + SLACK);
	EXPECT_GE(self->c.pidmap_lock, 2 * THREADS);
	EXPECT_LE(self->c.pidmap_lock, 2 * THREADS + SLACK);
}

/* The module's clone read takes no css_set_lock: 2 per create+exit. */
TEST_F_TIMEOUT(lock_counts, clone_read, 300)
{
	ASSERT_EQ(0, load_module_args("pid_batch=0"));
	ASSERT_EQ(0, write_str(STATS, "0"));
	ASSERT_EQ(0, count_lifecycles(&self->c));
	TH_LOG("clone read: %s", stats_line());
	EXPECT_GE(self->c.css_set_lock, 2 * THREADS);
	EXPECT_LE(self->c.css_set_lock, 2 * THREADS + SLACK);
	EXPECT_LE(THREADS, stats_value("lockless"));
	EXPECT_EQ(0, stats_value("locked"));
}

/*
 * pid_batch: the free side's pidmap_lock acquisitions (all but the
 * allocations' one per fork) are at most the module's batches, and those at
 * most one per full batch, one per timer flush and a partial one per CPU.
 */
TEST_F_TIMEOUT(lock_counts, pid_batch, 300)
{
	long long free_side, batches, timer;

	ASSERT_EQ(0, load_module_args("pid_batch=32 pid_max_delay_ms=1000"));
	ASSERT_EQ(0, write_str(PID_STATS, "0"));
	ASSERT_EQ(0, count_lifecycles(&self->c));
	batches = stat_value(PID_STATS, "batches");
	timer = stat_value(PID_STATS, "flush_timer");
	free_side = self->c.pidmap_lock - THREADS;
	TH_LOG("pid release: free side %lld, batches %lld, timer flushes %lld", free_side,
	       batches, timer);
	ASSERT_LE(0, batches);
	EXPECT_LE(free_side, batches + SLACK);
	EXPECT_LE(free_side, THREADS / 32 + timer + sysconf(_SC_NPROCESSORS_ONLN) + SLACK);
	/* the allocations still take it once each */
	EXPECT_LE(THREADS, self->c.pidmap_lock);
}

/*
 * dead_batch: the exit side's css_set_lock acquisitions (all but the link's
 * one per fork; the module's clone read takes none) are at most its batches,
 * and those at most one per full batch, one per timer flush and a partial one
 * per CPU.
 */
TEST_F_TIMEOUT(lock_counts, dead_batch, 300)
{
	long long exit_side, batches, timer;

	ASSERT_EQ(0, load_module_args("pid_batch=0 dead_batch=32 dead_max_delay_ms=1000"));
	ASSERT_EQ(0, write_str(DEAD_STATS, "0"));
	ASSERT_EQ(0, count_lifecycles(&self->c));
	batches = stat_value(DEAD_STATS, "batches");
	timer = stat_value(DEAD_STATS, "flush_timer");
	exit_side = self->c.css_set_lock - THREADS;
	TH_LOG("exit unlink: exit side %lld, batches %lld, timer flushes %lld", exit_side,
	       batches, timer);
	ASSERT_LE(0, batches);
	EXPECT_LE(exit_side, batches + SLACK);
	EXPECT_LE(exit_side, THREADS / 32 + timer + sysconf(_SC_NPROCESSORS_ONLN) + SLACK);
	EXPECT_LE(THREADS, self->c.css_set_lock);
}

/*
 * pid_block: the fork side's pidmap_lock acquisitions (all but the release's
 * one per exit, pid_batch=0) are at most two per block reserved: its
 * reservation, and the put of a spent block whose pids are all freed already
 * (pid_block_release(), which unlinks it from the live blocks under the lock;
 * where a pid outlives the block, its free drops that reference under the
 * lock it holds anyway). The blocks are at most one per 16 forks and a
 * partial one per CPU. The block counters are never reset: the difference
 * over the run.
 */
TEST_F_TIMEOUT(lock_counts, pid_block, 300)
{
	long long fork_side, blocks;

	ASSERT_EQ(0, load_module_args("pid_batch=0 pid_block=16"));
	blocks = stat_value(BLOCK_STATS, "blocks");
	ASSERT_LE(0, blocks);
	ASSERT_EQ(0, count_lifecycles(&self->c));
	blocks = stat_value(BLOCK_STATS, "blocks") - blocks;
	fork_side = self->c.pidmap_lock - THREADS;
	TH_LOG("pid blocks: fork side %lld, blocks %lld", fork_side, blocks);
	EXPECT_LE(fork_side, 2 * blocks + SLACK);
	EXPECT_LE(blocks, THREADS / 16 + sysconf(_SC_NPROCESSORS_ONLN) + SLACK);
	EXPECT_LE(THREADS, self->c.pidmap_lock);
}

TEST_HARNESS_MAIN
