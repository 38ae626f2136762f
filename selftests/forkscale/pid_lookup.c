// SPDX-License-Identifier: GPL-2.0
/*
 * What userspace gets when it looks up a pid number that was just reaped,
 * checked against what stock 7.3 gives.
 *
 * Batching keeps a reaped pid's number allocated until its batch is freed;
 * the number must still be gone for every lookup, as on stock. For a reaped
 * child, a reaped thread, a reaped process-group leader and reaped tasks of a
 * nested pid namespace (by their numbers inside and outside), this makes every
 * call of Documentation/design.rst's audit table that resolves a pid number,
 * and prints one "lookup <case> <call> <result>" line each. Each result is
 * compared with stock 7.3's, written in the table below (make conformance
 * prints the same lines on a boot of stock 7.3, and compares them); a
 * difference is a "# ... where stock 7.3 gives ..." line. A step that could
 * not be set up is a "setup-failed" line. Either makes the exit status 1.
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
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "forkscale_util.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
/* a process's CPU clock, as glibc's clock_getcpuclockid() makes it */
#define PROCESS_CPUCLOCK(pid) ((~(clockid_t)(pid) << 3) | 2)

/*
 * Stock 7.3's answer for a just-reaped number, for every call: the number is
 * in no idr, so each lookup finds nothing. The row each comes from in the
 * audit is named by the call.
 */
static const struct {
	const char *call;
	const char *stock;
} stock[] = {
	{ "kill", "ESRCH" },
	{ "kill_pgrp", "ESRCH" },
	{ "tgkill", "ESRCH" },
	{ "tkill", "ESRCH" },
	{ "rt_sigqueueinfo", "ESRCH" },
	{ "pidfd_open", "ESRCH" },
	{ "pidfd_open_thread", "ESRCH" },
	{ "getpgid", "ESRCH" },
	{ "getsid", "ESRCH" },
	{ "setpgid_join", "EPERM" },
	{ "sched_getscheduler", "ESRCH" },
	{ "sched_getparam", "ESRCH" },
	{ "sched_getaffinity", "ESRCH" },
	{ "getpriority_process", "ESRCH" },
	{ "getpriority_pgrp", "ESRCH" },
	{ "setpriority_pgrp", "ESRCH" },
	{ "prlimit", "ESRCH" },
	{ "capget", "ESRCH" },
	{ "kcmp", "ESRCH" },
	{ "get_robust_list", "ESRCH" },
	{ "ptrace_attach", "ESRCH" },
	{ "waitid_pid", "ECHILD" },
	{ "waitid_pgid", "ECHILD" },
	{ "proc_open", "ENOENT" },
	{ "proc_listed", "no" },
	{ "clock_gettime_cpu", "EINVAL" },
	{ "timer_create_thread_id", "EINVAL" },
	{ "cgroup_procs_write", "ESRCH" },
	{ "fcntl_setown", "ESRCH" },
	{ "fcntl_setown_pgrp", "ESRCH" },
	{ "fcntl_setown_ex_tid", "ESRCH" },
	{ "fcntl_setown_ex_pid", "ESRCH" },
	{ "fcntl_setown_ex_pgrp", "ESRCH" },
	{ "fiosetown", "ESRCH" },
	{ "siocspgrp", "ESRCH" },
	{ "scm_credentials", "ESRCH" },
	{ "tiocspgrp", "ESRCH" },
	{ "cad_pid_write", "ESRCH" },
	{ "proc_locks_lists_its_flock", "no" },
	{ "pidfs_open_by_handle", "ESTALE" },
	{ "set_tid_gets_same_pid", "yes" },
	{ "fork_gets_same_pid", "yes" },
};

static int failures;

static const char *stock_answer(const char *call)
{
	for (size_t i = 0; i < sizeof(stock) / sizeof(stock[0]); i++)
		if (!strcmp(stock[i].call, call))
			return stock[i].stock;
	return NULL;
}

/* One line, and a "#" line if it is not stock's answer. */
static void answer(const char *what, const char *call, const char *got)
{
	const char *want = stock_answer(call);

	printf("lookup %s %s %s\n", what, call, got);
	if (!want || strcmp(got, want)) {
		printf("# lookup %s %s: %s where stock 7.3 gives %s\n", what, call,
		       got, want ?: "(no entry in pid_lookup.c's table)");
		failures++;
	}
}

