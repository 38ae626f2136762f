// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred, batched pid freeing (the forkscale module's pid_batch): a pid
 * waiting in a batch must never make fork fail, must be free again within
 * the maximum delay, and must not hold up pid namespace teardown; and the
 * batches must actually form.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <dirent.h>
#include <sys/klog.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "forkscale_util.h"


static long long pid_stat(const char *key)
{
	return stat_value(PID_STATS, key);
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int pid_stat_impl_is_builtin(void)
{
	char buf[1024];

	if (read_file(PID_STATS, buf, sizeof(buf)))
		return -errno;
	return strncmp(buf, "impl: builtin\n", 14) ? -ENOENT : 0;
}

/*
 * The tasks (threads, kernel threads included) whose pid lies where alloc_pid()
 * allocates once the cursor has wrapped, from RESERVED_PIDS (300) to pid_max.
 * At exhaustion every number there is held: by a task, by a group or session
 * id whose leader is gone, or by a batch. So this count must be the same with
 * and without the module. Counting children instead would change with a
 * kernel thread started meanwhile (a new kworker), and counting all tasks with
 * one outside the range that exits (an idle kworker culled).
 */
static int tasks_in_pid_range(void)
{
	const int lo = 300, hi = atoi(TEST_PID_MAX);
	struct dirent *p, *t;
	DIR *procs, *tasks;
	char path[64];
	int n = 0;

	procs = opendir("/proc");
	if (!procs)
		return -1;
	while ((p = readdir(procs))) {
		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", atoi(p->d_name));
		tasks = opendir(path);
		if (!tasks)
			continue; /* gone meanwhile */
		while ((t = readdir(tasks))) {
			int tid = atoi(t->d_name);

			n += tid >= lo && tid < hi;
		}
		closedir(tasks);
	}
	closedir(procs);
	return n;
}

/*
 * Fills @comm (64 bytes) with the name of @pid if it is a kernel thread
 * (kthreadd's child): 0, or -1 if it is not one, or gone. A kernel thread's
 * name has no ") ", so "pid (comm) state ppid" parses.
 */
static int kthread_comm(int pid, char *comm)
{
	char path[64], line[256];
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "%*d (%63[^)]) %*c %d", comm, &ppid) != 2)
		ppid = 0;
	fclose(f);
	return ppid == 2 ? 0 : -1;
}

/*
 * Logs the kernel threads whose pid lies in the range tasks_in_pid_range()
 * counts: one that started at the limit took a number that a fork of the
 * test's would have had.
 */
static void log_kthreads_in_pid_range(void)
{
	const int lo = 300, hi = atoi(TEST_PID_MAX);
	struct dirent *p;
	DIR *procs = opendir("/proc");
	char comm[64];
	int pid;

	if (!procs)
		return;
	while ((p = readdir(procs))) {
		pid = atoi(p->d_name);
		if (pid >= lo && pid < hi && !kthread_comm(pid, comm))
			fprintf(stderr, "# kernel thread %d (%s) in the pid range\n", pid, comm);
	}
	closedir(procs);
}

FIXTURE(pid_max) {
	char saved[32];
	pid_t kids[MAX_KIDS];
};

FIXTURE_SETUP(pid_max)
{
	unload_module();
	ASSERT_EQ(0, read_file(PID_MAX, self->saved, sizeof(self->saved)));
	ASSERT_EQ(0, write_str(PID_MAX, TEST_PID_MAX));
}

FIXTURE_TEARDOWN(pid_max)
{
	unload_module();
	write_str(PID_MAX, self->saved);
}

/*
 * With kernel.pid_max lowered, fork until EAGAIN: the same number of tasks
 * fit with and without the module, also after it is unloaded, and cycles of
 * exit and fork at the limit never fail while exited pids sit in a batch.
 */
