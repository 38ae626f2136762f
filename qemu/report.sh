#!/usr/bin/env bash
# Print the human report of `make run` from what the guest wrote.
#   report.sh <vm-outdir>
set -euo pipefail
dir=$1
get() { sed -n "s/^report $1=//p" "$dir/results.log" | head -n 1; }
accel=$(cat "$dir/accel")
case $accel in
tcg) accel_text="TCG (software emulation: absolute rates are emulation figures, not hardware ones)" ;;
kvm) accel_text="KVM" ;;
*) accel_text=$accel ;;
esac
cat <<REPORT

forkscale run report
  kernel:       $(get kernel) (FLAVOR=${FLAVOR:-debug})
  accelerator:  $accel_text
  vCPUs:        $(get vcpus) (host CPUs: $(nproc))
  module:       $(get module)
  workload:     $(get workload_tasks) tasks, $(get workload_seconds) s per loop
    fork+exit+wait:        $(get workload_fork_exit_wait_per_s) ops/s
    pthread create+join:   $(get workload_thread_create_join_per_s) ops/s
    errors:                $(get workload_errors)
  clone read:   $(get clone_impl), during the workload: $(get clone_lockless) lockless,
                $(get clone_retries) retries, $(get clone_locked) fell back to css_set_lock;
                $(get clone_css_sets) live css_sets
  pid freeing:  $(get pid_impl), during the workload: $(get pid_freed) pids freed in
                $(get pid_batches) pidmap_lock acquisitions (average batch $(get pid_avg_batch),
                $(get pid_locks_saved) acquisitions saved), $(get pid_pending) pending;
                flushes by size $(get pid_flush_size), timer $(get pid_flush_timer),
                pressure $(get pid_flush_pressure), namespace $(get pid_flush_namespace)
  rmmod:        $(get unload)
REPORT
[ "$(get workload_errors)" = 0 ] && [ "$(get unload)" = ok ]