static void show(const char *what, const char *call, long ret)
{
	answer(what, call, ret < 0 ? strerrorname_np(errno) ?: "?" : "ok");
}

static void setup_failed(const char *what, const char *step)
{
	printf("lookup %s %s setup-failed %s\n", what, step,
	       strerrorname_np(errno) ?: "?");
	failures++;
}

/* The module's counters, from its stats file; all -1 without the module. */
struct queue_snapshot {
	long long queued, freed;
};

static struct queue_snapshot snapshot(void)
{
	return (struct queue_snapshot){
		.queued = stat_value(PID_STATS, "queued"),
		.freed = stat_value(PID_STATS, "freed"),
	};
}

/*
 * Whether the case's pid waited in a batch throughout its lookups, as a "#"
 * line that no comparison reads (pid_lookup.sh checks it for one setting):
 * @before was taken before the case's task was reaped. If pids were handed to
 * the module since, and none was freed, the case's pid is still queued.
 */
static void report_queued(const char *what, struct queue_snapshot before)
{
	struct queue_snapshot after = snapshot();

	if (before.queued < 0 || after.queued < 0)
		return;
	printf("# %s: its pid stayed queued: %s (queued +%lld, freed +%lld)\n", what,
	       after.queued > before.queued && after.freed == before.freed ? "yes" : "no",
	       after.queued - before.queued, after.freed - before.freed);
}

/* Is @pid a directory name in this /proc (readdir goes through find_ge_pid())? */
static const char *proc_listed(pid_t pid)
{
	char name[16], buf[4096];
	int fd = open("/proc", O_RDONLY | O_DIRECTORY);
	long n;

	if (fd < 0)
		return "setup-failed";
	snprintf(name, sizeof(name), "%d", pid);
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			/* struct linux_dirent64: ino, off, reclen, type, name */
			unsigned short reclen = *(unsigned short *)(buf + off + 16);

			if (!strcmp(buf + off + 19, name)) {
				close(fd);
				return "yes";
			}
			off += reclen;
		}
	}
	close(fd);
	return n < 0 ? "setup-failed" : "no";
}

/* fcntl() and ioctl() owners set on a socket, naming @pid or its group. */
static void owner_lookups(const char *what, pid_t pid)
{
	struct f_owner_ex ex;
	int sv[2], arg;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		setup_failed(what, "socketpair");
		return;
	}
	show(what, "fcntl_setown", fcntl(sv[0], F_SETOWN, pid));
	show(what, "fcntl_setown_pgrp", fcntl(sv[0], F_SETOWN, -pid));
	ex.type = F_OWNER_TID;
	ex.pid = pid;
	show(what, "fcntl_setown_ex_tid", fcntl(sv[0], F_SETOWN_EX, &ex));
	ex.type = F_OWNER_PID;
	show(what, "fcntl_setown_ex_pid", fcntl(sv[0], F_SETOWN_EX, &ex));
	ex.type = F_OWNER_PGRP;
	show(what, "fcntl_setown_ex_pgrp", fcntl(sv[0], F_SETOWN_EX, &ex));
	arg = pid;
	show(what, "fiosetown", ioctl(sv[0], FIOSETOWN, &arg));
	arg = -pid;
	show(what, "siocspgrp", ioctl(sv[0], SIOCSPGRP, &arg));
	close(sv[0]);
	close(sv[1]);
}

/* SCM_CREDENTIALS naming @pid, which root may claim for another process. */
static void scm_lookup(const char *what, pid_t pid)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} u;
	struct ucred cred = { .pid = pid, .uid = getuid(), .gid = getgid() };
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)) {
		setup_failed(what, "socketpair");
		return;
	}
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_CREDENTIALS;
	c->cmsg_len = CMSG_LEN(sizeof(cred));
	memcpy(CMSG_DATA(c), &cred, sizeof(cred));
	show(what, "scm_credentials", sendmsg(sv[0], &msg, 0));
	close(sv[0]);
	close(sv[1]);
}

