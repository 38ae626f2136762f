// SPDX-License-Identifier: GPL-2.0
/*
 * The batched exit unlink (the forkscale module's dead_batch): a dead task
 * that waits in a batch still counts in its cgroup, so userspace must never
 * see it. Every case of the unlink fixture runs twice with the same
 * expectations: on the kernel's own unlink ("builtin", the code of stock
 * 7.3), and with the module batching with a delay of 1000 ms ("batched"), so
 * that only the flushes the kernel asks for before a reader can make it pass
 * in time. A dead task must be gone
 * from cgroup.events, cgroup.procs and cgroup.threads, and its cgroup
 * removable, within READER_MS of its reaping, as on stock; the notification
 * of "populated 0" may come late by the maximum delay and a stated slack, no
 * more.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "forkscale_util.h"

#define DEAD_STATS "/sys/kernel/debug/cgroup_dead/stats"
#define CG "forkscale_eu"
#define DELAY_MS 1000
/*
 * How long after a reap a reader may still see the task on stock: its final
 * context switch may not have happened yet. Far below DELAY_MS, so a reader
 * that is not flushed for waits for the timer and fails. Rounds make it
 * unlikely that a timer armed by an earlier exit fires in time by chance.
 */
#define READER_MS 200
#define ROUNDS 5
/*
 * How late a batched task's "populated 0" may come after its maximum delay:
 * the timer's kthread, one flush and cgroup_file_notify()'s 20 ms rate limit,
 * under single-threaded TCG on a loaded host.
 */
#define NOTIFY_SLACK_MS 1000

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* how many lines @file of the test cgroup has, or -1 */
static int lines(const char *file)
{
	char path[128], buf[8192], *p;
	int n = 0;

	snprintf(path, sizeof(path), CGROOT "/" CG "/%s", file);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	for (p = buf; *p; p++)
		n += *p == '\n';
	return n;
}

/*
 * Polls @file until it has @n lines, each a live task: the milliseconds it
 * took, or -1. A task that is reaped but not unlinked is listed as "0" (its
 * pid is gone), so the count includes it.
 */
static long lines_within(const char *file, int n, int ms)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (lines(file) != n) {
		if (ms_since(&t0) > ms)
			return -1;
		usleep(1000);
	}
	return ms_since(&t0);
}

/* a child in the test cgroup that exits at once, reaped: its pid */
static pid_t exit_in_cgroup(int cg_fd)
{
	pid_t pid = clone_into(cg_fd);

	if (pid == 0)
		_exit(0);
	if (pid > 0 && waitpid(pid, NULL, 0) != pid)
		return -1;
	return pid;
}

/* a child in the test cgroup that waits for a signal: its pid */
static pid_t sleeper_in_cgroup(int cg_fd)
{
	pid_t pid = clone_into(cg_fd);

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

/*
 * Removes the test cgroup and the children a test made in it: a test that
 * failed halfway leaves them, and the next test's setup must still start
 * clean.
 */
static void remove_test_cgroups(void)
{
	struct dirent *e;
	char name[64];
	DIR *dir;

	dir = opendir(CGROOT "/" CG);
	if (dir) {
		while ((e = readdir(dir))) {
			/* the tests' children have short names: d, r0, s0, ... */
			if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
			    strlen(e->d_name) > 8)
				continue;
			snprintf(name, sizeof(name), CG "/%.8s", e->d_name);
			remove_cgroup(name);
		}
		closedir(dir);
	}
	remove_cgroup(CG);
}

FIXTURE(unlink) {
	int cg_fd;
	int imbalances;		/* the module's unbalanced unloads before */
	char controllers[256];	/* the root's cgroup.subtree_control */
};

FIXTURE_VARIANT(unlink) {
	const char *args;	/* the module's parameters, NULL for no module */
	int delay_ms;		/* their dead_max_delay_ms, 0 for no module */
};

