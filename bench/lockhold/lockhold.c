// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lockhold: a QEMU TCG plugin that counts the guest instructions executed
 * while a lock is held, per lock and per acquisition site, without lockdep.
 *
 *   -plugin lockhold.so,out=<file>,lock=<name>@<hex address>[,lock=...]
 *
 * The lock is found by the address of its word: the store that takes it and
 * the store that drops it. At one vCPU (bench PATHLEN=1 runs icount on one)
 * stores to a lock word alternate between the two, so no value needs reading:
 *  - an atomic compare-and-exchange or exchange takes it exclusively
 *    (spinlock_t, the write side of rwlock_t), and a plain store drops it;
 *  - an atomic add takes it shared (the read side of rwlock_t), and the next
 *    atomic add from another instruction drops it; one from the instruction
 *    that took it is a nested take (a reader in an interrupt), counted as an
 *    anomaly, and the hold ends when the outermost reader drops it.
 * A store that fits neither is counted as an anomaly. With more than one vCPU
 * stores interleave, so the plugin refuses to load.
 *
 * A hold is the number of instructions executed after the taking instruction,
 * up to and including the dropping one, interrupts included: css_set_lock,
 * pidmap_lock and tasklist_lock's write side are held with interrupts off,
 * tasklist_lock's read side is not. Its site is the taking instruction's
 * address and that of the last call executed before it, which is the call into
 * the lock function when that is not inlined (or, if an interrupt came between
 * that call and the take, a call in the interrupt).
 *
 * The guest marks a window with "xchg %bx,%bx" (begin) and "xchg %cx,%cx"
 * (end), which no compiler emits: holds are counted only inside windows, one
 * block of output per window ("unclosed N" for a window a second begin cut
 * short). Without a window, the whole run is window 0.
 *
 * Output, per window: "window N insns I"; per site "hold N lock shared|exclusive
 * pc caller count sum min max k:n:s...", where k:n:s says n holds took 2^k to
 * 2^(k+1) - 1 instructions, s in all; per lock "anomaly N lock count".
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_abi.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_LOCKS 8
#define MAX_SITES 4096	/* a power of two */

enum insn_class { PLAIN, CMPXCHG, XCHG, XADD, OTHER_RMW };
enum hold_kind { EXCLUSIVE, SHARED };

/*
 * An instruction's address and class, packed into its callback's userdata:
 * guest addresses are canonical (the top bits copy bit 56 or 47), so shifting
 * left by 3 loses nothing that an arithmetic shift right does not restore.
 */
static void *pack(uint64_t pc, enum insn_class cls)
{
	return (void *)(uintptr_t)((pc << 3) | cls);
}

static uint64_t packed_pc(void *ud)
{
	return (uint64_t)((int64_t)(uintptr_t)ud >> 3);
}

static enum insn_class packed_class(void *ud)
{
	return (enum insn_class)((uintptr_t)ud & 7);
}

struct lock {
	char name[32];
	uint64_t addr;
	int held;	/* 0, or the depth of exclusive (1) or nested shared holds */
	enum hold_kind kind;
	int64_t in_window;	/* the window it was taken in, or -1 */
	uint64_t taken_at, pc, caller, anomalies;
};

struct site {
	int used, lock;
	enum hold_kind kind;
	uint64_t pc, caller, count, sum, min, max;
	/* holds of 2^k to 2^(k+1) - 1 instructions: how many, and their sum */
	uint64_t log2[64], log2_sum[64];
};

static uint64_t insns;		/* executed instructions (inline counter) */
static uint64_t last_call;	/* address of the last call executed */
static struct lock locks[MAX_LOCKS];
static int nlocks;
static struct site sites[MAX_SITES];
static int window_active = 1, window_seen;	/* window 0 until a begin mark */
static uint64_t window_no, window_start, dropped_sites;
static FILE *out;

static enum insn_class classify(const uint8_t *b, size_t n, int *is_call)
{
	size_t i = 0;
	int lock = 0;