/* Every lookup of @pid as a process, a thread of @tgid, a group and a session. */
static void lookups(const char *what, pid_t pid, pid_t tgid, struct queue_snapshot before)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID };
	struct __user_cap_header {
		uint32_t version;
		int pid;
	} caphdr = { 0x20080522, pid };
	uint32_t capdata[6];
	struct sched_param sp;
	siginfo_t si = { .si_code = SI_QUEUE };
	struct timespec ts;
	cpu_set_t set;
	char path[64];
	void *head;
	size_t len;
	timer_t timer;
	int fd;

	show(what, "kill", kill(pid, 0));
	show(what, "kill_pgrp", kill(-pid, 0));
	show(what, "tgkill", syscall(SYS_tgkill, tgid, pid, 0));
	show(what, "tkill", syscall(SYS_tkill, pid, 0));
	si.si_pid = getpid();
	si.si_uid = getuid();
	show(what, "rt_sigqueueinfo", syscall(SYS_rt_sigqueueinfo, pid, 0, &si));
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
	show(what, "setpgid_join", setpgid(0, pid));
	show(what, "sched_getscheduler", sched_getscheduler(pid));
	show(what, "sched_getparam", sched_getparam(pid, &sp));
	show(what, "sched_getaffinity", sched_getaffinity(pid, sizeof(set), &set));
	errno = 0;
	show(what, "getpriority_process", getpriority(PRIO_PROCESS, pid) == -1 && errno ? -1 : 0);
	errno = 0;
	show(what, "getpriority_pgrp", getpriority(PRIO_PGRP, pid) == -1 && errno ? -1 : 0);
	show(what, "setpriority_pgrp", setpriority(PRIO_PGRP, pid, 0));
	show(what, "prlimit", prlimit(pid, RLIMIT_NOFILE, NULL, NULL));
	show(what, "capget", syscall(SYS_capget, &caphdr, capdata));
	show(what, "kcmp", syscall(SYS_kcmp, getpid(), pid, 0 /* KCMP_FILE */, 0, 0));
	show(what, "get_robust_list", syscall(SYS_get_robust_list, pid, &head, &len));
	show(what, "ptrace_attach", syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, pid, 0, 0));
	show(what, "waitid_pid", waitid(P_PID, pid, &si, WEXITED | WNOHANG));
	show(what, "waitid_pgid", waitid(P_PGID, pid, &si, WEXITED | WNOHANG));
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	show(what, "proc_open", fd);
	if (fd >= 0)
		close(fd);
	answer(what, "proc_listed", proc_listed(pid));
	show(what, "clock_gettime_cpu", clock_gettime(PROCESS_CPUCLOCK(pid), &ts));
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = pid;
	fd = syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &timer);
	show(what, "timer_create_thread_id", fd);
	if (fd >= 0)
		syscall(SYS_timer_delete, timer);
	/* the root cgroup's own file: a reaped pid moves nothing anywhere */
	fd = open("/sys/fs/cgroup/cgroup.procs", O_WRONLY);
	if (fd < 0) {
		setup_failed(what, "cgroup_procs_open");
	} else {
		snprintf(path, sizeof(path), "%d", pid);
		show(what, "cgroup_procs_write", write(fd, path, strlen(path)));
		close(fd);
	}
	owner_lookups(what, pid);
	scm_lookup(what, pid);
	report_queued(what, before);
}

/*
 * kernel.cad_pid names the process Ctrl-Alt-Del signals: a write resolves the
 * number (in the writer's namespace, so only from the initial one here). The
 * old value goes back if the write took.
 */
static void cad_pid_lookup(const char *what, pid_t pid)
{
	char old[32] = "", buf[32];
	int fd = open("/proc/sys/kernel/cad_pid", O_RDWR);
	ssize_t len;

	if (fd < 0 || (len = read(fd, old, sizeof(old) - 1)) <= 0) {
		setup_failed(what, "cad_pid_read");
		if (fd >= 0)
			close(fd);
		return;
	}
	snprintf(buf, sizeof(buf), "%d", pid);
	len = pwrite(fd, buf, strlen(buf), 0);
	show(what, "cad_pid_write", len);
	if (len >= 0 && pwrite(fd, old, strlen(old), 0) < 0)
		setup_failed(what, "cad_pid_restore");
	close(fd);
}

/* Is there a line of /proc/locks whose owner is @pid? */
static const char *proc_locks_lists(pid_t pid)
{
	char line[256];
	FILE *f = fopen("/proc/locks", "r");
	int owner, found = 0;

	if (!f)
		return "setup-failed";
	/* "1: FLOCK  ADVISORY  WRITE 123 00:1a:4567 0 EOF" */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d: %*s %*s %*s %d", &owner) == 1 && owner == pid)
			found = 1;
	fclose(f);
	return found ? "yes" : "no";
}

