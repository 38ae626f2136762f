/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One thread create and exit: the operation of threadspawn and of
 * threadspawn_disturbed.
 */
#ifndef FORKSCALE_BENCH_THREADSPAWN_H
#define FORKSCALE_BENCH_THREADSPAWN_H

#include <errno.h>
#include <pthread.h>

static int threadspawn_marker;

static void *threadspawn_fn(void *arg)
{
	return arg;
}

static int threadspawn_op(unsigned int task)
{
	pthread_t thread;
	void *ret;
	int err = pthread_create(&thread, NULL, threadspawn_fn, &threadspawn_marker);

	if (!err)
		err = pthread_join(thread, &ret);
	if (!err && ret != &threadspawn_marker)
		err = EPROTO;
	errno = err;
	return err;
}

#endif /* FORKSCALE_BENCH_THREADSPAWN_H */
