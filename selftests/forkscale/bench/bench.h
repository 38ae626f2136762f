/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The forkscale benchmark harness, with will-it-scale's semantics and output:
 * -t tasks (processes) each run the workload's loop and count operations in
 * shared memory; the parent prints "min: max: total:" per-task operations for
 * every second, "warmup" and "measurement" markers and, at the end,
 * "average:" operations per second over the measurement.
 *
 * Besides will-it-scale's lines it prints, for `make bench` to parse:
 *   result workload=W tasks=N seconds=S ops=X ops_per_sec=Y task_cpu_s=C
 *   lock class=C mode=M contentions=.. wait_us=.. acquisitions=.. hold_us=..
 *   stat file=F key=value
 *   lockhold-window (see bench_window())
 * The lock lines come from /proc/lock_stat (LOCK_STAT kernels) and the stat
 * lines from forkscale's debugfs counters (patched kernels); both are reset
 * when the measurement starts, so they cover the measured operations only.
 *
 * Options: -t tasks (default: online CPUs), -s measured seconds (default 5),
 * -w warmup seconds (default 1), -n operations per task (instead of -s: stop
 * after n, no warmup).
 */
#ifndef FORKSCALE_BENCH_H
#define FORKSCALE_BENCH_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_MAX_TASKS 256
#define LOCK_STAT "/proc/lock_stat"

/* The locks the fork and exit paths serialise on, as lockdep names them. */
static const char *const bench_lock_classes[] = {
	"css_set_lock", "tasklist_lock", "pidmap_lock", "css_set_clone_lock",
};

static const char *const bench_stat_files[] = {
	"/sys/kernel/debug/cgroup_clone/stats",
	"/sys/kernel/debug/pid_release/stats",
	"/sys/kernel/debug/cgroup_dead/stats",
};

struct bench_workload {
	const char *name;
	/* Once, in the parent, before any task starts; non-zero aborts. */
	int (*setup)(void);
	/* Per task: one operation; non-zero is an error that stops the run. */
	int (*op)(unsigned int task);
	void (*teardown)(void);
};

/* One cache line per task, so the counters do not bounce between CPUs. */
struct bench_slot {
	volatile unsigned long long ops;
	volatile unsigned int parked_epoch;
	volatile int failed;
	char pad[64 - sizeof(unsigned long long) - 2 * sizeof(int)];
};

/*
 * The parent pauses the tasks around the measurement window: it bumps epoch,
 * sets pause, and waits until every task has parked in that epoch. Counters
 * reset or read while all tasks are parked match the operations exactly.
 */
struct bench_shared {
	volatile unsigned int epoch;
	volatile int pause;
	volatile int stop;
	struct bench_slot slot[BENCH_MAX_TASKS];
};

/* Reaps @pid; 0 if it exited with @code, else -1 with errno set. */
static inline int bench_reap(pid_t pid, int code)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != code) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

static double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void bench_write(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, value, strlen(value)) < 0)
		fprintf(stderr, "bench: resetting %s: %s\n", path, strerror(errno));
	close(fd);
}

static void bench_reset_counters(void)
{
	size_t i;

	bench_write(LOCK_STAT, "0\n");
	for (i = 0; i < sizeof(bench_stat_files) / sizeof(bench_stat_files[0]); i++)
		bench_write(bench_stat_files[i], "0\n");
}

/*
 * A lock_stat row is "name:" or "name-W:"/"name-R:" (rwlocks used both ways),
 * then con-bounces, contentions, waittime min/max/total/avg, acq-bounces,
 * acquisitions, holdtime min/max/total/avg; times are in microseconds.
 */
static void bench_print_lock_stat(void)
{
	char line[512], name[64];
	double wmin, wmax, wtotal, wavg, hmin, hmax, htotal, havg;
	unsigned long long cb, con, ab, acq;
	FILE *f = fopen(LOCK_STAT, "r");
	size_t i;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *mode = "-";
		char *colon;

		if (sscanf(line, " %63s %llu %llu %lf %lf %lf %lf %llu %llu %lf %lf %lf %lf",
			   name, &cb, &con, &wmin, &wmax, &wtotal, &wavg, &ab, &acq,
			   &hmin, &hmax, &htotal, &havg) != 13)
			continue;
		colon = strrchr(name, ':');
		if (!colon || colon[1])
			continue;
		*colon = '\0';
		if (colon - name > 2 && colon[-2] == '-' &&
		    (colon[-1] == 'W' || colon[-1] == 'R')) {
			mode = colon[-1] == 'W' ? "W" : "R";
			colon[-2] = '\0';
		}
		for (i = 0; i < sizeof(bench_lock_classes) / sizeof(bench_lock_classes[0]); i++)
			if (!strcmp(name, bench_lock_classes[i]))
				printf("lock class=%s mode=%s contentions=%llu wait_us=%.2f acquisitions=%llu hold_us=%.2f\n",
				       name, mode, con, wtotal, acq, htotal);
	}
	fclose(f);
}

