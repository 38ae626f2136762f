#!/usr/bin/env bash
# Misuses of the seqcount and seqlock APIs and of the hooks' kernel-crate types (ReleasedPid,
# ForkContext, CurrentCssSet) must not compile,
# each with the error that names the rule, while the correct uses (the controls)
# must.
#   compile_fail.sh <kdir> <workdir>
set -uo pipefail
kdir=$1 work=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
src=$top/tests/compile-fail

# build <name>: builds tests/compile-fail/<name>.rs as a module; output in $work/<name>.log
build() {
	local dir=$work/$1
	rm -rf "$dir"
	mkdir -p "$dir/tests/compile-fail"
	cp "$src/$1.rs" "$dir/tests/compile-fail/"
	echo "obj-m := tests/compile-fail/$1.o" > "$dir/Kbuild"
	"$top/scripts/kbuild-module.sh" "$kdir" "$dir" modules > "$work/$1.log" 2>&1
}

if build seqlock_update; then
	echo "ok host: compile-fail control: a seqlock's value replaced and read builds"
else
	echo "not ok host: compile-fail control: a seqlock's value replaced and read builds"
	tail -n 20 "$work/seqlock_update.log" | sed 's/^/# /'
fi

# must_fail <name> <rustc error code> <what it rules out> [message [detail]]
# message: a fragment the error's own line must carry, when the code alone is not specific;
# detail: one the log must carry too, when the message is generic (a type error's types).
must_fail() {
	if build "$1"; then
		echo "not ok host: $3 does not compile (it built)"
	elif grep "error\[$2\]" "$work/$1.log" | grep -qF -- "${4:-}" &&
		grep -qF -- "${5:-}" "$work/$1.log"; then
		echo "ok host: $3 does not compile ($2)"
	else
		echo "not ok host: $3 does not compile (not with $2${4:+ saying \"$4\"})"
		grep -m 5 'error' "$work/$1.log" | sed 's/^/# /'
	fi
}
must_fail seqlock_write_forgotten E0599 "a seqlock write section kept as a value (to forget)" \
	"no method named \`write\` found for reference \`&SeqLock<u64>\`"
must_fail seqlock_write_by_reference E0631 "a seqlock writer given a reference into the value" \
	"type mismatch in closure arguments" "found closure signature \`fn(&mut _) -> _\`"
must_fail seqlock_freed_in_section E0505 "a seqlock freed inside its own write section" \
	"cannot move out of \`value\` because it is borrowed"
must_fail seqcount_write_from_rust E0599 "a write section of a counter C owns" \
	"no method named \`write\` found for reference \`&SeqCount\`"
must_fail seqcount_token_kept E0624 "a seqcount read section opened by hand" \
	"method \`begin\` is private"
must_fail seqlock_of_reference E0277 "a SeqLock of a reference" \
	"the trait bound \`&[u8]: kernel::transmute::FromBytes\` is not satisfied"
must_fail seqlock_of_padded E0277 "a SeqLock of a type with padding" \
	"AsBytes\` is not satisfied"
must_fail seqlock_of_non_copy E0277 "a SeqLock of a type with drop glue" \
	"Copy\` is not satisfied"
must_fail seqlock_shared_not_send E0277 "a SeqLock of a value that cannot be sent, shared" \
	"cannot be sent between threads safely"

if build released_pid_once; then
	echo "ok host: compile-fail control: a ReleasedPid given up once builds"
else
	echo "not ok host: compile-fail control: a ReleasedPid given up once builds"
	tail -n 20 "$work/released_pid_once.log" | sed 's/^/# /'
fi
must_fail released_pid_twice E0382 "a ReleasedPid given up twice" "use of moved value: \`pid\`"
must_fail released_pid_forged E0423 "a ReleasedPid made outside the kernel crate" \
	"cannot initialize a tuple struct which contains private fields"
must_fail fork_context_forged E0423 "a ForkContext made outside the clone-read hook" \
	"cannot initialize a tuple struct which contains private fields"

if build css_set_within_rcu; then
	echo "ok host: compile-fail control: current's css_set used inside its RCU section builds"
else
	echo "not ok host: compile-fail control: current's css_set used inside its RCU section builds"
	tail -n 20 "$work/css_set_within_rcu.log" | sed 's/^/# /'
fi
must_fail css_set_outlives_rcu E0505 "current's css_set used after its RCU section" \
	"cannot move out of \`rcu\` because it is borrowed"
must_fail css_set_from_earlier_fork E0308 "a clone read returning a css_set kept from an earlier fork" \
	"mismatched types" "expected \`ForkCssSet<'_>\`, found \`ARef<CssSet>\`"
must_fail fork_css_set_forged E0451 "a ForkCssSet made outside CurrentCssSet" \
	"of struct \`ForkCssSet\` are private"
must_fail kill_seq_replaced E0616 "a clone read replacing the kill_seq read with the css_set" \
	"field \`kill_seq\` of struct \`ForkCssSet\` is private"
must_fail kill_seq_beside E0053 "a clone read returning a kill_seq of its own beside the css_set" \
	"method \`get_cset\` has an incompatible type for trait"
must_fail fork_css_set_kept E0521 "a ForkCssSet kept beyond its fork" \
	"borrowed data escapes outside of method"