/* TIOCSPGRP on a pty whose session we lead, naming the reaped group @pgrp. */
static void tty_lookup(const char *what, pid_t pgrp)
{
	pid_t p = fork();
	int status;

	if (p == 0) {
		int m, s;

		failures = 0;	/* this child's own, counted by the parent */
		setsid();
		m = posix_openpt(O_RDWR | O_NOCTTY);
		if (m < 0 || grantpt(m) || unlockpt(m))
			_exit(2);
		s = open(ptsname(m), O_RDWR);
		if (s < 0 || ioctl(s, TIOCSCTTY, 0))
			_exit(3);
		show(what, "tiocspgrp", ioctl(s, TIOCSPGRP, &pgrp));
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	waitpid(p, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
		errno = 0;
		setup_failed(what, WIFEXITED(status) && WEXITSTATUS(status) == 2 ?
			     "tiocspgrp_openpt" : "tiocspgrp_ctty");
	} else if (WEXITSTATUS(status)) {
		failures++;
	}
}

/*
 * A pidfs file handle of a child, taken through its pidfd before the reap,
 * opened after it. pidfs finds a handle's pid by inode number, not by pid
 * number: this is the one lookup of a reaped task that does not go through
 * the pid namespace's idr.
 */
static void handle_lookup(void)
{
	struct {
		struct file_handle fh;
		unsigned char data[64];
	} h = { .fh.handle_bytes = 64 };
	int pidfd, mnt, fd;
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0 || name_to_handle_at(pidfd, "", &h.fh, &mnt, AT_EMPTY_PATH)) {
		setup_failed("child", "pidfs_name_to_handle");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		if (pidfd >= 0)
			close(pidfd);
		return;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fd = open_by_handle_at(pidfd, &h.fh, O_RDONLY);
	show("child", "pidfs_open_by_handle", fd);
	if (fd >= 0)
		close(fd);
	close(pidfd);
}

/*
 * A reaped child of a nested pid namespace's init, looked up by its number
 * inside the namespace and by its number outside, while the namespace is
 * still alive (its teardown would free every queued pid of it at once). Each
 * side closes the pipe ends it does not use, so that one that fails makes the
 * other's read return rather than wait.
 */
static void nested_lookups(void)
{
	struct queue_snapshot outer_before = snapshot();
	int outer[2], ready[2], done[2];
	pid_t p, c_outer = -1;
	char byte = 0;
	int status;

	if (pipe(outer) || pipe(ready) || pipe(done)) {
		setup_failed("nested", "pipe");
		return;
	}
	p = fork();
	if (p == 0) {
		pid_t init;

		failures = 0;	/* this side's own, counted by the parent */
		close(outer[0]);
		close(ready[0]);
		close(done[1]);
		if (unshare(CLONE_NEWPID)) {
			setup_failed("nested", "unshare");
			_exit(1);
		}
		init = fork();
		if (init == 0) {
			/*
			 * c takes a flock on a file description init keeps
			 * open: the lock outlives c, and this namespace's
			 * /proc/locks translates its owner's number.
			 */
			int lockfd = open("/tmp/pid_lookup.lock", O_RDWR | O_CREAT, 0600);
			struct queue_snapshot before = snapshot();
			pid_t c;

			if (lockfd < 0)
				setup_failed("nested_inner", "lock_open");
			c = fork();
			if (c == 0) {
				/* /proc is still the outer one: "self" is the outer number */
				char link[32] = "";
				pid_t me;

				setpgid(0, 0);
				if (lockfd >= 0 && flock(lockfd, LOCK_EX))
					_exit(1);
				if (readlink("/proc/self", link, sizeof(link) - 1) < 0)
					_exit(1);
				me = atoi(link);
				_exit(write(outer[1], &me, sizeof(me)) == sizeof(me) ? 0 : 1);
			}
			close(outer[1]);
			if (c < 0 || waitpid(c, &status, 0) != c ||
			    !WIFEXITED(status) || WEXITSTATUS(status))
				setup_failed("nested_inner", "child");
			/* a /proc of this namespace, for the /proc lookups */
			if (unshare(CLONE_NEWNS) ||
			    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
			    mount("proc", "/proc", "proc", 0, NULL))
				setup_failed("nested_inner", "mount_proc");
			lookups("nested_inner", c, c, before);
			answer("nested_inner", "proc_locks_lists_its_flock", proc_locks_lists(c));
			fflush(stdout);
			/*
			 * Keep the namespace alive for the outer lookups, until
			 * the parent closes its end of done.
			 */
			if (write(ready[1], &byte, 1) != 1 || read(done[0], &byte, 1) < 0)
				setup_failed("nested_inner", "handshake");
			unlink("/tmp/pid_lookup.lock");
			_exit(failures ? 1 : 0);
		}
		close(outer[1]);
		close(ready[1]);
		close(done[0]);
		if (init < 0 || waitpid(init, &status, 0) != init)
			_exit(2);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 2);
	}
	close(outer[1]);
	close(ready[1]);
	close(done[0]);
	if (p < 0 || read(outer[0], &c_outer, sizeof(c_outer)) != sizeof(c_outer) ||
	    read(ready[0], &byte, 1) != 1) {
		setup_failed("nested_outer", "handshake");
	} else {
		lookups("nested_outer", c_outer, c_outer, outer_before);
		cad_pid_lookup("nested_outer", c_outer);
	}
	close(done[1]);	/* lets the namespace's init go */
	close(outer[0]);
	close(ready[0]);
	if (p > 0) {
		waitpid(p, &status, 0);
		/* the inner lookups' differences, counted in the namespace */
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failures++;
	}
}