TEST_F_TIMEOUT(pid_max, exhaustion_is_unchanged, 600)
{
	int before, with, after, err, i, j, failed = 0, first_errno = 0, first_round = -1;
	int tasks_before, tasks_with, tasks_after;

	before = fill_pids(self->kids, &err);
	tasks_before = tasks_in_pid_range();
	EXPECT_EQ(EAGAIN, err);
	ASSERT_LT(0, tasks_before);
	kill_kids(self->kids, 0, before);

	/* a long delay: only a flush on pressure can free a batched pid in time */
	ASSERT_EQ(0, load_module_args("pid_batch=64 pid_max_delay_ms=1000"));
	ASSERT_EQ(0, write_str(PID_STATS, "0"));
	with = fill_pids(self->kids, &err);
	tasks_with = tasks_in_pid_range();
	EXPECT_EQ(EAGAIN, err);
	/* as many pids held by tasks at exhaustion: none lost to a batch */
	EXPECT_EQ(tasks_before, tasks_with);

	for (i = 0; i < 50; i++) {
		/* eight exits, then eight forks, at the limit */
		kill_kids(self->kids, with - 8, with);
		for (j = with - 8; j < with; j++) {
			self->kids[j] = fork();
			if (self->kids[j] == 0) {
				pause();
				_exit(0);
			}
			if (self->kids[j] < 0) {
				/* the first failure's cause, before the slot is lost */
				if (!failed) {
					first_errno = errno;
					first_round = i;
					TH_LOG("round %d: fork %d of 8 failed: %s; %d tasks in the pid range (%d at exhaustion)",
					       i, j - (with - 8) + 1, strerror(errno),
					       tasks_in_pid_range(), tasks_with);
					log_kthreads_in_pid_range();
				}
				failed++;
				self->kids[j] = getpid(); /* skipped by kill_kids() */
			}
		}
	}
	/* a failed fork loses its slot: each later round fails one more */
	EXPECT_EQ(0, failed) TH_LOG("first failure in round %d, errno %d", first_round, first_errno);
	EXPECT_LT(0, pid_stat("flush_pressure"));
	TH_LOG("exhausted with %d tasks in the pid range (%d children) before, %d (%d) with the module; %lld pressure flushes",
	       tasks_before, before, tasks_with, with, pid_stat("flush_pressure"));
	for (j = 0; j < with; j++)
		if (self->kids[j] != getpid())
			kill(self->kids[j], SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;

	ASSERT_EQ(0, unload_module());
	after = fill_pids(self->kids, &err);
	tasks_after = tasks_in_pid_range();
	EXPECT_EQ(EAGAIN, err);
	EXPECT_EQ(tasks_before, tasks_after);
	TH_LOG("after unloading: exhausted with %d tasks in the pid range (%d children)",
	       tasks_after, after);
	kill_kids(self->kids, 0, after);
}

/* One racer of exits_racing_forks_at_the_limit: its own slice of the kids. */
struct racer {
	pthread_barrier_t *start;
	pid_t *kids;
	int n, rounds, eagain, other;
};

static void *race_exits_and_forks(void *arg)
{
	struct racer *r = arg;
	int i;

	pthread_barrier_wait(r->start);
	for (i = 0; i < r->rounds; i++) {
		pid_t *slot = &r->kids[i % r->n];

		kill(*slot, SIGKILL);
		waitpid(*slot, NULL, 0);
		*slot = fork();
		if (*slot == 0) {
			pause();
			_exit(0);
		}
		if (*slot < 0) {
			if (errno == EAGAIN)
				r->eagain++;
			else
				r->other++;
			*slot = getpid(); /* not killed */
			break;
		}
	}
	return NULL;
}

/*
 * At the limit, two threads each reap one of their children
 * and fork a replacement, 500 times each. Every fork follows the reap of
 * a child of the same thread, so stock never fails one; with the freed pids
 * waiting in batches, a fork that finds no pid must flush them and succeed,
 * even while the other CPU's flush or exit is in flight.
 */
TEST_F_TIMEOUT(pid_max, exits_racing_forks_at_the_limit, 600)
{
	pthread_barrier_t start;
	struct racer r[2];
	pthread_t t[2];
	int n, err, i;

	ASSERT_EQ(0, load_module_args("pid_batch=64 pid_max_delay_ms=1000"));
	ASSERT_EQ(0, write_str(PID_STATS, "0"));
	/* Threads take pids too: create them before the pids run out. */
	ASSERT_EQ(0, pthread_barrier_init(&start, NULL, 3));
	for (i = 0; i < 2; i++) {
		r[i] = (struct racer){ .start = &start, .kids = self->kids + i * 8, .n = 8,
				       .rounds = 500 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, race_exits_and_forks, &r[i]));
	}
	n = fill_pids(self->kids, &err);
	if (err != EAGAIN || n < 18) {
		r[0].rounds = r[1].rounds = 0; /* no slices to race on */
	} else {
		/*
		 * Two pids of headroom for a kernel thread that starts meanwhile,
		 * which would make stock fail a fork too; the reaped pids that
		 * batches hold use it up within a few rounds.
		 */
		kill_kids(self->kids, n - 2, n);
		self->kids[n - 2] = self->kids[n - 1] = getpid(); /* reaped */
	}
	pthread_barrier_wait(&start);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	if (err != EAGAIN || n < 18)
		kill_kids(self->kids, 0, n);
	ASSERT_EQ(EAGAIN, err);
	ASSERT_LE(18, n);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, r[i].eagain) TH_LOG("racer %d: EAGAIN", i);
		EXPECT_EQ(0, r[i].other) TH_LOG("racer %d: another error", i);
	}
	/* the batches were really in the way: forks at the limit had to flush */
	EXPECT_LT(100, pid_stat("flush_pressure"));
	TH_LOG("1000 exits raced forks at the limit (%d tasks): %d + %d EAGAIN, %lld pressure flushes",
	       n, r[0].eagain, r[1].eagain, pid_stat("flush_pressure"));
	for (i = 0; i < n; i++)
		if (self->kids[i] != getpid())
			kill(self->kids[i], SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
	EXPECT_EQ(0, unload_module());
}

