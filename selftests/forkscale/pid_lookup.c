// SPDX-License-Identifier: GPL-2.0
/*
 * What userspace gets when it looks up a pid number that was just reaped.
 *
 * Batching keeps a reaped pid in its namespace's idr until the batch is
 * flushed, so a lookup by number finds a struct pid without tasks where stock
 * finds nothing. This prints, for a reaped child, a reaped thread, a reaped
 * process-group leader and reaped tasks of a nested pid namespace (by their
 * numbers inside and outside), the errno of every syscall that resolves a pid number,
 * one "lookup <case> <syscall> <result>" line each. It asserts nothing itself:
 * pid_lookup.sh runs it without the module and under each batching setting and
 * requires the lines to be identical.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <linux/sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static void show(const char *what, const char *call, long ret)
{
	if (ret < 0)
		printf("lookup %s %s %s\n", what, call, strerrorname_np(errno) ?: "?");
	else
		printf("lookup %s %s ok\n", what, call);
}

/*
 * Pids the module holds in batches right now ("pending:" of the stats file), as
 * a "#" line that the driver does not compare: it shows whether the lookups
 * below met a queued pid at all.
 */
static void show_pending(const char *what)
{
	char line[128];
	FILE *f = fopen("/sys/kernel/debug/pid_release/stats", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "pending: ", 9))
			printf("# %s: %s", what, line);
	if (f)
		fclose(f);
}

/* Every lookup of @pid as a process, a thread of @tgid, a group and a session. */
static void lookups(const char *what, pid_t pid, pid_t tgid)
{
	struct sched_param sp;
	cpu_set_t set;
	char path[64];
	siginfo_t si;
	int fd;

	show_pending(what);
	show(what, "kill", kill(pid, 0));
	show(what, "tgkill", syscall(SYS_tgkill, tgid, pid, 0));
	show(what, "tkill", syscall(SYS_tkill, pid, 0));
	fd = syscall(SYS_pidfd_open, pid, 0);
	show(what, "pidfd_open", fd);
	if (fd >= 0)
		close(fd);
	fd = syscall(SYS_pidfd_open, pid, PIDFD_THREAD);
	show(what, "pidfd_open_thread", fd);
	if (fd >= 0)
		close(fd);
	show(what, "getpgid", getpgid(pid));
	show(what, "getsid", getsid(pid));
	show(what, "sched_getscheduler", sched_getscheduler(pid));
	show(what, "sched_getparam", sched_getparam(pid, &sp));
	show(what, "sched_getaffinity", sched_getaffinity(pid, sizeof(set), &set));
	errno = 0;
	show(what, "getpriority_process", getpriority(PRIO_PROCESS, pid) == -1 && errno ? -1 : 0);
	errno = 0;
	show(what, "getpriority_pgrp", getpriority(PRIO_PGRP, pid) == -1 && errno ? -1 : 0);
	show(what, "setpgid_join", setpgid(0, pid));
	show(what, "prlimit", prlimit(pid, RLIMIT_NOFILE, NULL, NULL));
	show(what, "ioprio_get", syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, pid));
	show(what, "waitid_pid", waitid(P_PID, pid, &si, WEXITED | WNOHANG));
	show(what, "waitid_pgid", waitid(P_PGID, pid, &si, WEXITED | WNOHANG));
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	show(what, "proc_open", fd);
	if (fd >= 0)
		close(fd);
	show_pending(what);
}