	*is_call = 0;
	for (; i < n; i++) {
		if (b[i] == 0xf0)
			lock = 1;
		else if (!(b[i] == 0xf2 || b[i] == 0xf3 || b[i] == 0x2e ||
			   b[i] == 0x36 || b[i] == 0x3e || b[i] == 0x26 ||
			   b[i] == 0x64 || b[i] == 0x65 || b[i] == 0x66 ||
			   b[i] == 0x67 || (b[i] & 0xf0) == 0x40))
			break;
	}
	if (i >= n)
		return PLAIN;
	if (b[i] == 0xe8 || (b[i] == 0xff && i + 1 < n && ((b[i + 1] >> 3) & 7) == 2)) {
		*is_call = 1;
		return PLAIN;
	}
	if (b[i] == 0x86 || b[i] == 0x87)
		return XCHG;	/* locked whenever it stores to memory */
	if (b[i] == 0x0f && i + 1 < n) {
		if (b[i + 1] == 0xb0 || b[i + 1] == 0xb1)
			return CMPXCHG;
		if (b[i + 1] == 0xc0 || b[i + 1] == 0xc1)
			return XADD;
		if (b[i + 1] == 0xc7 && i + 2 < n && ((b[i + 2] >> 3) & 7) == 1)
			return CMPXCHG;	/* cmpxchg8b, cmpxchg16b */
	}
	return lock ? OTHER_RMW : PLAIN;
}

static struct site *site_of(int lock, enum hold_kind kind, uint64_t pc, uint64_t caller)
{
	uint64_t h = (pc * 0x9e3779b97f4a7c15ULL) ^ (caller * 0xc2b2ae3d27d4eb4fULL) ^
		     ((uint64_t)lock << 1) ^ kind;
	unsigned int i, slot;

	for (i = 0; i < MAX_SITES; i++) {
		struct site *s;

		slot = (unsigned int)((h >> 20) + i) & (MAX_SITES - 1);
		s = &sites[slot];
		if (!s->used) {
			*s = (struct site){ .used = 1, .lock = lock, .kind = kind,
					    .pc = pc, .caller = caller, .min = UINT64_MAX };
			return s;
		}
		if (s->lock == lock && s->kind == kind && s->pc == pc && s->caller == caller)
			return s;
	}
	return NULL;
}

static void record(int i, uint64_t hold)
{
	struct lock *l = &locks[i];
	struct site *s = site_of(i, l->kind, l->pc, l->caller);

	if (!s) {
		dropped_sites++;
		return;
	}
	s->count++;
	s->sum += hold;
	if (hold < s->min)
		s->min = hold;
	if (hold > s->max)
		s->max = hold;
	s->log2[hold ? 63 - __builtin_clzll(hold) : 0]++;
	s->log2_sum[hold ? 63 - __builtin_clzll(hold) : 0] += hold;
}

static void dump_window(void)
{
	unsigned int i;
	int l;

	fprintf(out, "window %" PRIu64 " insns %" PRIu64 "\n", window_no,
		insns - window_start);
	for (i = 0; i < MAX_SITES; i++) {
		struct site *s = &sites[i];
		int k;

		if (!s->used)
			continue;
		fprintf(out, "hold %" PRIu64 " %s %s 0x%" PRIx64 " 0x%" PRIx64
			" %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64,
			window_no, locks[s->lock].name,
			s->kind == SHARED ? "shared" : "exclusive", s->pc, s->caller,
			s->count, s->sum, s->min, s->max);
		/* the histogram: k:count:sum for each k with holds */
		for (k = 0; k < 64; k++)
			if (s->log2[k])
				fprintf(out, " %d:%" PRIu64 ":%" PRIu64, k, s->log2[k], s->log2_sum[k]);
		fputc('\n', out);
	}
	for (l = 0; l < nlocks; l++)
		fprintf(out, "anomaly %" PRIu64 " %s %" PRIu64 "\n", window_no,
			locks[l].name, locks[l].anomalies);
	if (dropped_sites)
		fprintf(out, "dropped %" PRIu64 " %" PRIu64 "\n", window_no, dropped_sites);
	fflush(out);
}

static void begin_window(void)
{
	int l;

	if (window_seen && window_active) {
		fprintf(out, "unclosed %" PRIu64 "\n", window_no);
		fflush(out);
	}
	memset(sites, 0, sizeof(sites));
	for (l = 0; l < nlocks; l++)
		locks[l].anomalies = 0;
	dropped_sites = 0;
	window_no++;	/* from 1: window 0 is the whole run, if unmarked */
	window_seen = 1;
	window_active = 1;
	window_start = insns;
}

static void on_mark(unsigned int vcpu, void *begin)
{
	(void)vcpu;
	if (begin) {
		begin_window();
	} else if (window_active) {
		dump_window();
		window_active = 0;
	}
}

static void on_call(unsigned int vcpu, void *pc)
{
	(void)vcpu;
	last_call = (uint64_t)(uintptr_t)pc;
}