FIXTURE_VARIANT_ADD(unlink, builtin) { .args = NULL };
FIXTURE_VARIANT_ADD(unlink, batched) {
	.args = "dead_batch=64 dead_max_delay_ms=1000",
	.delay_ms = DELAY_MS,
};

FIXTURE_SETUP(unlink)
{
	const char *want = variant->args ? "impl: forkscale\n" : "impl: builtin\n";
	char impl[64];

	unload_module();
	if (variant->args)
		ASSERT_EQ(0, load_module_args(variant->args));
	ASSERT_EQ(0, read_file(DEAD_STATS, impl, sizeof(impl)));
	ASSERT_EQ(0, strncmp(impl, want, strlen(want)));
	ASSERT_EQ(0, read_file(CGROOT "/cgroup.subtree_control", self->controllers,
			       sizeof(self->controllers)));
	self->imbalances = log_lines("forkscale: exit unlink: ");
	ASSERT_LE(0, self->imbalances);
	remove_test_cgroups();
	ASSERT_EQ(0, make_cgroup(CG));
	self->cg_fd = open_cgroup(CG);
	ASSERT_LE(0, self->cg_fd);
}

FIXTURE_TEARDOWN(unlink)
{
	close(self->cg_fd);
	remove_test_cgroups();
	reap_all();
	unload_module();
	/* the controllers a test enabled at the root go again */
	if (!strstr(self->controllers, "memory"))
		write_str(CGROOT "/cgroup.subtree_control", "-memory");
	if (!strstr(self->controllers, "pids"))
		write_str(CGROOT "/cgroup.subtree_control", "-pids");
}

/* "populated 0" can be read right after the last task's reaping */
TEST_F(unlink, events_after_reap)
{
	struct timespec t0;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		ASSERT_LT(0, exit_in_cgroup(self->cg_fd));
		clock_gettime(CLOCK_MONOTONIC, &t0);
		EXPECT_EQ(0, wait_unpopulated(CG, READER_MS)) {
			TH_LOG("round %d: populated after %ld ms", i, ms_since(&t0));
		}
	}
}

/* a reaped process leaves cgroup.procs, a joined thread cgroup.threads */
static void *thread_exits(void *arg)
{
	return NULL;
}

/* a thread that exits once a byte arrives on the pipe *@arg */
static void *thread_waits(void *arg)
{
	char c;

	if (read(*(int *)arg, &c, 1) != 1)
		return arg;
	return NULL;
}

