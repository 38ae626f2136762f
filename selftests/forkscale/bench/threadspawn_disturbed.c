// SPDX-License-Identifier: GPL-2.0
/*
 * threadspawn_disturbed: threadspawn, while one more process, the disturber,
 * writes the writers a lockless clone read validates against as fast as it
 * can: cgroup.kill of an empty cgroup, which bumps the clone read's counter
 * twice and blocks no fork, 100 times; then a kill of a cgroup with a task in
 * it, and a move of itself there and back (moves exclude forks through the
 * threadgroup rwsem, so it is the kills that overlap reads). With them a read
 * can retry or fall back to css_set_lock, which threadspawn alone never makes
 * it do. What this workload is for is the clone read's lockless share
 * (results.md's target); its lock counts include the disturber's own, so the
 * per-thread counts come from threadspawn.
 */
#include <sys/stat.h>
#include "bench.h"
#include "threadspawn.h"

#define CG_A "/sys/fs/cgroup/forkscale-bench-disturb-a"
#define CG_B "/sys/fs/cgroup/forkscale-bench-disturb-b"
#define CG_K "/sys/fs/cgroup/forkscale-bench-disturb-kill"

static pid_t disturber = -1;

static int write_to(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

/* Until killed: kill empty K 100 times; kill K with a child in it; move itself A, B. */
static void disturb(void)
{
	char pid[16];
	pid_t victim;
	int i;

	for (;;) {
		for (i = 0; i < 100; i++)
			if (write_to(CG_K "/cgroup.kill", "1"))
				_exit(1);
		if (write_to(CG_A "/cgroup.procs", "0") || write_to(CG_B "/cgroup.procs", "0"))
			_exit(1);
		victim = fork();
		if (victim == 0) {
			pause();
			_exit(0);
		}
		if (victim < 0)
			_exit(1);
		snprintf(pid, sizeof(pid), "%d", victim);
		if (write_to(CG_K "/cgroup.procs", pid) || write_to(CG_K "/cgroup.kill", "1"))
			_exit(1);
		if (waitpid(victim, NULL, 0) != victim)
			_exit(1);
	}
}

static int disturbed_setup(void)
{
	rmdir(CG_A);
	rmdir(CG_B);
	rmdir(CG_K);
	if ((mkdir(CG_A, 0755) && errno != EEXIST) || (mkdir(CG_B, 0755) && errno != EEXIST) ||
	    (mkdir(CG_K, 0755) && errno != EEXIST))
		return -1;
	disturber = fork();
	if (disturber == 0)
		disturb();
	return disturber < 0 ? -1 : 0;
}

/* Fails the run (no result line, exit status 1) if the disturber stopped early. */
static void disturbed_teardown(void)
{
	int status, i, failed = 0;

	if (waitpid(disturber, &status, WNOHANG) == disturber) {
		fprintf(stderr, "threadspawn_disturbed: the disturber exited early (status %d)\n",
			status);
		failed = 1;
	} else if (kill(disturber, SIGKILL) || waitpid(disturber, &status, 0) != disturber) {
		perror("threadspawn_disturbed: stopping the disturber");
		failed = 1;
	}
	/* A victim it left behind is K's only task. */
	write_to(CG_K "/cgroup.kill", "1");
	for (i = 0; i < 100; i++) {
		if (!rmdir(CG_K) || errno != EBUSY)
			break;
		usleep(10000);
	}
	if (rmdir(CG_A) || rmdir(CG_B) || (i == 100 && rmdir(CG_K)))
		perror("threadspawn_disturbed: rmdir");
	if (failed)
		exit(1);
}

static const struct bench_workload threadspawn_disturbed = {
	.name = "threadspawn_disturbed",
	.setup = disturbed_setup,
	.op = threadspawn_op,
	.teardown = disturbed_teardown,
};

int main(int argc, char **argv)
{
	return bench_main(argc, argv, &threadspawn_disturbed);
}
