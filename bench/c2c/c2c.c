// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * c2c: a QEMU TCG plugin that counts cache-line transfers between vCPUs, the
 * events perf c2c reports on real hardware, and says which data and which code
 * caused each.
 *
 *   -plugin c2c.so,out=<file>[,lines=<log2 of the table size>][,start=mark]
 *
 * For every 64-byte line of guest physical memory it keeps which vCPUs hold a
 * copy and which one wrote it last (a MESI-like state without the data):
 *  - a load by a vCPU that holds no copy of a line another vCPU wrote last is
 *    a HITM (the line moves from the writer's cache): counted, the line is
 *    then shared and clean;
 *  - a store (or an atomic read-modify-write) to a line that other vCPUs hold
 *    invalidates their copies: counted once, with how many copies went;
 *  - anything else (a hit, a first touch, a load of a clean line) moves no
 *    line between vCPUs and is not counted.
 * Instruction fetches, device memory and DMA are not tracked. A locked
 * read-modify-write is one access under multi-threaded TCG (an invalidation
 * where others hold the line); single-threaded TCG emulates it as a load and
 * a store, which can count a HITM as well: compare runs of one mode only.
 *
 * The state lives in a direct-mapped table indexed by line number, one 64-bit
 * word per entry: the vCPUs holding the line (bits 0-31), the last writer + 1
 * (bits 32-37, 0 for clean) and the line's tag + 1 (bits 38-63, 0 for empty).
 * Memory is bounded by the table (8 << lines bytes) and a lookup is O(1); with
 * 2^lines entries, lines below 2^lines each have a slot of their own (the
 * default, 2^24, covers 1 GiB of guest memory), and a line that takes over a
 * slot from another is counted as an eviction, the other's state being lost.
 * Every update is one compare-and-exchange of that word, so vCPU threads of
 * multi-threaded TCG may update the table at once; the transfer records take a
 * mutex, only when a transfer happens inside a window.
 *
 * The guest marks a window with "xchg %bx,%bx" (begin) and "xchg %cx,%cx"
 * (end), as for bench/lockhold, on any vCPU: transfers are counted only inside
 * windows, and the line state is kept across them. Without a mark, the whole
 * run is window 0.
 *
 * A callback on every access slows TCG several times over, a kernel's boot
 * included. With start=mark, memory is followed only from the first
 * "xchg %dx,%dx" on: until then only the marks are instrumented, and that mark
 * resets the plugin (qemu_plugin_reset(), which flushes the translated code),
 * whose new translations instrument every access. The guest executes it before
 * whatever should give the lines their state (the bench's warm-up).
 *
 * Output, per window: "window N hitm H inval I copies C evictions E dropped
 * D", then per code site and line "xfer N <pc> <line address> <address>
 * <hitm> <inval> <copies>", where <address> is the virtual address of the
 * site's last access to that line (for the symbol of static data, or the slab
 * object it lies in).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lockhold/qemu_plugin_abi.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define LINE_SHIFT 6
#define MAX_VCPUS 32
#define HOLDERS_MASK 0xffffffffULL
#define WRITER_SHIFT 32
#define WRITER_MASK 0x3fULL
#define TAG_SHIFT 38
#define TAG_LIMIT (1ULL << (64 - TAG_SHIFT))
#define MAX_RECORDS 262144	/* a power of two */

enum event { NONE, HITM, INVAL };

struct record {
	int used;
	uint64_t pc, line, vaddr, hitm, inval, copies;
};

static _Atomic uint64_t *table;
static unsigned int table_bits = 24;
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;
/* guarded by records_lock, with the window's state */
static struct record records[MAX_RECORDS];
static uint64_t window_no, hitm, inval, copies, dropped;
static int window_seen;
static _Atomic int window_active = 1;	/* window 0 until a begin mark */
static _Atomic uint64_t evictions;
static FILE *out;
static int start_at_mark;	/* start=mark */
static _Atomic int armed;	/* the start mark was seen */

static struct record *record_of(uint64_t pc, uint64_t line)
{
	uint64_t h = (pc * 0x9e3779b97f4a7c15ULL) ^ (line * 0xc2b2ae3d27d4eb4fULL);
	unsigned int i;

	for (i = 0; i < MAX_RECORDS; i++) {
		struct record *r = &records[((h >> 20) + i) & (MAX_RECORDS - 1)];

		if (!r->used) {
			*r = (struct record){ .used = 1, .pc = pc, .line = line };
			return r;
		}
		if (r->pc == pc && r->line == line)
			return r;
	}
	return NULL;
}

static void count(enum event ev, int gone, uint64_t pc, uint64_t line, uint64_t vaddr)
{
	struct record *r;

	pthread_mutex_lock(&records_lock);
	/* the window may have ended since the caller looked */
	if (!atomic_load(&window_active))
		goto out;
	if (ev == HITM)
		hitm++;
	else
		inval++, copies += gone;
	r = record_of(pc, line);
	if (!r) {
		dropped++;
		goto out;
	}
	r->vaddr = vaddr;
	if (ev == HITM)
		r->hitm++;
	else
		r->inval++, r->copies += gone;
out:
	pthread_mutex_unlock(&records_lock);
}

/*
 * The line's new state after an access by @vcpu, and what moved between vCPUs
 * (@gone: how many copies a store invalidated).
 */
static uint64_t next_state(uint64_t old, uint64_t tag, unsigned int vcpu, int store,
			   enum event *ev, int *gone, int *evicted)
{
	uint64_t me = 1ULL << vcpu, holders = 0;
	int writer = -1;

	*ev = NONE;
	*gone = 0;
	*evicted = 0;
	if (old >> TAG_SHIFT == tag + 1) {
		holders = old & HOLDERS_MASK;
		writer = (int)((old >> WRITER_SHIFT) & WRITER_MASK) - 1;
	} else if (old) {
		*evicted = 1;
	}
	if (store) {
		uint64_t others = holders & ~me;

		if (others) {
			*ev = INVAL;
			*gone = __builtin_popcountll(others);
		}
		holders = me;
		writer = (int)vcpu;
	} else if (!(holders & me)) {
		if (writer >= 0 && writer != (int)vcpu) {
			*ev = HITM;
			writer = -1;	/* written back: shared and clean now */
		}
#ifndef C2C_TWIN_NO_SHARE
		holders |= me;
#endif
	}
	return ((tag + 1) << TAG_SHIFT) | ((uint64_t)(writer + 1) << WRITER_SHIFT) | holders;
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *ud)
{
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	uint64_t line, tag, old, new;
	_Atomic uint64_t *slot;
	int store, gone, evicted;
	enum event ev;

	if (!hw || qemu_plugin_hwaddr_is_io(hw) || vcpu >= MAX_VCPUS)
		return;
	line = qemu_plugin_hwaddr_phys_addr(hw) >> LINE_SHIFT;
	tag = line >> table_bits;
	if (tag + 1 >= TAG_LIMIT)
		return;		/* beyond 2^(26 + lines + 6) bytes: not guest RAM */
	slot = &table[line & ((1ULL << table_bits) - 1)];
	store = qemu_plugin_mem_is_store(info);
	old = atomic_load_explicit(slot, memory_order_relaxed);
	do {
		new = next_state(old, tag, vcpu, store, &ev, &gone, &evicted);
	} while (new != old &&
		 !atomic_compare_exchange_weak_explicit(slot, &old, new, memory_order_relaxed,
							memory_order_relaxed));
	if (evicted)
		atomic_fetch_add_explicit(&evictions, 1, memory_order_relaxed);
	if (ev != NONE && atomic_load_explicit(&window_active, memory_order_relaxed))
		count(ev, gone, (uint64_t)(uintptr_t)ud, line << LINE_SHIFT, vaddr);
}

static void dump_window(void)
{
	unsigned int i;

	fprintf(out, "window %" PRIu64 " hitm %" PRIu64 " inval %" PRIu64 " copies %" PRIu64
		" evictions %" PRIu64 " dropped %" PRIu64 "\n", window_no, hitm, inval, copies,
		atomic_load(&evictions), dropped);
	for (i = 0; i < MAX_RECORDS; i++) {
		struct record *r = &records[i];

		if (r->used)
			fprintf(out, "xfer %" PRIu64 " 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64
				" %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", window_no, r->pc,
				r->line, r->vaddr, r->hitm, r->inval, r->copies);
	}
	fflush(out);
}

static void on_mark(unsigned int vcpu, void *begin)
{
	(void)vcpu;
	pthread_mutex_lock(&records_lock);
	if (!out) {
		/* a vCPU still running after at_exit */
	} else if (begin) {
		if (window_seen && atomic_load(&window_active))
			fprintf(out, "unclosed %" PRIu64 "\n", window_no);
		memset(records, 0, sizeof(records));
		hitm = 0;
		inval = 0;
		copies = 0;
		dropped = 0;
		atomic_store(&evictions, 0);
		window_no++;	/* from 1: window 0 is the whole run, if unmarked */
		window_seen = 1;
		atomic_store(&window_active, 1);
	} else if (atomic_load(&window_active)) {
		dump_window();
		atomic_store(&window_active, 0);
	}
	pthread_mutex_unlock(&records_lock);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
static void at_exit(qemu_plugin_id_t id, void *ud);

/* The plugin reset by the start mark: from now on every access is followed. */
static void on_reset(qemu_plugin_id_t id)
{
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
}

static qemu_plugin_id_t plugin_id;

static void on_start_mark(unsigned int vcpu, void *ud)
{
	(void)vcpu;
	(void)ud;
	if (!atomic_exchange(&armed, 1))
		qemu_plugin_reset(plugin_id, on_reset);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	int follow = !start_at_mark || atomic_load(&armed);

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *b = qemu_plugin_insn_data(insn);
		size_t len = qemu_plugin_insn_size(insn);
		uint64_t pc = qemu_plugin_insn_vaddr(insn);

		if (len == 3 && b[0] == 0x66 && b[1] == 0x87 && (b[2] == 0xdb || b[2] == 0xc9)) {
			void *begin = b[2] == 0xdb ? (void *)1 : NULL;

			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark,
							       QEMU_PLUGIN_CB_NO_REGS, begin);
			continue;
		}
		if (len == 3 && b[0] == 0x66 && b[1] == 0x87 && b[2] == 0xd2) {
			if (!follow)
				qemu_plugin_register_vcpu_insn_exec_cb(insn, on_start_mark,
								       QEMU_PLUGIN_CB_NO_REGS, NULL);
			continue;
		}
		if (follow)
			qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW, (void *)(uintptr_t)pc);
	}
}

