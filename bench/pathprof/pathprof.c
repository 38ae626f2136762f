// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pathprof: a QEMU TCG plugin that counts the guest instructions executed at
 * each address, inside the windows the guest marks, so that two kernels' or
 * two module settings' path lengths can be told apart function by function.
 *
 *   -plugin pathprof.so,out=<file>
 *
 * Windows are lockhold's (bench/lockhold/lockhold.c): "xchg %bx,%bx" begins
 * one, "xchg %cx,%cx" ends it. Every instruction gets an inline counter of its
 * own, so the counts are exact at any number of vCPUs, but they are summed over
 * the vCPUs: profile at one.
 *
 * The marks themselves are not counted.
 *
 * Output, per window: "window N insns I", then "pc N <hex address> <count>"
 * for each address executed in it. Addresses become symbols in pathprof.py;
 * profile.sh boots a bench guest under it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lockhold/qemu_plugin_abi.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define SLOTS (1u << 20)	/* a power of two: distinct addresses executed */

struct slot {
	uint64_t pc, count;
};

static struct slot *slots;
static uint64_t used, window_no;
static int window_active;
static FILE *out;

static struct slot *slot_of(uint64_t pc)
{
	uint64_t i, h = pc * 0x9e3779b97f4a7c15ULL;

	for (i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[((h >> 40) + i) & (SLOTS - 1)];

		if (s->pc == pc)
			return s;
		if (!s->pc) {
			if (++used > SLOTS / 2)
				return NULL;
			s->pc = pc;
			return s;
		}
	}
	return NULL;
}

static void on_mark(unsigned int vcpu, void *begin)
{
	uint64_t i, total = 0;

	(void)vcpu;
	if (begin) {
		for (i = 0; i < SLOTS; i++)
			slots[i].count = 0;
		window_no++;
		window_active = 1;
		return;
	}
	if (!window_active)
		return;
	window_active = 0;
	for (i = 0; i < SLOTS; i++)
		total += slots[i].count;
	fprintf(out, "window %" PRIu64 " insns %" PRIu64 "\n", window_no, total);
	for (i = 0; i < SLOTS; i++)
		if (slots[i].count)
			fprintf(out, "pc %" PRIu64 " 0x%" PRIx64 " %" PRIu64 "\n", window_no,
				slots[i].pc, slots[i].count);
	fflush(out);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *b = qemu_plugin_insn_data(insn);
		size_t len = qemu_plugin_insn_size(insn);
		struct slot *s;

		if (len == 3 && b[0] == 0x66 && b[1] == 0x87 && (b[2] == 0xdb || b[2] == 0xc9)) {
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS,
							       b[2] == 0xdb ? (void *)1 : NULL);
			continue;
		}
#ifdef PATHPROF_TWIN_LAST_NOT_COUNTED
		if (i == n - 1)
			continue;	/* broken twin for tests/host/pathprof.sh */
#endif
		s = slot_of(qemu_plugin_insn_vaddr(insn));
		if (!s) {
			fprintf(stderr, "pathprof: more than %u addresses\n", SLOTS / 2);
			exit(1);
		}
		qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
							   &s->count, 1);
	}
}

static void at_exit(qemu_plugin_id_t id, void *ud)
{
	(void)id;
	(void)ud;
	fclose(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	(void)info;
	if (argc < 1 || strncmp(argv[0], "out=", 4)) {
		fprintf(stderr, "pathprof: needs out=<file>\n");
		return -1;
	}
	slots = calloc(SLOTS, sizeof(*slots));
	out = fopen(argv[0] + 4, "w");
	if (!slots || !out) {
		fprintf(stderr, "pathprof: cannot write %s\n", argv[0] + 4);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