/* After a burst of exits every pid is freed within the maximum delay. */
TEST(reuse_within_max_delay)
{
	const int delay_ms = 200, slack_ms = 500;
	double t0;
	int i;

	unload_module();
	ASSERT_EQ(0, load_module_args("pid_batch=64 pid_max_delay_ms=200"));
	ASSERT_EQ(0, write_str(PID_STATS, "0"));
	for (i = 0; i < 40; i++) {
		pid_t p = fork();

		if (p == 0)
			_exit(0);
		ASSERT_LT(0, p);
		waitpid(p, NULL, 0);
	}
	t0 = now_ms();
	usleep((delay_ms + slack_ms) * 1000);
	EXPECT_EQ(0, pid_stat("pending"));
	EXPECT_LE(40, pid_stat("queued"));
	EXPECT_EQ(pid_stat("queued"), pid_stat("freed"));
	EXPECT_LT(0, pid_stat("flush_timer"));
	TH_LOG("40 exits: none pending %.0f ms later (max delay %d ms, TCG slack %d ms)",
	       now_ms() - t0, delay_ms, slack_ms);
	EXPECT_EQ(0, unload_module());
}

/* The pid of the kernel thread named @comm, or -1. */
static pid_t kthread_named(const char *comm)
{
	struct dirent *p;
	DIR *procs = opendir("/proc");
	pid_t found = -1;
	char name[64];
	int pid;

	if (!procs)
		return -1;
	while (found < 0 && (p = readdir(procs))) {
		pid = atoi(p->d_name);
		if (pid > 0 && !kthread_comm(pid, name) && !strcmp(name, comm))
			found = pid;
	}
	closedir(procs);
	return found;
}

