/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers of the forkscale guest tests: cgroups, the module, the stats files. */
#ifndef FORKSCALE_UTIL_H
#define FORKSCALE_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CGROOT "/sys/fs/cgroup"
#define SYSCTL "/proc/sys/kernel/cgroup_clone_read"
#define STATS "/sys/kernel/debug/cgroup_clone/stats"
/* The series' debug defect switch (measure/0010, tests/twins.txt). */
#define DEFECT "/sys/kernel/debug/cgroup_clone_twin/defect"
#define MODULE_KO "/lib/modules/forkscale.ko"
#define CHILDREN 300
#define PID_MAX "/proc/sys/kernel/pid_max"
#define PID_STATS "/sys/kernel/debug/pid_release/stats"
/*
 * A pid_max low enough that the tests can fill it under TCG: about 330 free
 * numbers above RESERVED_PIDS, each fill some 20 s with the debug kernel.
 */
#define TEST_PID_MAX "640"
#define MAX_KIDS 1100

static inline int write_str(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = write(fd, value, strlen(value));
	close(fd);
	return len < 0 ? -errno : 0;
}

static inline int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len < 0)
		return -errno;
	buf[len] = '\0';
	return 0;
}

/* The series' debug delay points (measure/0005 and measure/0006). */
#define KW_DIR "/sys/kernel/debug/cgroup_kill_window/"

static inline int kw_set(const char *file, long long value)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), KW_DIR "%s", file);
	snprintf(buf, sizeof(buf), "%lld", value);
	return write_str(path, buf);
}

/* Turns every delay point off and clears its settings. */
static inline void kw_off(void)
{
	kw_set("enabled", 0);
	kw_set("walk_delay_ms", 0);
	kw_set("link_delay_ms", 0);
	kw_set("read_delay_us", 0);
	kw_set("tgid", 0);
}

static inline int move_pid(const char *cgroup, pid_t pid)
{
	char path[256], value[32];

	snprintf(path, sizeof(path), CGROOT "/%s/cgroup.procs", cgroup);
	snprintf(value, sizeof(value), "%d", pid);
	return write_str(path, value);
}

static inline int make_cgroup(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), CGROOT "/%s", name);
	rmdir(path);
	return mkdir(path, 0755) ? -errno : 0;
}

static inline void remove_cgroup(const char *name)
{
	char path[256];
	int i;

	snprintf(path, sizeof(path), CGROOT "/%s/cgroup.kill", name);
	write_str(path, "1");
	snprintf(path, sizeof(path), CGROOT "/%s", name);
	for (i = 0; i < 100 && rmdir(path) && errno == EBUSY; i++)
		usleep(20000);
}

static inline int open_cgroup(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), CGROOT "/%s", name);
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* 'A', 'B' or 'C' for the test cgroups, 'R' for the root, 'X' otherwise. */
static inline char cgroup_letter(const char *proc_file)
{
	char buf[256];

	if (read_file(proc_file, buf, sizeof(buf)))
		return 'X';
	if (!strcmp(buf, "0::/\n"))
		return 'R';
	if (strncmp(buf, "0::/forkscale_cr_", 17) || strlen(buf) != 19)
		return 'X';
	return buf[17] - 'a' + 'A';
}

static inline pid_t clone_into(int cgroup_fd)
{
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)cgroup_fd,
	};

	return syscall(__NR_clone3, &args, sizeof(args));
}

static inline void __attribute__((noreturn)) fork_forever(void)
{
	for (;;) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
}

/* Reaps every child that has exited, including adopted orphans. */
static inline void reap_all(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static inline int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : dflt;
}

/* Waits up to @ms for "populated 0" in the cgroup's cgroup.events. */
static inline int wait_unpopulated(const char *name, int ms)
{
	struct timespec t0, t;
	char path[256], buf[256];
	int fd, ret = -ETIMEDOUT;

	snprintf(path, sizeof(path), CGROOT "/%s/cgroup.events", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLPRI };
		ssize_t len = pread(fd, buf, sizeof(buf) - 1, 0);
		long waited;

		if (len < 0)
			break;
		buf[len] = '\0';
		if (strstr(buf, "populated 0\n")) {
			ret = 0;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		waited = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (waited >= ms)
			break;
		poll(&p, 1, ms - waited < 20 ? ms - waited : 20);
	}
	close(fd);
	return ret;
}

/* The value of "key: value" in a stats file, or -1. */
static inline long long stat_value(const char *file, const char *key)
{
	char buf[1024], want[64], *p;

	if (read_file(file, buf, sizeof(buf)))
		return -1;
	snprintf(want, sizeof(want), "\n%s: ", key);
	p = strstr(buf, want);
	return p ? atoll(p + strlen(want)) : -1;
}

/* The value of "key: value" in the clone-read stats file, or -1. */
static inline long long stats_value(const char *key)
{
	return stat_value(STATS, key);
}

static inline int stats_impl_is(const char *impl)
{
	char buf[512], want[64];

	if (read_file(STATS, buf, sizeof(buf)))
		return -errno;
	snprintf(want, sizeof(want), "impl: %s\n", impl);
	return strncmp(buf, want, strlen(want)) ? -ENOENT : 0;
}