static void bench_print_stat_files(void)
{
	char line[128], key[64], value[64];
	size_t i;

	for (i = 0; i < sizeof(bench_stat_files) / sizeof(bench_stat_files[0]); i++) {
		const char *file = bench_stat_files[i];
		const char *name = strrchr(file, '/');
		FILE *f = fopen(file, "r");
		char dir[64];

		if (!f)
			continue;
		/* ".../cgroup_clone/stats" is reported as "cgroup_clone" */
		snprintf(dir, sizeof(dir), "%.*s", (int)(name - file), file);
		name = strrchr(dir, '/') + 1;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%63[^:]: %63s", key, value) == 2)
				printf("stat file=%s %s=%s\n", name, key, value);
		fclose(f);
	}
}

static void bench_task(const struct bench_workload *w, struct bench_shared *sh,
		       unsigned int task, unsigned long long limit)
{
	struct bench_slot *slot = &sh->slot[task];

	while (!sh->stop) {
		if (sh->pause || (limit && slot->ops >= limit)) {
			slot->parked_epoch = sh->epoch;
			usleep(100);
			continue;
		}
		if (w->op(task)) {
			slot->failed = errno ? errno : EIO;
			break;
		}
		slot->ops++;
	}
	_exit(0);
}

/*
 * CPU time the tasks have used so far, in seconds. Unlike the elapsed time it
 * leaves out idle time: under PATHLEN=1's icount a workload that sleeps (a
 * migration waiting for a grace period) would otherwise count the idle guest's
 * clock jumps. It covers each task and its threads, not children it forks.
 */
static double bench_task_cpu(const pid_t *pids, unsigned int tasks)
{
	struct timespec ts;
	double sum = 0;
	clockid_t clock;
	unsigned int i;

	for (i = 0; i < tasks; i++) {
		if (clock_getcpuclockid(pids[i], &clock) || clock_gettime(clock, &ts))
			return -1;
		sum += ts.tv_sec + ts.tv_nsec / 1e9;
	}
	return sum;
}

/* Stop the tasks between operations; returns non-zero if a task failed. */
static int bench_pause(struct bench_shared *sh, unsigned int tasks)
{
	unsigned int i;

	sh->epoch++;
	__sync_synchronize();
	sh->pause = 1;
	for (i = 0; i < tasks; i++) {
		while (sh->slot[i].parked_epoch != sh->epoch) {
			if (sh->slot[i].failed || sh->stop)
				return 1;
			usleep(100);
		}
	}
	return 0;
}

static unsigned long long bench_sum(struct bench_shared *sh, unsigned int tasks,
				    unsigned long long *last, int print)
{
	unsigned long long min = ~0ULL, max = 0, total = 0, sum = 0;
	unsigned int i;

	for (i = 0; i < tasks; i++) {
		unsigned long long now = sh->slot[i].ops, delta = now - last[i];

		last[i] = now;
		min = delta < min ? delta : min;
		max = delta > max ? delta : max;
		total += delta;
		sum += now;
	}
	if (print)
		printf("min:%llu max:%llu total:%llu\n", min, max, total);
	return sum;
}

static int bench_failed(struct bench_shared *sh, unsigned int tasks)
{
	unsigned int i;

	for (i = 0; i < tasks; i++)
		if (sh->slot[i].failed) {
			fprintf(stderr, "bench: task %u failed: %s\n", i,
				strerror(sh->slot[i].failed));
			return 1;
		}
	return 0;
}

static int bench_all_done(struct bench_shared *sh, unsigned int tasks,
			  unsigned long long limit)
{
	unsigned int i;

	for (i = 0; i < tasks; i++)
		if (sh->slot[i].ops < limit && !sh->slot[i].failed)
			return 0;
	return 1;
}

/* Whether FORKSCALE_LOCKHOLD_WINDOWS=1 asks for the plugins' marks. */
static int bench_marks(void)
{
	static int on = -1;

	if (on < 0) {
		const char *v = getenv("FORKSCALE_LOCKHOLD_WINDOWS");

		on = v && !strcmp(v, "1");
	}
	return on;
}

/*
 * With FORKSCALE_LOCKHOLD_WINDOWS=1 in the environment, marks the measurement
 * for the bench's plugins (bench/lockhold, bench/c2c): "xchg %bx,%bx"
 * begins a window and "xchg %cx,%cx" ends it, and the "lockhold-window" line
 * lets qemu/guest/run-bench number the windows as the plugins do.
 */
