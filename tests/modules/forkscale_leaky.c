// SPDX-License-Identifier: GPL-2.0
/*
 * Test module: registers both forkscale hooks, then fails its init without
 * unregistering them, as a buggy module would. The kernel must detach both
 * before it frees the module's text; forks and exits afterwards must not
 * call into it. module_load.sh loads it and then forks.
 */

#include <linux/cgroup.h>
#include <linux/cgroup_clone.h>
#include <linux/module.h>
#include <linux/pid_release.h>
#include <linux/refcount.h>
#include <linux/sched.h>

static const struct cgroup_clone_ops leaky_clone_ops;
static const struct pid_release_ops leaky_pid_ops;

/* Stock's read: pin current's css_set and snapshot kill_seq under the lock. */
static struct css_set *leaky_get_cset(const struct cgroup_clone_ops *ops,
				      unsigned int *kill_seq)
{
	spinlock_t *lock = cgroup_clone_lock();
	struct css_set *cset;

	/* The kernel must pass the ops it was given, also while detaching. */
	WARN_ON_ONCE(ops != &leaky_clone_ops);

	spin_lock_irq(lock);
	cset = task_css_set(current);
	refcount_inc(&cset->refcount);
	*kill_seq = cset->dfl_cgrp->kill_seq;
	spin_unlock_irq(lock);
	return cset;
}

static const struct cgroup_clone_ops leaky_clone_ops = {
	.name = "forkscale_leaky",
	.get_cset = leaky_get_cset,
};

/* Queues nothing: every pid is freed at once. */
static void leaky_release(const struct pid_release_ops *ops,
			  struct pid **pids, unsigned int n)
{
	WARN_ON_ONCE(ops != &leaky_pid_ops);
	pid_release_free(pids, n);
}

static void leaky_flush(const struct pid_release_ops *ops,
			enum pid_flush_reason reason)
{
	/* called while the kernel detaches the module */
	WARN_ON_ONCE(ops != &leaky_pid_ops);
}

static const struct pid_release_ops leaky_pid_ops = {
	.name = "forkscale_leaky",
	.release = leaky_release,
	.flush = leaky_flush,
	.max_delay_ms = 1,
};

static int __init leaky_init(void)
{
	int ret;

	ret = cgroup_clone_ops_register(&leaky_clone_ops);
	if (ret)
		return ret;
	ret = pid_release_ops_register(&leaky_pid_ops);
	if (ret)
		return ret;
	/* The bug under test: failing with both still registered. */
	return -EAGAIN;
}
module_init(leaky_init);

MODULE_IMPORT_NS("CGROUP_CLONE");
MODULE_IMPORT_NS("PID_RELEASE");
MODULE_DESCRIPTION("Test: a module that fails its init with forkscale's hooks registered");
MODULE_LICENSE("GPL");