/* A task's voluntary context switches: how often it went to sleep. -1 if gone. */
static long long voluntary_switches(pid_t pid)
{
	char path[64], line[128];
	long long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %lld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * The timer flush runs on the "pid_release" kthread started at boot, never
 * on a workqueue, whose pool could start a kworker for it: at pid_max that
 * kworker's fork would take a number a fork of the user's needed, where
 * stock starts no thread (measure/0021). Each timer flush wakes that
 * kthread; other wakes only add to its count.
 */
TEST(timer_flush_runs_on_its_own_kthread)
{
	long long before, flushes;
	pid_t worker, p;
	int i;

	unload_module();
	ASSERT_EQ(0, load_module_args("pid_batch=64 pid_max_delay_ms=50"));
	worker = kthread_named("pid_release");
	ASSERT_LT(0, worker);
	/* its sleeps first: a flush counted after the reset has slept after it */
	before = voluntary_switches(worker);
	ASSERT_LE(0, before);
	ASSERT_EQ(0, write_str(PID_STATS, "0"));
	for (i = 0; i < 3; i++) {
		/* one exit, queued; the timer frees it 50 ms later */
		p = fork();
		if (p == 0)
			_exit(0);
		ASSERT_LT(0, p);
		waitpid(p, NULL, 0);
		usleep(300000);
	}
	flushes = pid_stat("flush_timer");
	/* a flush counted has gone back to sleep by now */
	usleep(100000);
	TH_LOG("%lld timer flushes, the kthread slept %lld times meanwhile", flushes,
	       voluntary_switches(worker) - before);
	EXPECT_LE(3, flushes);
	EXPECT_LE(before + flushes, voluntary_switches(worker));
	EXPECT_EQ(0, unload_module());
}

static pid_t clone3_set_tid(pid_t tid)
{
	struct clone_args args = {
		.exit_signal = SIGCHLD,
		.set_tid = (uint64_t)(uintptr_t)&tid,
		.set_tid_size = 1,
	};

	return syscall(__NR_clone3, &args, sizeof(args));
}

/*
 * clone3(set_tid) asks for the number of a child just reaped, as a restore
 * does. Stock frees the number at the reap, so the clone succeeds; with the
 * number still in a batch (a 1 s delay) the kernel must flush and retry
 * instead of failing with EEXIST. Most rounds must have flushed on pressure,
 * which here happens only on EEXIST, so the flush path is what gets tested.
 */
TEST(set_tid_reuses_a_batched_pid)
{
	int i, reused = 0, pending_at_clone = 0;

	unload_module();
	ASSERT_EQ(0, load_module_args("pid_batch=64 pid_max_delay_ms=1000"));
	ASSERT_EQ(0, write_str(PID_STATS, "0"));
	for (i = 0; i < 20; i++) {
		pid_t p = fork(), q;

		if (p == 0)
			_exit(0);
		ASSERT_LT(0, p);
		ASSERT_EQ(p, waitpid(p, NULL, 0));
		pending_at_clone += pid_stat("pending") > 0;
		q = clone3_set_tid(p);
		if (q == 0)
			_exit(0);
		EXPECT_EQ(p, q) TH_LOG("round %d: clone3(set_tid=%d): %s", i, p,
				       q < 0 ? strerror(errno) : "another pid");
		if (q > 0) {
			waitpid(q, NULL, 0);
			reused += q == p;
		}
	}
	EXPECT_EQ(20, reused);
	/*
	 * The timer may free a pid before its clone, but not in most rounds:
	 * most clones must have met the pid in a batch and flushed.
	 */
	EXPECT_LT(10, pending_at_clone);
	EXPECT_LT(10, pid_stat("flush_pressure"));
	TH_LOG("20 reaped pids asked for again by set_tid: %d reused, %d were batched, %lld pressure flushes",
	       reused, pending_at_clone, pid_stat("flush_pressure"));
	EXPECT_EQ(0, unload_module());
}

/*
 * Small namespaces: the teardown flushes after it has reaped every task, and
 * that must come well within the batch's maximum delay (the test's 10 s) of
 * the ten reaps, or the timer frees them first and there is nothing left to
 * flush. 63 tasks took 700 to 900 ms to reap under TCG, and the 1 s delay the
 * test had before was outlasted with kmemleak on.
 */
#define NS_OUTER_KIDS 10
#define NS_NESTED_KIDS 5
/* the two inits, the nested init's parent, and the children of both */
#define NS_TASKS (3 + NS_OUTER_KIDS + NS_NESTED_KIDS)

/*
 * A pid namespace whose init has children, one of them the init of a nested
 * namespace with children of its own. Returns how long killing the outer
 * init took until it was reaped: that waits for every pid of both
 * namespaces to be freed. @pending: how many released pids waited in batches
 * when the kill was sent.
 */
static double namespace_teardown_ms(long long *pending)
{
	int init_pid[2], nested[2], ready[2], i;
	pid_t outer, init;
	double t0;
	char c = 1;

	if (pipe(init_pid) || pipe(nested) || pipe(ready))
		return -1;
	outer = fork();
	if (outer == 0) {
		if (unshare(CLONE_NEWPID))
			_exit(1);
		init = fork();
		if (init != 0) {
			/* report the init's pid in the parent namespace, then wait */
			if (write(init_pid[1], &init, sizeof(init)) != sizeof(init))
				_exit(1);
			waitpid(init, NULL, 0);
			_exit(0);
		}
		for (i = 0; i < NS_OUTER_KIDS; i++)
			if (fork() == 0)
				for (;;)
					pause();
		if (fork() == 0) {
			if (unshare(CLONE_NEWPID) || fork() != 0) {
				/* the nested init's parent */
				for (;;)
					pause();
			}
			for (i = 0; i < NS_NESTED_KIDS; i++)
				if (fork() == 0)
					for (;;)
						pause();
			/* the nested namespace is complete */
			if (write(nested[1], &c, 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
		/*
		 * Ten pids of this namespace reaped while it lives: with the
		 * module they wait in a batch when the teardown starts, and
		 * the teardown must flush them rather than wait for them.
		 * Reaped last, once the nested namespace is complete, so that
		 * the teardown begins soon after; the test's 10 s maximum
		 * delay leaves the timer far behind even on a slow guest
		 * (with kmemleak under TCG, the ten forks alone outlasted 1 s).
		 */
		if (read(nested[0], &c, 1) != 1)
			_exit(1);
		for (i = 0; i < 10; i++) {
			pid_t p = fork();

			if (p == 0)
				_exit(0);
			waitpid(p, NULL, 0);
		}
		/* the outer namespace's own tasks are complete */
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	if (read(init_pid[0], &init, sizeof(init)) != sizeof(init) ||
	    read(ready[0], &c, 1) != 1)
		return -1;
	*pending = pid_stat("pending");
	t0 = now_ms();
	kill(init, SIGKILL);
	waitpid(outer, NULL, 0);
	for (i = 0; i < 2; i++) {
		close(init_pid[i]);
		close(nested[i]);
		close(ready[i]);
	}
	return now_ms() - t0;
}

FIXTURE(ns) {};
FIXTURE_SETUP(ns) { unload_module(); }
FIXTURE_TEARDOWN(ns) { unload_module(); }

/*
 * Teardown is not held up by batching, nested namespaces included: with a
 * maximum delay of 10 s it takes less than 3 s longer than with the
 * built-in. Waiting for the timer would add seconds to the difference.
 */
TEST_F_TIMEOUT(ns, teardown_not_held_by_batches, 300)
{
	double builtin, batched;
	long long pending;

	builtin = namespace_teardown_ms(&pending);
	ASSERT_LE(0, builtin);
	ASSERT_EQ(0, load_module_args("pid_batch=64 pid_max_delay_ms=10000"));
	ASSERT_EQ(0, write_str(PID_STATS, "0"));
	batched = namespace_teardown_ms(&pending);
	ASSERT_LE(0, batched);
	/* else the timer freed them first, and there was nothing to flush */
	EXPECT_LT(0, pending);
	/* held up, it would wait for the timer: seconds, not the margin */
	EXPECT_GT(builtin + 3000, batched);
	/* the pids of both namespaces went through the module */
	EXPECT_LE(NS_TASKS + 10, pid_stat("freed"));
	/* and the ten reaped before the teardown were still queued when it began */
	EXPECT_LT(0, pid_stat("flush_namespace"));
	TH_LOG("teardown of 2 nested namespaces, %d tasks and 10 reaped pids: %.0f ms built-in, %.0f ms batched, %lld pids batched at the kill, %lld namespace flushes",
	       NS_TASKS, builtin, batched, pending, pid_stat("flush_namespace"));
}

static void *thread_noop(void *arg)
{
	return arg;
}

static void *spawn_until(void *arg)
{
	double end = *(double *)arg;

	while (now_ms() < end) {
		pthread_t t;

		if (!pthread_create(&t, NULL, thread_noop, NULL))
			pthread_join(t, NULL);
	}
	return NULL;
}

/* Threads created and joined on every CPU: exits share pidmap_lock acquisitions. */
TEST(thread_storm_forms_batches)
{
	pthread_t spawners[4];
	long long freed, batches;
	double end;
	int i;

	unload_module();
	ASSERT_EQ(0, load_module_args("pid_batch=32 pid_max_delay_ms=10"));
	ASSERT_EQ(0, write_str(PID_STATS, "0"));
	end = now_ms() + 2000;
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&spawners[i], NULL, spawn_until, &end));
	for (i = 0; i < 4; i++)
		pthread_join(spawners[i], NULL);
	usleep(100000);
	freed = pid_stat("freed");
	batches = pid_stat("batches");
	EXPECT_LT(100, freed);
	EXPECT_LT(batches, freed); /* average batch above one */
	EXPECT_EQ(0, pid_stat("pending"));
	TH_LOG("%lld thread pids freed in %lld pidmap_lock acquisitions (%.2f per batch)",
	       freed, batches, batches ? (double)freed / batches : 0.0);
	EXPECT_EQ(0, unload_module());
}

/*
 * A nested pid namespace at exhaustion, with the module batching its reaped
 * pids: either its own pid_max (per namespace since 6.14) is the limit, or
 * the parent's, lowered, is, while the nested one has room, so that
 * alloc_pid() fails at the parent's level after the nested number is taken.
 */
FIXTURE(nested) {
	char saved[32];
};

FIXTURE_VARIANT(nested) {
	bool inner_limit; /* the nested namespace's pid_max, else the parent's */
};

FIXTURE_VARIANT_ADD(nested, inner_limit) { .inner_limit = true };
FIXTURE_VARIANT_ADD(nested, outer_limit) { .inner_limit = false };

FIXTURE_SETUP(nested)
{
	unload_module();
	ASSERT_EQ(0, read_file(PID_MAX, self->saved, sizeof(self->saved)));
	if (!variant->inner_limit)
		ASSERT_EQ(0, write_str(PID_MAX, TEST_PID_MAX));
}

FIXTURE_TEARDOWN(nested)
{
	unload_module();
	write_str(PID_MAX, self->saved);
}

/* What the init of the nested namespace saw. */
struct nested_fill {
	/* its children at each fill, and the tasks in the parent's pid range */
	int before, with, after, failed;
	int tasks_before, tasks_with, tasks_after;
	int err_before, err_with, err_after;
	long long pressure;
	int setup; /* the step that failed, 0 if none */
};

/*
 * The lowest pid_max a namespace takes: RESERVED_PIDS + 1, or 8 per possible
 * CPU if that is more (pid_max_min in kernel/pid.c); 100 above it.
 */
static int inner_pid_max(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	return (cpus * 8 > 301 ? cpus * 8 : 301) + 100;
}

/* Fills a nested namespace's pids, as its init, and records it in @r. */
static void nested_init(struct nested_fill *r, bool inner_limit)
{
	static pid_t kids[MAX_KIDS];
	char max[16];
	int n, i, j;

	snprintf(max, sizeof(max), "%d", inner_pid_max());
	if (inner_limit && write_str(PID_MAX, max)) {
		r->setup = 1;
		return;
	}
	/* a first fill moves the cursor past RESERVED_PIDS: allocation then wraps to 300 */
	n = fill_pids(kids, &r->err_before);
	kill_kids(kids, 0, n);
	r->before = fill_pids(kids, &r->err_before);
	r->tasks_before = tasks_in_pid_range();
	kill_kids(kids, 0, r->before);

	/* a long delay: only a flush on pressure frees a batched pid in time */
	if (load_module_args("pid_batch=64 pid_max_delay_ms=1000") ||
	    write_str(PID_STATS, "0")) {
		r->setup = 2;
		return;
	}
	r->with = fill_pids(kids, &r->err_with);
	r->tasks_with = tasks_in_pid_range();
	for (i = 0; i < 50; i++) {
		/* eight exits, then eight forks, at the limit */
		kill_kids(kids, r->with - 8, r->with);
		for (j = r->with - 8; j < r->with; j++) {
			kids[j] = fork();
			if (kids[j] == 0) {
				pause();
				_exit(0);
			}
			if (kids[j] < 0) {
				r->failed++;
				kids[j] = getpid(); /* skipped by kill_kids() */
			}
		}
	}
	r->pressure = pid_stat("flush_pressure");
	kill_kids(kids, 0, r->with);
	if (unload_module()) {
		r->setup = 3;
		return;
	}
	r->after = fill_pids(kids, &r->err_after);
	r->tasks_after = tasks_in_pid_range();
	kill_kids(kids, 0, r->after);
}

/*
 * Forks in the nested namespace fail with EAGAIN at the same count with and
 * without the module, and after it is unloaded, and cycles of exit and fork
 * at the limit never fail while the reaped pids wait in batches. At the
 * nested limit the count is its children (the namespace holds nothing else);
 * at the parent's, the tasks in the parent's pid range, as in
 * pid_max.exhaustion_is_unchanged (a kernel thread may start meanwhile).
 */
TEST_F_TIMEOUT(nested, exhaustion_is_unchanged, 600)
{
	struct nested_fill *r;
	pid_t outer, init;
	int status;

	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	outer = fork();
	ASSERT_LE(0, outer);
	if (outer == 0) {
		if (unshare(CLONE_NEWPID))
			_exit(1);
		init = fork();
		if (init == 0) {
			nested_init(r, variant->inner_limit);
			_exit(0);
		}
		_exit(init > 0 && waitpid(init, &status, 0) == init &&
		      WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 2);
	}
	ASSERT_EQ(outer, waitpid(outer, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, r->setup);
	EXPECT_EQ(EAGAIN, r->err_before);
	EXPECT_EQ(EAGAIN, r->err_with);
	EXPECT_EQ(EAGAIN, r->err_after);
	EXPECT_LT(0, r->before);
	if (variant->inner_limit) {
		EXPECT_EQ(r->before, r->with);
		EXPECT_EQ(r->before, r->after);
	} else {
		EXPECT_LT(0, r->tasks_before);
		EXPECT_EQ(r->tasks_before, r->tasks_with);
		EXPECT_EQ(r->tasks_before, r->tasks_after);
	}
	EXPECT_EQ(0, r->failed);
	EXPECT_LT(0, r->pressure);
	TH_LOG("%s limit: %d children (%d tasks in the parent's range) before, %d (%d) with the module, %lld pressure flushes, %d (%d) after",
	       variant->inner_limit ? "nested" : "parent", r->before, r->tasks_before,
	       r->with, r->tasks_with, r->pressure, r->after, r->tasks_after);
	munmap(r, sizeof(*r));
}

/* Bad parameters are refused at load, and change nothing. */
TEST(bad_parameters_refused)
{
	const char *bad[] = { "pid_batch=65", "pid_batch=abc", "pid_max_delay_ms=0",
			      "pid_max_delay_ms=10001", "pid_batch=-1", "clone_read=2",
			      "clone_read=seqcount" };
	unsigned int i;

	unload_module();
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, load_module_args(bad[i])) TH_LOG("%s", bad[i]);
		EXPECT_EQ(0, stats_impl_is("locked"));
		EXPECT_EQ(0, pid_stat_impl_is_builtin());
	}
	/* pid_batch=0 keeps the built-in pid freeing, the clone read still moves */
	ASSERT_EQ(0, load_module_args("pid_batch=0"));
	EXPECT_EQ(0, pid_stat_impl_is_builtin());
	EXPECT_EQ(0, stats_impl_is("forkscale"));
	EXPECT_EQ(0, unload_module());
}

TEST_HARNESS_MAIN