static void at_exit(qemu_plugin_id_t id, void *ud)
{
	(void)id;
	(void)ud;
	pthread_mutex_lock(&records_lock);
	if (!window_seen) {
		window_no = 0;
		dump_window();
	} else if (atomic_load(&window_active)) {
		fprintf(out, "unclosed %" PRIu64 "\n", window_no);
	}
	fclose(out);
	out = NULL;
	atomic_store(&window_active, 0);
	pthread_mutex_unlock(&records_lock);
}

/* QEMU's own log (qemu_plugin_outs) is off unless -d plugin: say it on stderr. */
static int fail(const char *msg, const char *arg)
{
	fprintf(stderr, "c2c: %s%s\n", msg, arg);
	return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;
	int i;

	(void)info;
	if (qemu_plugin_n_max_vcpus() > MAX_VCPUS)
		return fail("at most 32 vCPUs: the holders of a line are a 32-bit mask", "");
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			path = argv[i] + 4;
		} else if (!strcmp(argv[i], "start=mark")) {
			start_at_mark = 1;
		} else if (!strncmp(argv[i], "lines=", 6)) {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(argv[i] + 6, &end, 10);
			if (errno || *end || end == argv[i] + 6 || v < 10 || v > 30)
				return fail("lines= takes the log2 of the table size, 10 to 30: ",
					    argv[i]);
			table_bits = (unsigned int)v;
		} else {
			return fail("unknown argument ", argv[i]);
		}
	}
	if (!path)
		return fail("needs out=<file>", "");
	table = calloc(1ULL << table_bits, sizeof(*table));
	if (!table)
		return fail("cannot allocate the line table (lower lines=)", "");
	out = fopen(path, "w");
	if (!out)
		return fail("cannot write ", path);
	plugin_id = id;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
