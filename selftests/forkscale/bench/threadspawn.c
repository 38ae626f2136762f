// SPDX-License-Identifier: GPL-2.0
/*
 * threadspawn: will-it-scale's threadspawn1. Each task creates a thread and
 * joins it, over and over: one thread create and exit per operation, the path
 * where css_set_lock and pidmap_lock are taken per clone and per exit.
 */
#include "bench.h"
#include "threadspawn.h"

static const struct bench_workload threadspawn = {
	.name = "threadspawn",
	.op = threadspawn_op,
};

int main(int argc, char **argv)
{
	return bench_main(argc, argv, &threadspawn);
}
