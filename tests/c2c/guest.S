/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Known sharing for the c2c plugin (bench/c2c), booted bare by QEMU as a
 * multiboot image on two vCPUs: 32-bit, no paging (virtual is physical),
 * interrupts off. The boot vCPU starts the second one (INIT, SIPI into a
 * real-mode trampoline copied to 0x7000), and the two take ROUNDS turns each,
 * in strict alternation, passed by a baton:
 *
 *   wait:  spin_load reads baton until it is the turn's number t;
 *   work:  pair_inc increments this vCPU's word of pair (vCPU 0 the first,
 *          vCPU 1 the one 32 bytes on, in the same line: false sharing),
 *          reads shared (read by both, written only before the window) and,
 *          on vCPU 0 only, increments private;
 *   pass:  baton_store writes t + 1 to baton (the ping-pong line).
 *
 * Before the window vCPU 1 has read baton (vCPU 0's first read of it, in the
 * window, finds it clean) and both have read shared, so inside it each of the
 * 2 * ROUNDS passes invalidates the other's copy of baton (one store to a line
 * the other holds) and the other's next read of it is a HITM; pair's word
 * goes back and forth the same way, but its first increment finds the line
 * untouched; shared and private never move. After its last pass vCPU 1 says
 * it is done (done_store, in ap_ready's line, which both hold), and vCPU 0
 * waits for that (done_load) before it ends the window, so that vCPU 1's last
 * pass is in the window under multi-threaded TCG too. Window 1 (marked by
 * vCPU 0 around the turns, its final_load of the last pass and done_load)
 * therefore has:
 *   baton:    2 * ROUNDS invalidations at baton_store, 2 * ROUNDS - 1 HITMs at
 *             spin_load and 1 at final_load;
 *   pair:     2 * ROUNDS - 1 HITMs and as many invalidations at pair_inc;
 *   ap_ready: 1 invalidation at done_store and 1 HITM at done_load;
 *   shared, private: nothing.
 * Then vCPU 0 leaves QEMU through isa-debug-exit (port 0xf4); vCPU 1 halts.
 * This holds when each access's callback runs before another vCPU can see
 * the access, as under single-threaded TCG. It starts with the start mark
 * ("xchg %dx,%dx", for start=mark); assembled with --defsym NOARM=1 it has
 * none, and a plugin started at the mark follows nothing.
 */
	.set	ROUNDS, 100
	.set	MB_MAGIC, 0x1badb002
	.set	MB_FLAGS, 0
	.set	TRAMPOLINE, 0x7000
	.set	APIC, 0xfee00000

	.text
	.code32
	.align	4
	.long	MB_MAGIC, MB_FLAGS, -(MB_MAGIC + MB_FLAGS)
	.globl	_start
_start:
	cli
	.ifndef	NOARM
	xchgw	%dx, %dx		/* start=mark: follow memory from here */
	pause				/* (leave the TB, so that the reset is done) */
	.endif
	movl	$bsp_stack_top, %esp
	/* the trampoline, and the GDT in it, where a real-mode vCPU reaches */
	movl	$trampoline, %esi
	movl	$TRAMPOLINE, %edi
	movl	$(trampoline_end - trampoline), %ecx
	cld
	rep movsb
	lgdt	(gdt_desc - trampoline + TRAMPOLINE)
	ljmp	$0x08, $1f
1:	movw	$0x10, %ax
	movw	%ax, %ds
	movw	%ax, %es
	movw	%ax, %ss

	movl	$0x5a5a5a5a, shared	/* written once, before the window */

	/* INIT and SIPI to APIC 1, its local APIC enabled first */
	movl	$APIC, %ebx
	movl	$0x1ff, 0xf0(%ebx)
	movl	$(1 << 24), 0x310(%ebx)
	movl	$0x4500, 0x300(%ebx)
	movl	$(1 << 24), 0x310(%ebx)
	movl	$(0x4600 | (TRAMPOLINE >> 12)), 0x300(%ebx)
2:	pause
	cmpl	$1, ap_ready
	jne	2b

	xchgw	%bx, %bx		/* window 1 */
	xorl	%edi, %edi		/* vCPU 0: the even turns */
	xorl	%esi, %esi
	call	take_turns
	.globl	final_load
final_load:
	movl	baton, %eax
	cmpl	$(2 * ROUNDS), %eax
	je	1f
	pause
	jmp	final_load
1:
	/* vCPU 1's last pass is recorded before it says done, and so before the end */
	.globl	done_load
done_load:
	cmpl	$2, ap_ready
	je	1f
	pause
	jmp	done_load
1:
	xchgw	%cx, %cx

	xorl	%eax, %eax
	outb	%al, $0xf4
3:	hlt
	jmp	3b

/* %edi: this vCPU (0 or 1); %esi: its first turn. */
take_turns:
	.globl	spin_load
spin_load:
	movl	baton, %eax
	cmpl	%esi, %eax
	je	1f
	pause			/* under TCG, lets the other vCPU run */
	jmp	spin_load
1:
	movl	%edi, %eax
	shll	$5, %eax
	.globl	pair_inc
pair_inc:
	incl	pair(%eax)
	movl	shared, %eax
	testl	%edi, %edi
	jnz	2f
	incl	private
2:	leal	1(%esi), %eax
	.globl	baton_store
baton_store:
	movl	%eax, baton
	addl	$2, %esi
	cmpl	$(2 * ROUNDS), %esi
	jb	spin_load
	ret

ap_main:
	movw	$0x10, %ax
	movw	%ax, %ds
	movw	%ax, %es
	movw	%ax, %ss
	movl	$ap_stack_top, %esp
	movl	baton, %eax		/* it holds baton and both hold shared... */
	movl	shared, %eax
	movl	$1, ap_ready		/* ...before vCPU 0 opens the window */
	movl	$1, %edi		/* vCPU 1: the odd turns */
	movl	$1, %esi
	call	take_turns
	.globl	done_store
done_store:
	movl	$2, ap_ready		/* done */
4:	hlt
	jmp	4b

/* Copied to TRAMPOLINE: the second vCPU starts here in real mode. */
	.code16
trampoline:
	cli
	xorw	%ax, %ax
	movw	%ax, %ds
	lgdtl	(gdt_desc - trampoline + TRAMPOLINE)
	movl	%cr0, %eax
	orl	$1, %eax
	movl	%eax, %cr0
	ljmpl	$0x08, $ap_main
	.balign	8
gdt:
	.quad	0
	.quad	0x00cf9a000000ffff	/* 0x08: code, flat 4 GiB */
	.quad	0x00cf92000000ffff	/* 0x10: data, flat 4 GiB */
gdt_desc:
	.word	gdt_desc - gdt - 1
	.long	gdt - trampoline + TRAMPOLINE
trampoline_end:
	.code32

	.data
	.balign	64
	.globl	baton
baton:	.long	0
	.balign	64
	.globl	pair
pair:	.long	0
	.skip	28
	.long	0
	.balign	64
	.globl	shared
shared:	.long	0
	.balign	64
	.globl	private
private: .long	0
	.balign	64
	.globl	ap_ready
ap_ready: .long	0
	.balign	64

	.bss
	.balign	4096
	.skip	4096
bsp_stack_top:
	.skip	4096
ap_stack_top:
