// SPDX-License-Identifier: GPL-2.0
/*
 * Soak and fault injection on the debug kernel (lockdep, PROVE_RCU, KASAN,
 * DEBUG_LIST, DEBUG_ATOMIC_SLEEP; refcount_t always warns).
 *
 * soak: every fork and exit path at once for FORKSCALE_SOAK_SECS (default 60):
 * thread and process storms, migrations of a forking task, cgroup.kill of a
 * forking cgroup, clone3(CLONE_INTO_CGROUP), nested pid namespaces, pid_max
 * pressure, load/unload cycles of the module and switches of the built-in
 * clone read. Then: the css_sets and the
 * usable pid numbers under a lowered pid_max (free or held by a live task) are
 * back at their baselines and complete, and every
 * unload logged freed == queued with nothing pending. The guest's console is
 * checked for lockdep, KASAN, WARNING and BUG splats by the host.
 *
 * fault_injection: failslab and fail_page_alloc aimed (task-filter) at a fork
 * storm under the lowered pid_max, with the module loaded: forks fail with an
 * error, some succeed, and no css_set or pid number leaks.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <dirent.h>
#include <sys/prctl.h>

#include "kselftest_harness.h"
#include "forkscale_util.h"

#define FAULT "/sys/kernel/debug/"
enum { THREADS, FORKS, FORK_ERRORS, MIGRATIONS, KILLS, CLONE3S, NAMESPACES,
       MODULE_CYCLES, BATCHING_CYCLES, PID_MAX_FLIPS, READ_SWITCHES, NR_COUNTS };
static const char *const count_names[] = {
	"thread create+join", "fork+exit", "fork errors (EAGAIN/ENOMEM)", "migrations",
	"cgroup.kill", "clone3 into cgroup", "nested pid namespaces", "module load+unload",
	"  of which with batching", "pid_max changes", "clone read switches",
};

struct soak_shared {
	volatile int stop;
	volatile unsigned long long count[NR_COUNTS];
	volatile int bad_errno;
	volatile int unload_failed;
};

static struct soak_shared *sh;

static int fork_ok(pid_t pid)
{
	if (pid >= 0)
		return 1;
	if (errno == EAGAIN || errno == ENOMEM)
		__sync_fetch_and_add(&sh->count[FORK_ERRORS], 1);
	else
		sh->bad_errno = errno;
	return 0;
}

static void *thread_noop(void *arg)
{
	return arg;
}

static void thread_storm(void)
{
	while (!sh->stop) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread_noop, NULL)) {
			__sync_fetch_and_add(&sh->count[FORK_ERRORS], 1);
			usleep(1000);
			continue;
		}
		pthread_join(t, NULL);
		__sync_fetch_and_add(&sh->count[THREADS], 1);
	}
}

static void fork_storm(void)
{
	while (!sh->stop) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (fork_ok(pid)) {
			waitpid(pid, NULL, 0);
			__sync_fetch_and_add(&sh->count[FORKS], 1);
		} else {
			usleep(1000);
		}
	}
}

/* A forking child moved back and forth between two cgroups. */
static void migrations(void)
{
	pid_t child = fork();

	if (child == 0)
		fork_forever();
	while (!sh->stop && child > 0) {
		if (move_pid("forkscale_soak_a", child) || move_pid("forkscale_soak_b", child))
			break;
		__sync_fetch_and_add(&sh->count[MIGRATIONS], 2);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

/* cgroup.kill of a cgroup whose task forks, again and again. */
static void kills(void)
{
	while (!sh->stop) {
		int fd = open_cgroup("forkscale_soak_k");
		pid_t child = fd < 0 ? -1 : clone_into(fd);

		if (fd >= 0)
			close(fd);
		if (child == 0)
			fork_forever();
		if (!fork_ok(child)) {
			usleep(1000);
			continue;
		}
		usleep(2000);
		write_str(CGROOT "/forkscale_soak_k/cgroup.kill", "1");
		waitpid(child, NULL, 0);
		reap_all();
		if (wait_unpopulated("forkscale_soak_k", 10000))
			sh->bad_errno = ETIMEDOUT;
		__sync_fetch_and_add(&sh->count[KILLS], 1);
	}
}

static void clone3s(void)
{
	int fd = open_cgroup("forkscale_soak_a");

	while (!sh->stop && fd >= 0) {
		pid_t child = clone_into(fd);

		if (child == 0)
			_exit(0);
		if (fork_ok(child)) {
			waitpid(child, NULL, 0);
			__sync_fetch_and_add(&sh->count[CLONE3S], 1);
		} else {
			usleep(1000);
		}
	}
	if (fd >= 0)
		close(fd);
}

/* A pid namespace whose init forks a few tasks and a nested namespace. */
static int namespace_init(int depth)
{
	int i;

	for (i = 0; i < 4; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
	}
	if (depth > 0 && !unshare(CLONE_NEWPID)) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(namespace_init(depth - 1));
	}
	while (wait(NULL) > 0)
		;
	return 0;
}

/* Each round: a child enters a new pid namespace, whose init nests another. */
static void namespaces(void)
{
	while (!sh->stop) {
		int status;
		pid_t pid = fork();

		if (pid == 0) {
			pid_t init;

			if (unshare(CLONE_NEWPID))
				_exit(errno);
			init = fork();
			if (init == 0)
				_exit(namespace_init(1));
			if (init > 0)
				waitpid(init, NULL, 0);
			_exit(0);
		}
		if (!fork_ok(pid)) {
			usleep(1000);
			continue;
		}
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status))
			sh->bad_errno = WEXITSTATUS(status);
		__sync_fetch_and_add(&sh->count[NAMESPACES], 1);
	}
}

static void module_cycles(void)
{
	static const char *const params[] = {
		"pid_batch=0", "pid_batch=1", "pid_batch=8", "", "pid_batch=64 pid_max_delay_ms=1",
	};
	unsigned int i;

	for (i = 0; !sh->stop; i++) {
		if (load_module_args(params[i % 5])) {
			usleep(10000);
			continue;
		}
		usleep(200000);
		if (unload_module())
			sh->unload_failed++;
		__sync_fetch_and_add(&sh->count[MODULE_CYCLES], 1);
		/* only a load that took over pid freeing logs its counts at unload */
		if (i % 5)
			__sync_fetch_and_add(&sh->count[BATCHING_CYCLES], 1);
	}
}

static void pid_max_pressure(void)
{
	char saved[32];

	if (read_file(PID_MAX, saved, sizeof(saved)))
		return;
	while (!sh->stop) {
		write_str(PID_MAX, TEST_PID_MAX);
		usleep(300000);
		write_str(PID_MAX, saved);
		usleep(700000);
		__sync_fetch_and_add(&sh->count[PID_MAX_FLIPS], 1);
	}
	write_str(PID_MAX, saved);
}

/*
 * The sysctl switched between the built-ins every 20 ms, under the storms,
 * migrations and kills: each switch patches the fork path's static call, and to
 * or from rwlock turns the moves' write side on or off. While the module is
 * loaded a switch is refused with EBUSY; any other error is a failure.
 */
static void read_switches(void)
{
	static const char *const impls[] = { "pinned", "rwlock", "seqcount", "locked" };
	unsigned int i;
	int ret;

	for (i = 0; !sh->stop; i++) {
		ret = write_str(SYSCTL, impls[i % 4]);
		if (!ret)
			__sync_fetch_and_add(&sh->count[READ_SWITCHES], 1);
		else if (ret != -EBUSY)
			sh->bad_errno = -ret;
		usleep(20000);
	}
}

static void (*const workers[])(void) = {
	thread_storm, thread_storm, fork_storm, migrations, kills, clone3s, namespaces,
	module_cycles, pid_max_pressure, read_switches,
};
#define NR_WORKERS (sizeof(workers) / sizeof(workers[0]))

/* The namespace worker keeps going in descendants: wait for the whole tree. */
static void run_workers(int secs)
{
	unsigned int i;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (i = 0; i < NR_WORKERS; i++) {
		if (fork() == 0) {
			workers[i]();
			_exit(0);
		}
	}
	sleep(secs);
	sh->stop = 1;
	while (wait(NULL) > 0 || errno == EINTR)
		;
}

/*
 * alloc_pid() hands out numbers from RESERVED_PIDS (300) up to pid_max once the
 * cursor has passed 300, so under pid_max = TEST_PID_MAX the usable numbers are
 * [300, TEST_PID_MAX). A number there is free, held by a live task (threads
 * and kernel threads included), or leaked.
 */
#define RESERVED_PIDS 300

/* Tasks alive now whose pid is in [RESERVED_PIDS, TEST_PID_MAX). */
static int live_tasks_in_range(void)
{
	int max = atoi(TEST_PID_MAX), n = 0;
	char path[300];
	struct dirent *p, *t;
	DIR *procs = opendir("/proc"), *tasks;

	while (procs && (p = readdir(procs))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		tasks = opendir(path);
		while (tasks && (t = readdir(tasks))) {
			int tid = atoi(t->d_name);

			n += tid >= RESERVED_PIDS && tid < max;
		}
		if (tasks)
			closedir(tasks);
	}
	if (procs)
		closedir(procs);
	return n;
}

/*
 * The usable pid numbers that are free or held by a task: TEST_PID_MAX -
 * RESERVED_PIDS unless pids leak. Counted as the sleeping tasks that fit under
 * the lowered pid_max plus the live tasks already in the range.
 */
static int pid_capacity(void)
{
	static pid_t kids[MAX_KIDS];
	char saved[32];
	int n, err, live;

	/* orphans of the workers are re-parented to this subreaper: reap them first */
	usleep(200000);
	reap_all();
	if (read_file(PID_MAX, saved, sizeof(saved)) || write_str(PID_MAX, TEST_PID_MAX))
		return -1;
	live = live_tasks_in_range();
	n = fill_pids(kids, &err);
	kill_kids(kids, 0, n);
	write_str(PID_MAX, saved);
	return err == EAGAIN ? n + live : -1;
}

FIXTURE(soak) {
	long long css_sets;
	int capacity;
	int imbalances;		/* unload_imbalances() when the test began */
	char pid_max[32];	/* set while a test has pid_max lowered */
};

FIXTURE_SETUP(soak)
{
	unload_module();
	ASSERT_EQ(0, write_str(SYSCTL, "locked"));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_EQ(0, make_cgroup("forkscale_soak_a"));
	ASSERT_EQ(0, make_cgroup("forkscale_soak_b"));
	ASSERT_EQ(0, make_cgroup("forkscale_soak_k"));
	self->css_sets = stats_value("css_sets");
	/* the kernel log holds what tests before this one printed: count from here */
	self->imbalances = unload_imbalances();
	ASSERT_LE(0, self->imbalances);
	/* the first fill moves the pid cursor past RESERVED_PIDS, as in the checks */
	ASSERT_LT(0, pid_capacity());
	self->capacity = pid_capacity();
	ASSERT_LT(0, self->capacity);
}

FIXTURE_TEARDOWN(soak)
{
	if (self->pid_max[0])
		write_str(PID_MAX, self->pid_max);
	unload_module();
	remove_cgroup("forkscale_soak_a");
	remove_cgroup("forkscale_soak_b");
	remove_cgroup("forkscale_soak_k");
	write_str(FAULT "failslab/probability", "0");
	write_str(FAULT "fail_page_alloc/probability", "0");
}

static void check_baselines(struct __test_metadata *_metadata, long long css_sets, int capacity)
{
	int now = pid_capacity();

	EXPECT_EQ(0, wait_css_sets(css_sets, 20000));
	EXPECT_EQ(capacity, now);
	EXPECT_EQ(atoi(TEST_PID_MAX) - RESERVED_PIDS, now);
	TH_LOG("baselines: css_sets %lld -> %lld; pids under pid_max %s held or free: %d -> %d",
	       css_sets, stats_value("css_sets"), TEST_PID_MAX, capacity, now);
}

TEST_F_TIMEOUT(soak, everything_at_once, 7200)
{
	int secs = env_int("FORKSCALE_SOAK_SECS", 60), i;

	run_workers(secs);
	unload_module();
	EXPECT_EQ(0, write_str(SYSCTL, "locked"));
	for (i = 0; i < NR_COUNTS; i++)
		TH_LOG("%-28s %llu", count_names[i], sh->count[i]);
	for (i = 0; i < NR_COUNTS; i++)
		if (i != FORK_ERRORS)
			EXPECT_LT(0ULL, sh->count[i]);
	EXPECT_EQ(0, sh->bad_errno);
	EXPECT_EQ(0, sh->unload_failed);
	/* no unload found a queued pid unfreed or one pending */
	EXPECT_EQ(self->imbalances, unload_imbalances());
	check_baselines(_metadata, self->css_sets, self->capacity);
}

/*
 * failslab and fail_page_alloc fail 1 in 100 allocations of the fork storm's
 * tasks (make-it-fail, inherited by their children), with the module loaded.
 * The storm runs in a cgroup of its own, whose css_set must be freed once it
 * ends: a reference that a failed fork's clean-up or a successful fork
 * leaked would keep it, and check_baselines() would find one css_set more.
 * The storm also runs under pid_max = TEST_PID_MAX, so its pids cycle through
 * the numbers check_baselines() counts: a pid that the batcher lost, or that
 * a failed fork never gave back, lowers the capacity.
 */
TEST_F_TIMEOUT(soak, fault_injection_on_fork, 1200)
{
	int secs = env_int("FORKSCALE_FAULT_SECS", 20);
	static const char *const kinds[] = { "failslab", "fail_page_alloc" };
	unsigned int k;
	pid_t storm;

	ASSERT_EQ(0, load_module());
	for (k = 0; k < 2; k++) {
		char path[128];

		snprintf(path, sizeof(path), FAULT "%s/task-filter", kinds[k]);
		ASSERT_EQ(0, write_str(path, "Y"));
		snprintf(path, sizeof(path), FAULT "%s/interval", kinds[k]);
		ASSERT_EQ(0, write_str(path, "1"));
		snprintf(path, sizeof(path), FAULT "%s/times", kinds[k]);
		ASSERT_EQ(0, write_str(path, "-1"));
		/* the default fails only atomic allocations; fork's may sleep */
		snprintf(path, sizeof(path), FAULT "%s/ignore-gfp-wait", kinds[k]);
		ASSERT_EQ(0, write_str(path, "N"));
		snprintf(path, sizeof(path), FAULT "%s/verbose", kinds[k]);
		ASSERT_EQ(0, write_str(path, "0"));
		snprintf(path, sizeof(path), FAULT "%s/probability", kinds[k]);
		ASSERT_EQ(0, write_str(path, "1"));
	}
	ASSERT_EQ(0, read_file(PID_MAX, self->pid_max, sizeof(self->pid_max)));
	ASSERT_EQ(0, write_str(PID_MAX, TEST_PID_MAX));
	storm = fork();
	if (storm == 0) {
		if (move_pid("forkscale_soak_a", getpid()) ||
		    write_str("/proc/self/make-it-fail", "1"))
			_exit(1);
		fork_storm();
		_exit(0);
	}
	ASSERT_LT(0, storm);
	sleep(secs);
	/*
	 * Not SIGKILL: the storm waits for its last child, which would otherwise
	 * be adopted by init and could be reaped during the capacity count.
	 */
	sh->stop = 1;
	waitpid(storm, NULL, 0);
	reap_all();
	write_str(FAULT "failslab/probability", "0");
	write_str(FAULT "fail_page_alloc/probability", "0");
	EXPECT_EQ(0, write_str(PID_MAX, self->pid_max));
	self->pid_max[0] = '\0';
	EXPECT_EQ(0, unload_module());

	TH_LOG("forks %llu, failed with EAGAIN/ENOMEM %llu, other errno %d",
	       sh->count[FORKS], sh->count[FORK_ERRORS], sh->bad_errno);
	EXPECT_LT(0ULL, sh->count[FORKS]);
	EXPECT_LT(0ULL, sh->count[FORK_ERRORS]);
	EXPECT_EQ(0, sh->bad_errno);
	EXPECT_EQ(self->imbalances, unload_imbalances());
	check_baselines(_metadata, self->css_sets, self->capacity);
}

TEST_HARNESS_MAIN