/* The stats file on one line, for the log. */
static inline const char *stats_line(void)
{
	static char buf[512];
	char *p;

	if (read_file(STATS, buf, sizeof(buf)))
		return "no stats";
	for (p = buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
	return buf;
}

/*
 * Polls the stats file until the live css_sets are back at @baseline: 0 when
 * they are, else the difference at the end of @ms.
 */
static inline int wait_css_sets(long long baseline, int ms)
{
	long long now = -1;
	int i;

	for (i = 0; i < ms / 10; i++) {
		now = stats_value("css_sets");
		if (now == baseline)
			return 0;
		usleep(10000);
	}
	fprintf(stderr, "# css_sets %lld, baseline %lld\n", now, baseline);
	/* how many more (a leak) or fewer there are; INT_MIN if unreadable */
	return now < 0 || baseline < 0 ? INT_MIN : (int)(now - baseline);
}

/* finit_module() of the forkscale module with parameters @args: 0 or -errno. */
static inline int load_module_args(const char *args)
{
	int fd = open(MODULE_KO, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(__NR_finit_module, fd, args, 0) ? -errno : 0;
	close(fd);
	return ret;
}

static inline int load_module(void)
{
	return load_module_args("");
}

static inline int unload_module(void)
{
	return syscall(__NR_delete_module, "forkscale", O_NONBLOCK) ? -errno : 0;
}

/* Whether @impl names the module: "module" (its seqcount read) or "module-pinned". */
static inline int impl_is_module(const char *impl)
{
	return !strncmp(impl, "module", 6);
}

/*
 * The read the kernel command line chose (cgroup_clone_read=), which the
 * guest's init passes on as FORKSCALE_BOOT_READ in a boot that must patch no
 * kernel text (the multi-threaded TCG guest): the tests use that read and
 * switch nothing, as switching the sysctl rewrites a static_call. "module"
 * there is the module, loaded before the test (module_parallel.sh).
 */
static inline const char *boot_read(void)
{
	const char *read = getenv("FORKSCALE_BOOT_READ");

	return read && *read ? read : NULL;
}

/* The name the clone-read stats file shows while @impl is in use. */
static inline const char *impl_stats_name(const char *impl)
{
	if (!strcmp(impl, "module"))
		return "forkscale";
	if (!strcmp(impl, "module-pinned"))
		return "forkscale_pinned";
	return impl;
}

/*
 * Makes forks use @impl: a built-in of the sysctl, or the module's read. In a
 * boot whose read is fixed, @impl must be that read and the sysctl must show it.
 */
static inline int select_impl(const char *impl)
{
	char now[32];

	if (boot_read()) {
		if (strcmp(impl, boot_read()))
			return -1;
		/* loaded before the test (module_parallel.sh): forks must use it */
		if (impl_is_module(impl))
			return stats_impl_is(impl_stats_name(impl));
		if (read_file(SYSCTL, now, sizeof(now)))
			return -1;
		now[strcspn(now, "\n")] = '\0';
		return strcmp(now, impl) ? -1 : 0;
	}
	if (!impl_is_module(impl))
		return write_str(SYSCTL, impl);
	if (write_str(SYSCTL, "locked"))
		return -1;
	return load_module_args(strcmp(impl, "module-pinned") ? "" : "clone_read=1");
}

static inline void restore_impl(const char *impl)
{
	if (boot_read())
		return;
	if (impl_is_module(impl))
		unload_module();
	write_str(SYSCTL, "locked");
}

/* Forks sleeping children until fork fails; returns how many. */
static inline int fill_pids(pid_t *kids, int *err)
{
	int n = 0;

	*err = 0;
	while (n < MAX_KIDS) {
		pid_t p = fork();

		if (p < 0) {
			*err = errno;
			break;
		}
		if (p == 0) {
			pause();
			_exit(0);
		}
		kids[n++] = p;
	}
	return n;
}

/*
 * Kills and reaps kids[from..to). A slot holding the caller's own pid marks a
 * fork that failed: skipped, or a test that saw a fork fail would kill itself
 * and leave every pid taken.
 */
static inline void kill_kids(pid_t *kids, int from, int to)
{
	pid_t self = getpid();
	int i;

	for (i = from; i < to; i++)
		if (kids[i] != self)
			kill(kids[i], SIGKILL);
	for (i = from; i < to; i++)
		if (kids[i] != self)
			waitpid(kids[i], NULL, 0);
}

/*
 * Counts the lines in the kernel log that start with @prefix. Returns the
 * count, or -1 if the log cannot be read.
 */
static inline int log_lines(const char *prefix)
{
	int size = klogctl(10, NULL, 0), len, n = 0;
	char *buf, *at;

	if (size <= 0)
		return -1;
	buf = malloc(size + 1);
	if (!buf)
		return -1;
	len = klogctl(3, buf, size);
	if (len < 0) {
		free(buf);
		return -1;
	}
	buf[len] = '\0';
	for (at = strstr(buf, prefix); at; at = strstr(at + 1, prefix))
		n++;
	free(buf);
	return n;
}

/*
 * Counts the "forkscale: pid release:" and "forkscale: exit unlink:" lines in
 * the kernel log: the module prints one only when an unload found its books
 * unbalanced (a pid or a dead task queued but not freed or unlinked, or one
 * still pending); a clean unload prints nothing. Returns the count, or -1 if
 * the log cannot be read. The log holds what earlier tests of the boot
 * printed: a test compares it with the count it began with.
 */
static inline int unload_imbalances(void)
{
	int pids = log_lines("forkscale: pid release: ");
	int tasks = log_lines("forkscale: exit unlink: ");

	return pids < 0 || tasks < 0 ? -1 : pids + tasks;
}

#endif