/* TIOCSPGRP on a pty whose session we lead, naming the reaped group @pgrp. */
static void tty_lookup(const char *what, pid_t pgrp)
{
	pid_t p = fork();
	int status;

	if (p == 0) {
		int m, s;

		setsid();
		m = posix_openpt(O_RDWR | O_NOCTTY);
		if (m < 0 || grantpt(m) || unlockpt(m))
			_exit(2);
		s = open(ptsname(m), O_RDWR);
		if (s < 0 || ioctl(s, TIOCSCTTY, 0))
			_exit(3);
		show(what, "tiocspgrp", ioctl(s, TIOCSPGRP, &pgrp));
		fflush(stdout);
		_exit(0);
	}
	waitpid(p, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("lookup %s tiocspgrp setup-failed-%d\n", what, WEXITSTATUS(status));
}

/*
 * A reaped child of a nested pid namespace's init, looked up by its number
 * inside the namespace and by its number outside, while the namespace is
 * still alive (its teardown would free every queued pid of it at once).
 */
static void nested_lookups(void)
{
	int outer[2], ready[2], done[2];
	pid_t p, c_outer = -1;
	char byte = 0;

	if (pipe(outer) || pipe(ready) || pipe(done)) {
		printf("lookup nested pipe %s\n", strerrorname_np(errno));
		return;
	}
	p = fork();
	if (p == 0) {
		pid_t init;

		if (unshare(CLONE_NEWPID)) {
			printf("lookup nested unshare %s\n", strerrorname_np(errno));
			_exit(1);
		}
		init = fork();
		if (init == 0) {
			pid_t c = fork();

			if (c == 0) {
				/* /proc is still the outer one: "self" is the outer number */
				char link[32] = "";
				pid_t me;

				setpgid(0, 0);
				if (readlink("/proc/self", link, sizeof(link) - 1) < 0)
					_exit(1);
				me = atoi(link);
				_exit(write(outer[1], &me, sizeof(me)) == sizeof(me) ? 0 : 1);
			}
			waitpid(c, NULL, 0);
			/* a /proc of this namespace, for the /proc lookup */
			if (unshare(CLONE_NEWNS) ||
			    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
			    mount("proc", "/proc", "proc", 0, NULL))
				printf("lookup nested_inner mount_proc %s\n",
				       strerrorname_np(errno));
			lookups("nested_inner", c, c);
			/* keep the namespace alive for the outer lookups */
			if (write(ready[1], &byte, 1) != 1 || read(done[0], &byte, 1) != 1)
				_exit(1);
			_exit(0);
		}
		waitpid(init, NULL, 0);
		_exit(0);
	}
	if (read(outer[0], &c_outer, sizeof(c_outer)) != sizeof(c_outer) ||
	    read(ready[0], &byte, 1) != 1)
		printf("lookup nested_outer setup-failed\n");
	else
		lookups("nested_outer", c_outer, c_outer);
	if (write(done[1], &byte, 1) != 1)
		printf("lookup nested_outer release-failed\n");
	waitpid(p, NULL, 0);
	close(outer[0]);
	close(outer[1]);
	close(ready[0]);
	close(ready[1]);
	close(done[0]);
	close(done[1]);
}

static void *thread_fn(void *arg)
{
	*(pid_t *)arg = gettid();
	return NULL;
}

int main(void)
{
	pthread_t t;
	pid_t pid, tid;

	setvbuf(stdout, NULL, _IOLBF, 0);

	/* A reaped child, which was its own process group's leader. */
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	lookups("child", pid, pid);
	tty_lookup("child", pid);

	/* A joined thread of this process. */
	pthread_create(&t, NULL, thread_fn, &tid);
	pthread_join(t, NULL);
	/*
	 * The join returns before the thread is reaped; its /proc entry goes
	 * when it is, so wait for that (up to a second) before the lookups.
	 */
	for (int i = 0; i < 1000; i++) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/task/%d", getpid(), tid);
		fd = open(path, O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			break;
		close(fd);
		usleep(1000);
	}
	lookups("thread", tid, getpid());

	nested_lookups();

	/*
	 * A pid the caller restores by number, as CRIU does: clone3() with
	 * set_tid, which needs no CONFIG_CHECKPOINT_RESTORE.
	 */
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	{
		struct clone_args args = {
			.exit_signal = SIGCHLD,
			.set_tid = (uint64_t)(uintptr_t)&pid,
			.set_tid_size = 1,
		};
		pid_t again = syscall(SYS_clone3, &args, sizeof(args));

		if (again == 0)
			_exit(0);
		if (again < 0) {
			printf("lookup restore set_tid %s\n", strerrorname_np(errno));
		} else {
			waitpid(again, NULL, 0);
			printf("lookup restore set_tid_gets_same_pid %s\n",
			       again == pid ? "yes" : "no");
		}
	}

	/*
	 * The same through ns_last_pid, then fork: the next fork gets the
	 * reaped number back, even while it waits in a batch, because writing
	 * ns_last_pid flushes. The sysctl needs CONFIG_CHECKPOINT_RESTORE,
	 * which base.config enables.
	 */
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	{
		char buf[32];
		int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
		pid_t again;

		snprintf(buf, sizeof(buf), "%d", pid - 1);
		if (fd < 0 || write(fd, buf, strlen(buf)) < 0) {
			printf("lookup restore ns_last_pid %s\n", strerrorname_np(errno));
		} else {
			again = fork();
			if (again == 0)
				_exit(0);
			waitpid(again, NULL, 0);
			printf("lookup restore fork_gets_same_pid %s\n", again == pid ? "yes" : "no");
		}
		if (fd >= 0)
			close(fd);
	}
	return 0;
}