TEST_F(unlink, listings_after_reap)
{
	int i;

	for (i = 0; i < ROUNDS; i++) {
		pid_t pid = exit_in_cgroup(self->cg_fd);

		ASSERT_LT(0, pid);
		EXPECT_LE(0, lines_within("cgroup.procs", 0, READER_MS)) {
			TH_LOG("round %d: cgroup.procs lists %d tasks after the reap of %d",
			       i, lines("cgroup.procs"), pid);
		}
		EXPECT_LE(0, lines_within("cgroup.threads", 0, READER_MS)) {
			TH_LOG("round %d: cgroup.threads lists %d tasks after the reap of %d",
			       i, lines("cgroup.threads"), pid);
		}
	}

	/* threads of a process in the cgroup, joined by its main thread */
	pid_t child = clone_into(self->cg_fd);

	ASSERT_LE(0, child);
	if (child == 0) {
		int bad = 0;

		for (i = 0; i < ROUNDS; i++) {
			int go[2];
			pthread_t t;

			if (pipe(go) || pthread_create(&t, NULL, thread_waits, &go[0]))
				_exit(2);
			/* listed while it lives: the count sees a thread */
			if (lines("cgroup.threads") != 2)
				_exit(3);
			if (write(go[1], "", 1) != 1 || pthread_join(t, NULL))
				_exit(2);
			close(go[0]);
			close(go[1]);
			if (lines_within("cgroup.threads", 1, READER_MS) < 0) {
				fprintf(stderr, "# round %d: cgroup.threads lists %d tasks after a join\n",
					i, lines("cgroup.threads"));
				bad = 1;
			}
		}
		_exit(bad);
	}
	int status;

	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * The cgroup whose last task was just reaped can be removed (7.3 decides on a
 * task walk, which already hides a dead process).
 */
TEST_F(unlink, rmdir_after_reap)
{
	struct timespec t0;
	int i, ret;

	for (i = 0; i < ROUNDS; i++) {
		char name[64], path[128];
		int fd;

		snprintf(name, sizeof(name), CG "/r%d", i);
		ASSERT_EQ(0, make_cgroup(name));
		fd = open_cgroup(name);
		ASSERT_LE(0, fd);
		ASSERT_LT(0, exit_in_cgroup(fd));
		close(fd);
		snprintf(path, sizeof(path), CGROOT "/%s", name);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while ((ret = rmdir(path)) && errno == EBUSY &&
		       ms_since(&t0) < READER_MS)
			usleep(1000);
		EXPECT_EQ(0, ret) {
			TH_LOG("round %d: rmdir: %s after %ld ms", i, strerror(errno),
			       ms_since(&t0));
		}
	}
}

/*
 * A cgroup whose last task was just reaped may enable domain controllers for
 * its children: the no-internal-process rule counts its populated css_sets.
 */
TEST_F(unlink, subtree_control_after_reap)
{
	struct timespec t0;
	int i, ret;

	if (write_str(CGROOT "/cgroup.subtree_control", "+memory") ||
	    write_str(CGROOT "/" CG "/cgroup.subtree_control", "+memory"))
		SKIP(return, "no memory controller");
	for (i = 0; i < ROUNDS; i++) {
		char name[64], path[128];
		int fd;

		snprintf(name, sizeof(name), CG "/s%d", i);
		ASSERT_EQ(0, make_cgroup(name));
		fd = open_cgroup(name);
		ASSERT_LE(0, fd);
		ASSERT_LT(0, exit_in_cgroup(fd));
		close(fd);
		snprintf(path, sizeof(path), CGROOT "/%s/cgroup.subtree_control", name);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while ((ret = write_str(path, "+memory")) == -EBUSY &&
		       ms_since(&t0) < READER_MS)
			usleep(1000);
		EXPECT_EQ(0, ret) {
			TH_LOG("round %d: +memory: %s after %ld ms", i, strerror(-ret),
			       ms_since(&t0));
		}
		snprintf(path, sizeof(path), CGROOT "/%s", name);
		rmdir(path);
	}
}

/*
 * Threaded controllers on: the test cgroup with a process of its own is a
 * thread root, whose domain child reads "domain invalid". Once the process is
 * reaped, the child reads "domain", and a clone3() into the test cgroup
 * succeeds while a domain child of it just emptied: both rules count
 * populated css_sets.
 */
TEST_F(unlink, thread_root_after_reap)
{
	char path[128], type[64];
	struct timespec t0;
	int i, fd, ret;

	if (write_str(CGROOT "/cgroup.subtree_control", "+pids") ||
	    write_str(CGROOT "/" CG "/cgroup.subtree_control", "+pids"))
		SKIP(return, "no pids controller");
	ASSERT_EQ(0, make_cgroup(CG "/d"));
	fd = open_cgroup(CG "/d");
	ASSERT_LE(0, fd);
	snprintf(path, sizeof(path), CGROOT "/" CG "/d/cgroup.type");
	for (i = 0; i < ROUNDS; i++) {
		pid_t live = sleeper_in_cgroup(self->cg_fd);

		ASSERT_LT(0, live);
		ASSERT_EQ(0, read_file(path, type, sizeof(type)));
		/* the control: a thread root's domain child is invalid */
		ASSERT_STREQ("domain invalid\n", type);
		kill(live, SIGKILL);
		ASSERT_EQ(live, waitpid(live, NULL, 0));
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (!read_file(path, type, sizeof(type)) &&
		       strcmp(type, "domain\n") && ms_since(&t0) < READER_MS)
			usleep(1000);
		EXPECT_STREQ("domain\n", type) {
			TH_LOG("round %d: cgroup.type %ld ms after the reap", i, ms_since(&t0));
		}

		/* a dead task in the domain child, then a clone into its parent */
		ASSERT_LT(0, exit_in_cgroup(fd));
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while ((ret = exit_in_cgroup(self->cg_fd)) < 0 && errno == EBUSY &&
		       ms_since(&t0) < READER_MS)
			usleep(1000);
		EXPECT_LT(0, ret) {
			TH_LOG("round %d: clone3 into the parent: %s after %ld ms", i,
			       strerror(errno), ms_since(&t0));
		}
	}
	close(fd);
	rmdir(CGROOT "/" CG "/d");
}

/*
 * Threaded controllers on, as above: a task moved by a write of its pid to the
 * test cgroup's cgroup.procs gets there while a domain child of it just
 * emptied. The write has no flush of its own: the destination's rules flush
 * where one fails.
 */
TEST_F(unlink, procs_write_after_reap)
{
	const char *type_path = CGROOT "/" CG "/d/cgroup.type";
	char nr[16], type[64];
	struct timespec t0;
	int i, fd, ret;
	pid_t mover;

	if (write_str(CGROOT "/cgroup.subtree_control", "+pids") ||
	    write_str(CGROOT "/" CG "/cgroup.subtree_control", "+pids"))
		SKIP(return, "no pids controller");
	ASSERT_EQ(0, make_cgroup(CG "/d"));
	fd = open_cgroup(CG "/d");
	ASSERT_LE(0, fd);
	for (i = 0; i < ROUNDS; i++) {
		ASSERT_LT(0, exit_in_cgroup(fd));
		mover = fork();
		if (mover == 0) {
			pause();
			_exit(0);
		}
		ASSERT_LT(0, mover);
		snprintf(nr, sizeof(nr), "%d", mover);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while ((ret = write_str(CGROOT "/" CG "/cgroup.procs", nr)) == -EBUSY &&
		       ms_since(&t0) < READER_MS)
			usleep(1000);
		EXPECT_EQ(0, ret) {
			TH_LOG("round %d: cgroup.procs write into the parent: %s after %ld ms", i,
			       strerror(-ret), ms_since(&t0));
		}
		kill(mover, SIGKILL);
		ASSERT_EQ(mover, waitpid(mover, NULL, 0));
		/*
		 * Until the mover's final switch the parent is a thread root,
		 * and the next round's clone3 into d fails: wait for stock's
		 * answer, as a reader would.
		 */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (!read_file(type_path, type, sizeof(type)) &&
		       strcmp(type, "domain\n") && ms_since(&t0) < READER_MS)
			usleep(1000);
		ASSERT_STREQ("domain\n", type);
	}
	close(fd);
	rmdir(CGROOT "/" CG "/d");
}

/*
 * The notification of "populated 0", waited for without reading: on stock at
 * the final context switch, batched within the maximum delay.
 */
TEST_F(unlink, populated_notification)
{
	char path[128], buf[256];
	struct pollfd p;
	struct timespec t0;
	ssize_t len;

	snprintf(path, sizeof(path), CGROOT "/" CG "/cgroup.events");
	p.fd = open(path, O_RDONLY);
	ASSERT_LE(0, p.fd);
	p.events = POLLPRI;
	ASSERT_LT(0, exit_in_cgroup(self->cg_fd));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* the wakeup of "populated 1" may be pending still; wait for a 0 */
	for (;;) {
		len = pread(p.fd, buf, sizeof(buf) - 1, 0);
		ASSERT_LT(0, len);
		buf[len] = '\0';
		if (strstr(buf, "populated 0\n"))
			break;
		ASSERT_LT(ms_since(&t0), DELAY_MS + 1000) {
			TH_LOG("no populated 0 notified after %ld ms", ms_since(&t0));
		}
		poll(&p, 1, DELAY_MS + 1000);
	}
	TH_LOG("populated 0 after %ld ms", ms_since(&t0));
	close(p.fd);
}

/*
 * Kills a sleeper in the test cgroup, the only task there, and waits for the
 * "populated 0" notification with a poll that no read of cgroup.events
 * precedes (a read flushes): the milliseconds from its reaping, or -1 if none
 * came within @limit_ms or cgroup.events then says otherwise.
 */
static long notified_alone(int cg_fd, int limit_ms)
{
	char path[128], buf[256];
	struct pollfd p = { .events = POLLPRI };
	struct timespec t0;
	long ms = -1;
	ssize_t len;
	pid_t pid;

	snprintf(path, sizeof(path), CGROOT "/" CG "/cgroup.events");
	p.fd = open(path, O_RDONLY);
	if (p.fd < 0)
		return -1;
	/* a task to make the cgroup populated, and its notification consumed */
	pid = sleeper_in_cgroup(cg_fd);
	if (pid <= 0 || pread(p.fd, buf, sizeof(buf) - 1, 0) <= 0)
		goto out;
	poll(&p, 1, 0);
	kill(pid, SIGKILL);
	if (waitpid(pid, NULL, 0) != pid)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (poll(&p, 1, limit_ms) != 1)
		goto out;
	ms = ms_since(&t0);
	len = pread(p.fd, buf, sizeof(buf) - 1, 0);
	if (len <= 0)
		ms = -1;
	else if (buf[len] = '\0', !strstr(buf, "populated 0\n"))
		ms = -1;
out:
	close(p.fd);
	return ms;
}

/*
 * The first read above flushed. This one must not: a read that comes only
 * after the notification would hide a missing timer, so wait for the
 * notification alone. Stock notifies once the task has made its final
 * switch; a batch holds the task until its timer, which the exit armed no
 * earlier than READER_MS before its reaping (when its queue had been empty),
 * and notifies within NOTIFY_SLACK_MS of the delay.
 */
TEST_F(unlink, populated_notification_alone)
{
	int most = variant->delay_ms ? variant->delay_ms + NOTIFY_SLACK_MS : READER_MS;
	long ms;

	ASSERT_EQ(0, variant->args ? write_str(DEAD_STATS, "0") : 0);
	ms = notified_alone(self->cg_fd, most);
	EXPECT_LE(0, ms) {
		TH_LOG("no notification within %d ms", most);
	}
	TH_LOG("notified after %ld ms (delay %d ms)", ms, variant->delay_ms);
	if (variant->delay_ms) {
		/* the batch held the task: a timer flush unlinked it, late */
		EXPECT_LE(variant->delay_ms - READER_MS, ms);
		EXPECT_LT(0, stat_value(DEAD_STATS, "flush_timer"));
	}
}

/*
 * The same at the module's default delay (10 ms), where the time cannot show
 * that a batch held the task: the statistics do, a queued task that a timer
 * flush unlinked.
 */
TEST(populated_notification_at_the_default_delay)
{
	int cg_fd, delay;
	long ms;

	unload_module();
	remove_test_cgroups();
	ASSERT_EQ(0, load_module_args("dead_batch=64"));
	delay = stat_value(DEAD_STATS, "max_delay_ms");
	ASSERT_EQ(10, delay);
	ASSERT_EQ(0, make_cgroup(CG));
	cg_fd = open_cgroup(CG);
	ASSERT_LE(0, cg_fd);
	ASSERT_EQ(0, write_str(DEAD_STATS, "0"));
	ms = notified_alone(cg_fd, delay + NOTIFY_SLACK_MS);
	EXPECT_LE(0, ms) {
		TH_LOG("no notification within %d ms", delay + NOTIFY_SLACK_MS);
	}
	EXPECT_LT(0, stat_value(DEAD_STATS, "queued"));
	EXPECT_LT(0, stat_value(DEAD_STATS, "flush_timer"));
	TH_LOG("notified after %ld ms (delay %d ms): %lld queued, %lld timer flushes",
	       ms, delay, stat_value(DEAD_STATS, "queued"),
	       stat_value(DEAD_STATS, "flush_timer"));
	close(cg_fd);
	remove_test_cgroups();
	reap_all();
	EXPECT_EQ(0, unload_module());
}

/* cgroup.kill with unlinks pending kills every live task and empties it */
TEST_F(unlink, kill_with_unlinks_pending)
{
	pid_t live[8];
	int i, status;

	for (i = 0; i < 8; i++) {
		live[i] = sleeper_in_cgroup(self->cg_fd);
		ASSERT_LT(0, live[i]);
		ASSERT_LT(0, exit_in_cgroup(self->cg_fd));
	}
	ASSERT_EQ(0, write_str(CGROOT "/" CG "/cgroup.kill", "1"));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(live[i], waitpid(live[i], &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	}
	EXPECT_EQ(0, wait_unpopulated(CG, READER_MS));
}

/* the freezer with unlinks pending reports frozen as on stock */
TEST_F(unlink, freeze_with_unlinks_pending)
{
	char buf[256];
	struct timespec t0;
	pid_t live[4];
	int i;

	for (i = 0; i < 4; i++) {
		live[i] = sleeper_in_cgroup(self->cg_fd);
		ASSERT_LT(0, live[i]);
		ASSERT_LT(0, exit_in_cgroup(self->cg_fd));
	}
	ASSERT_EQ(0, write_str(CGROOT "/" CG "/cgroup.freeze", "1"));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ASSERT_EQ(0, read_file(CGROOT "/" CG "/cgroup.events", buf, sizeof(buf)));
		if (strstr(buf, "frozen 1\n"))
			break;
		ASSERT_LT(ms_since(&t0), 5000) {
			TH_LOG("not frozen after %ld ms: %s", ms_since(&t0), buf);
		}
		usleep(1000);
	}
	ASSERT_EQ(0, write_str(CGROOT "/" CG "/cgroup.freeze", "0"));
	for (i = 0; i < 4; i++) {
		kill(live[i], SIGKILL);
		ASSERT_EQ(live[i], waitpid(live[i], NULL, 0));
	}
}

/* pids.current falls back as its tasks are reaped, as on stock */
TEST_F(unlink, pids_current_after_reap)
{
	char buf[64];
	int i;

	if (write_str(CGROOT "/cgroup.subtree_control", "+pids"))
		SKIP(return, "no pids controller");
	ASSERT_EQ(0, read_file(CGROOT "/" CG "/pids.current", buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
	for (i = 0; i < ROUNDS; i++)
		ASSERT_LT(0, exit_in_cgroup(self->cg_fd));
	ASSERT_EQ(0, read_file(CGROOT "/" CG "/pids.current", buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
}

/* unloading with tasks queued unlinks them: the cgroup empties at once */
TEST_F(unlink, unload_unlinks_pending)
{
	int i;

	for (i = 0; i < ROUNDS; i++)
		ASSERT_LT(0, exit_in_cgroup(self->cg_fd));
	if (variant->args) {
		/*
		 * The 1 s delay holds them, barring the timer: one armed earlier,
		 * or a guest slow enough (a loaded TCG host) for it to fire
		 * meanwhile. Then exit again, into the queue it left empty.
		 */
		for (i = 0; i < ROUNDS && stat_value(DEAD_STATS, "pending") <= 0; i++)
			ASSERT_LT(0, exit_in_cgroup(self->cg_fd));
		ASSERT_LT(0, stat_value(DEAD_STATS, "pending"));
		EXPECT_EQ(0, unload_module());
	}
	/* nothing flushes any more: the unload must have */
	EXPECT_EQ(0, wait_unpopulated(CG, READER_MS));
	EXPECT_EQ(self->imbalances, log_lines("forkscale: exit unlink: "));
}

/*
 * A child of CG creates and joins @threads threads, one at a time, and exits,
 * on CPU @cpu if it is not negative; 0 once it is reaped and CG is
 * unpopulated.
 */
static int thread_storm(int threads, int cpu)
{
	int cg_fd, status, ret = -1;
	pid_t child;

	remove_test_cgroups();
	if (make_cgroup(CG))
		return -1;
	cg_fd = open_cgroup(CG);
	if (cg_fd < 0)
		return -1;
	child = clone_into(cg_fd);
	if (child == 0) {
		cpu_set_t set;
		int i;

		if (cpu >= 0) {
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				_exit(3);
		}
		for (i = 0; i < threads; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, thread_exits, NULL) ||
			    pthread_join(t, NULL))
				_exit(2);
		}
		_exit(0);
	}
	if (child > 0 && waitpid(child, &status, 0) == child &&
	    WIFEXITED(status) && WEXITSTATUS(status) == 0)
		ret = wait_unpopulated(CG, READER_MS);
	close(cg_fd);
	return ret;
}

/* thread exits form batches, and every one is unlinked */
TEST(thread_storm_forms_batches)
{
	long long queued, unlinked, batches;

	unload_module();
	ASSERT_EQ(0, load_module_args("dead_batch=64 dead_max_delay_ms=1000"));
	ASSERT_EQ(0, write_str(DEAD_STATS, "0"));
	ASSERT_EQ(0, thread_storm(2000, -1));
	queued = stat_value(DEAD_STATS, "queued");
	unlinked = stat_value(DEAD_STATS, "unlinked");
	batches = stat_value(DEAD_STATS, "batches");
	TH_LOG("%lld queued, %lld unlinked in %lld batches", queued, unlinked, batches);
	/* the child's threads and itself, all unlinked (other exits may add) */
	EXPECT_LE(2001, unlinked);
	EXPECT_LE(unlinked, queued);
	/* at least 8 a batch on average */
	EXPECT_LT(batches * 8, unlinked);
	remove_test_cgroups();
	EXPECT_EQ(0, unload_module());
}

/*
 * Stock unlinks one task in the tail of the context switch that follows its
 * exit, and so may the module: a queue that fills goes to the kernel's flush
 * thread. The kernel counts, per cgroup_task_dead() call, the tasks unlinked
 * inside it (switch_unlink_max, CONFIG_CGROUP_DEBUG), not the module. The
 * threads exit on one CPU, so that its queue fills whatever the vCPU count.
 */
TEST(full_batches_leave_the_context_switch)
{
	long long size_flushes, most;

	unload_module();
	ASSERT_EQ(0, load_module_args("dead_batch=8 dead_max_delay_ms=1000"));
	ASSERT_EQ(0, write_str(DEAD_STATS, "0"));
	ASSERT_EQ(0, thread_storm(400, 0));
	size_flushes = stat_value(DEAD_STATS, "flush_size");
	most = stat_value(DEAD_STATS, "switch_unlink_max");
	if (most < 0) {
		remove_test_cgroups();
		unload_module();
		SKIP(return, "no switch_unlink_max: a kernel without CONFIG_CGROUP_DEBUG");
	}
	TH_LOG("%lld flushes of full queues; at most %lld unlinked in one switch",
	       size_flushes, most);
	/* queues did fill, 400 exits in batches of 8 */
	EXPECT_LT(0, size_flushes);
	EXPECT_GE(1, most);
	remove_test_cgroups();
	EXPECT_EQ(0, unload_module());
}

TEST(bad_parameters_refused)
{
	unload_module();
	EXPECT_EQ(-EINVAL, load_module_args("dead_batch=65"));
	EXPECT_EQ(-EINVAL, load_module_args("dead_batch=8 dead_max_delay_ms=0"));
	EXPECT_EQ(-EINVAL, load_module_args("dead_batch=8 dead_max_delay_ms=1001"));
	/* nothing registered */
	char buf[64];

	ASSERT_EQ(0, read_file(DEAD_STATS, buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, "impl: builtin\n", 14));
}

TEST_HARNESS_MAIN
