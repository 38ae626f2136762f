// SPDX-License-Identifier: GPL-2.0
/*
 * The short fork workload of `make run`: one worker per CPU loops fork+exit+wait,
 * then pthread_create+join, for -s seconds each. Prints "workload key=value"
 * lines. Every child's exit status and every thread's return value is checked;
 * any mismatch is an error.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct worker_result {
	unsigned long ops;
	unsigned long errors;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *return_arg(void *arg)
{
	return arg;
}

static void fork_loop(double end, struct worker_result *r)
{
	int status;

	while (now() < end) {
		pid_t pid = fork();

		if (pid < 0) {
			r->errors++;
			continue;
		}
		if (pid == 0)
			_exit(42);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 42)
			r->errors++;
		r->ops++;
	}
}

static void thread_loop(double end, struct worker_result *r)
{
	while (now() < end) {
		pthread_t thread;
		void *ret;

		if (pthread_create(&thread, NULL, return_arg, (void *)r) ||
		    pthread_join(thread, &ret) || ret != (void *)r)
			r->errors++;
		r->ops++;
	}
}

/* Runs @loop in @workers processes for @seconds; returns ops/s, adds errors. */
static double run(const char *name, int workers, int seconds,
		  void (*loop)(double, struct worker_result *), unsigned long *errors)
{
	struct worker_result *results;
	unsigned long ops = 0;
	double start, end;
	int i, status;

	results = mmap(NULL, workers * sizeof(*results), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (results == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	start = now();
	end = start + seconds;
	for (i = 0; i < workers; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			exit(1);
		}
		if (pid == 0) {
			results[i].ops = results[i].errors = 0;
			loop(end, &results[i]);
			_exit(0);
		}
	}
	for (i = 0; i < workers; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			(*errors)++;
	end = now();
	for (i = 0; i < workers; i++) {
		ops += results[i].ops;
		*errors += results[i].errors;
	}
	munmap(results, workers * sizeof(*results));
	printf("workload %s_ops=%lu\n", name, ops);
	return ops / (end - start);
}

int main(int argc, char **argv)
{
	int workers = sysconf(_SC_NPROCESSORS_ONLN), seconds = 5, opt;
	unsigned long errors = 0;
	double rate;

	while ((opt = getopt(argc, argv, "s:t:")) != -1) {
		switch (opt) {
		case 's':
			seconds = atoi(optarg);
			break;
		case 't':
			workers = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-s seconds] [-t tasks]\n", argv[0]);
			return 2;
		}
	}
	if (seconds < 1 || workers < 1) {
		fprintf(stderr, "workload: -s and -t must be positive\n");
		return 2;
	}
	printf("workload tasks=%d\nworkload seconds=%d\n", workers, seconds);
	rate = run("fork_exit_wait", workers, seconds, fork_loop, &errors);
	printf("workload fork_exit_wait_per_s=%.0f\n", rate);
	rate = run("thread_create_join", workers, seconds, thread_loop, &errors);
	printf("workload thread_create_join_per_s=%.0f\n", rate);
	printf("workload errors=%lu\n", errors);
	return errors ? 1 : 0;
}