static void *thread_fn(void *arg)
{
	*(pid_t *)arg = gettid();
	return NULL;
}

/* Restores of a reaped pid by number, as CRIU does them. */
static void restores(void)
{
	struct clone_args args = { .exit_signal = SIGCHLD };
	char buf[32];
	pid_t pid, again;
	int fd;

	/* clone3() with set_tid, which needs no CONFIG_CHECKPOINT_RESTORE */
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	args.set_tid = (uint64_t)(uintptr_t)&pid;
	args.set_tid_size = 1;
	again = syscall(SYS_clone3, &args, sizeof(args));
	if (again == 0)
		_exit(0);
	if (again < 0) {
		show("restore", "set_tid_gets_same_pid", -1);
	} else {
		waitpid(again, NULL, 0);
		answer("restore", "set_tid_gets_same_pid", again == pid ? "yes" : "no");
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
	fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	snprintf(buf, sizeof(buf), "%d", pid - 1);
	if (fd < 0 || write(fd, buf, strlen(buf)) < 0) {
		setup_failed("restore", "ns_last_pid");
	} else {
		again = fork();
		if (again == 0)
			_exit(0);
		waitpid(again, NULL, 0);
		answer("restore", "fork_gets_same_pid", again == pid ? "yes" : "no");
	}
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	struct queue_snapshot before;
	pthread_t t;
	pid_t pid, tid;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);

	/*
	 * A reaped child, which was its own process group's leader, and had a
	 * pidfd: a pid that pidfs knows (as one any pidfd or AF_UNIX socket
	 * makes) is one that SCM_CREDENTIALS would take if it were found.
	 */
	before = snapshot();
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		pause();
		_exit(0);
	}
	setpgid(pid, pid);	/* either side may run first */
	i = syscall(SYS_pidfd_open, pid, 0);
	if (i < 0)
		setup_failed("child", "pidfd_before_reap");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (i >= 0)
		close(i);
	lookups("child", pid, pid, before);
	cad_pid_lookup("child", pid);
	tty_lookup("child", pid);
	handle_lookup();

	/* A joined thread of this process. */
	before = snapshot();
	pthread_create(&t, NULL, thread_fn, &tid);
	pthread_join(t, NULL);
	/*
	 * The join returns before the thread is reaped. Its /proc entry goes
	 * when the thread is unhashed, a moment before its pid is released
	 * (stock frees it there), with nothing in between that userspace can
	 * see: wait for the entry to go (up to a second), then 100 ms more.
	 */
	for (i = 0; i < 1000; i++) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/task/%d", getpid(), tid);
		fd = open(path, O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			break;
		close(fd);
		usleep(1000);
	}
	if (i == 1000)
		setup_failed("thread", "reap");
	else {
		usleep(100000);
		lookups("thread", tid, getpid(), before);
		cad_pid_lookup("thread", tid);
	}

	nested_lookups();
	restores();
	printf("# %d lookups differ from stock 7.3's or failed to set up\n", failures);
	return failures ? 1 : 0;
}