static void on_lock_store(int i, void *ud)
{
	struct lock *l = &locks[i];
	enum insn_class cls = packed_class(ud);
	uint64_t pc = packed_pc(ud);
	int shared_op = cls == XADD || cls == OTHER_RMW;

	if (!l->held) {
		if (cls == PLAIN) {
			l->anomalies += window_active;	/* dropped, but never taken */
			return;
		}
		l->held = 1;
		l->kind = shared_op ? SHARED : EXCLUSIVE;
		l->taken_at = insns;
		l->pc = pc;
		l->caller = last_call;
		l->in_window = window_active ? (int64_t)window_no : -1;
		return;
	}
	if ((l->kind == EXCLUSIVE && cls != PLAIN) ||
	    (l->kind == SHARED && !shared_op)) {
		l->anomalies += window_active;	/* e.g. a failed cmpxchg on a held lock */
		return;
	}
	if (l->kind == SHARED && pc == l->pc) {
		l->held++;	/* a nested reader: its own hold is not counted */
		l->anomalies += window_active;
		return;
	}
	if (--l->held)
		return;
#ifdef LOCKHOLD_TWIN_DROP_NOT_COUNTED
	l->taken_at++;	/* broken twin for tests/host/lockhold.sh */
#endif
	if (window_active && l->in_window == (int64_t)window_no)
		record(i, insns - l->taken_at);
}

static void on_store(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
		     void *ud)
{
	int i;

	(void)vcpu;
	if (!qemu_plugin_mem_is_store(info))
		return;
	for (i = 0; i < nlocks; i++) {
		if (vaddr == locks[i].addr) {
			on_lock_store(i, ud);
			return;
		}
	}
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *b = qemu_plugin_insn_data(insn);
		size_t len = qemu_plugin_insn_size(insn);
		uint64_t pc = qemu_plugin_insn_vaddr(insn);
		enum insn_class cls;
		int is_call;

		qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
							   &insns, 1);
		if (len == 3 && b[0] == 0x66 && b[1] == 0x87 && (b[2] == 0xdb || b[2] == 0xc9)) {
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS,
							       b[2] == 0xdb ? (void *)1 : NULL);
			continue;
		}
		cls = classify(b, len, &is_call);
		if (is_call)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_call, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)pc);
		qemu_plugin_register_vcpu_mem_cb(insn, on_store, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_W, pack(pc, cls));
	}
}

static void at_exit(qemu_plugin_id_t id, void *ud)
{
	(void)id;
	(void)ud;
	if (!window_seen) {
		window_no = 0;
		dump_window();
	} else if (window_active) {
		fprintf(out, "unclosed %" PRIu64 "\n", window_no);
	}
	fclose(out);
}

/* QEMU's own log (qemu_plugin_outs) is off unless -d plugin: say it on stderr. */
static int fail(const char *msg, const char *arg)
{
	fprintf(stderr, "lockhold: %s%s\n", msg, arg);
	return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;
	int i;

	(void)info;
	if (qemu_plugin_n_max_vcpus() != 1)
		return fail("needs exactly one vCPU (-smp 1): stores to a lock word ",
			    "interleave with more");
	for (i = 0; i < argc; i++) {
		char *at, *end;

		if (!strncmp(argv[i], "out=", 4)) {
			path = argv[i] + 4;
			continue;
		}
		if (strncmp(argv[i], "lock=", 5))
			return fail("unknown argument ", argv[i]);
		at = strchr(argv[i], '@');
		if (nlocks == MAX_LOCKS || !at || at - argv[i] - 5 <= 0 ||
		    at - argv[i] - 5 >= (long)sizeof(locks[0].name))
			return fail("expected lock=<name>@<hex address> (at most 8): ", argv[i]);
		if (!isxdigit((unsigned char)at[1]))
			return fail("bad lock address: ", argv[i]);
		errno = 0;
		locks[nlocks].addr = strtoull(at + 1, &end, 16);
		if (*end || errno || !locks[nlocks].addr)
			return fail("bad lock address: ", argv[i]);
		for (int j = 0; j < nlocks; j++)
			if (locks[j].addr == locks[nlocks].addr ||
			    (strlen(locks[j].name) == (size_t)(at - argv[i] - 5) &&
			     !strncmp(locks[j].name, argv[i] + 5, at - argv[i] - 5)))
				return fail("a lock named or placed twice: ", argv[i]);
		memcpy(locks[nlocks].name, argv[i] + 5, at - argv[i] - 5);
		nlocks++;
	}
	if (!path || !nlocks)
		return fail("needs out=<file> and at least one lock=<name>@<address>", "");
	out = fopen(path, "w");
	if (!out)
		return fail("cannot write ", path);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