static void bench_window(int begin)
{
	if (!bench_marks())
		return;
#if defined(__x86_64__) || defined(__i386__)
	if (begin) {
		__asm__ volatile("xchg %%bx, %%bx" ::: "memory");
		printf("lockhold-window\n");
	} else {
		__asm__ volatile("xchg %%cx, %%cx" ::: "memory");
	}
#endif
}

/*
 * "xchg %dx,%dx", before the warm-up: bench/c2c started with start=mark
 * follows memory only from here, so that the boot runs at TCG's own speed
 * and the warm-up still gives the lines their state before the window.
 */
static void bench_arm(void)
{
	if (!bench_marks())
		return;
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("xchg %%dx, %%dx" ::: "memory");
#endif
}

static void bench_usage(const char *name)
{
	fprintf(stderr, "usage: %s [-t tasks] [-s seconds] [-w warmup-seconds] [-n ops-per-task]\n",
		name);
	exit(2);
}

static int bench_main(int argc, char **argv, const struct bench_workload *w)
{
	unsigned long long last[BENCH_MAX_TASKS] = { 0 }, start_ops, end_ops, limit = 0;
	long tasks = sysconf(_SC_NPROCESSORS_ONLN), seconds = 5, warmup = 1, i;
	pid_t pids[BENCH_MAX_TASKS];
	struct bench_shared *sh;
	double start, elapsed, cpu_start, cpu;
	int opt, status, bad = 0;

	while ((opt = getopt(argc, argv, "t:s:w:n:")) != -1) {
		char *end;
		long v = strtol(optarg, &end, 10);

		if (*end || v < 0)
			bench_usage(argv[0]);
		switch (opt) {
		case 't': tasks = v; break;
		case 's': seconds = v; break;
		case 'w': warmup = v; break;
		case 'n': limit = v; break;
		default: bench_usage(argv[0]);
		}
	}
	if (tasks < 1 || tasks > BENCH_MAX_TASKS || (!limit && seconds < 1))
		bench_usage(argv[0]);
	if (limit)
		warmup = 0;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("bench: mmap");
		return 1;
	}
	sh->pause = 1;
	if (w->setup && w->setup()) {
		fprintf(stderr, "bench: %s: setup failed\n", w->name);
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("testcase:%s\n", w->name);

	for (i = 0; i < tasks; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("bench: fork");
			sh->stop = 1;
			tasks = i;
			bad = 1;
			break;
		}
		if (pids[i] == 0)
			bench_task(w, sh, i, limit);
	}

	bench_arm();
	if (!bad && warmup) {
		sh->pause = 0;
		printf("warmup\n");
		for (i = 0; i < warmup && !bench_failed(sh, tasks); i++) {
			sleep(1);
			bench_sum(sh, tasks, last, 1);
		}
	}
	printf("measurement\n");
	bad |= bench_pause(sh, tasks);
	bench_reset_counters();
	bench_window(1);
	start_ops = bench_sum(sh, tasks, last, 0);
	cpu_start = bench_task_cpu(pids, tasks);
	start = bench_now();
	sh->pause = 0;
	if (limit) {
		while (!bad && !bench_all_done(sh, tasks, limit))
			usleep(1000);
	} else {
		for (i = 0; !bad && i < seconds && !bench_failed(sh, tasks); i++) {
			sleep(1);
			bench_sum(sh, tasks, last, 1);
		}
	}
	bad |= bench_pause(sh, tasks);
	bench_window(0);
	elapsed = bench_now() - start;
	cpu = bench_task_cpu(pids, tasks) - cpu_start;
	end_ops = bench_sum(sh, tasks, last, 0);
	/* Counters first: the tasks' exits below are not measured operations. */
	bench_print_lock_stat();
	bench_print_stat_files();

	sh->stop = 1;
	for (i = 0; i < tasks; i++)
		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad = 1;
	bad |= bench_failed(sh, tasks);
	if (w->teardown)
		w->teardown();
	if (bad) {
		fprintf(stderr, "bench: %s: a task failed\n", w->name);
		return 1;
	}
	printf("average:%llu\n", (unsigned long long)((end_ops - start_ops) / elapsed));
	if (cpu_start < 0 || cpu < 0) {
		fprintf(stderr, "bench: %s: cannot read the tasks' CPU clocks\n", w->name);
		return 1;
	}
	printf("result workload=%s tasks=%ld seconds=%.3f ops=%llu ops_per_sec=%.1f task_cpu_s=%.6f\n",
	       w->name, tasks, elapsed, end_ops - start_ops, (end_ops - start_ops) / elapsed, cpu);
	return 0;
}

#endif /* FORKSCALE_BENCH_H */
