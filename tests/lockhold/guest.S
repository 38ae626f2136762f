/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A known instruction sequence for the lockhold plugin (bench/lockhold), booted
 * bare by QEMU as a multiboot image: 32-bit, no paging, interrupts off, so every
 * instruction between a lock's take and drop is one of these.
 *
 *  window 1: 1000 exclusive holds of exactly 100 instructions, taken by
 *            lock cmpxchg in spin_hold (called from call_site), dropped by a
 *            plain byte store;
 *  outside:  one exclusive hold of 2 instructions, which must not be counted;
 *  window 2: 500 shared holds of exactly 8 instructions, taken and dropped by
 *            lock xadd at shared_take;
 *  window 3: a plain store to the free lock word (an anomaly), 3 holds of
 *            exactly 5 instructions, then a hold of 3 at fail_take with a
 *            failed lock cmpxchg inside it (an anomaly);
 *  window 4: a reader nested in a reader (read_take twice: an anomaly), then
 *            both drops: one hold of 9, from the first take to the outer drop.
 * Then it leaves QEMU through isa-debug-exit (port 0xf4). Assembled with
 * --defsym NOMARKS=1 it has no marks, and the plugin's window 0 is all of it.
 */
	.macro	BEGIN
	.ifndef	NOMARKS
	xchgw	%bx, %bx
	.endif
	.endm
	.macro	END
	.ifndef	NOMARKS
	xchgw	%cx, %cx
	.endif
	.endm

	.set	MB_MAGIC, 0x1badb002
	.set	MB_FLAGS, 0

	.text
	.code32
	.align	4
	.long	MB_MAGIC, MB_FLAGS, -(MB_MAGIC + MB_FLAGS)
	.globl	_start
_start:
	cli
	movl	$stack_top, %esp

	BEGIN				/* window 1 */
	movl	$1000, %esi
1:
	.globl	call_site
call_site:
	call	spin_hold
	decl	%esi
	jnz	1b
	END

	xorl	%eax, %eax		/* outside any window */
	movl	$1, %ecx
	.globl	outside_take
outside_take:
	lock cmpxchgl %ecx, lockword
	nop
	movb	$0, lockword

	BEGIN				/* window 2 */
	movl	$500, %esi
2:
	movl	$0x200, %eax
	.globl	shared_take
shared_take:
	lock xaddl %eax, lockword
	.rept	6
	nop
	.endr
	movl	$-0x200, %eax
	lock xaddl %eax, lockword	/* 6 + 2: a hold of 8 */
	decl	%esi
	jnz	2b
	END

	BEGIN				/* window 3 */
	movb	$0, lockword		/* dropped, never taken */
	movl	$3, %esi
3:
	xorl	%eax, %eax
	movl	$1, %ecx
	.globl	short_take
short_take:
	lock cmpxchgl %ecx, lockword
	.rept	4
	nop
	.endr
	movb	$0, lockword		/* 4 + 1: a hold of 5 */
	decl	%esi
	jnz	3b
	xorl	%eax, %eax
	.globl	fail_take
fail_take:
	lock cmpxchgl %ecx, lockword
	xorl	%eax, %eax
	lock cmpxchgl %ecx, lockword	/* fails: the lock is held */
	movb	$0, lockword		/* a hold of 3 */
	END

	BEGIN				/* window 4 */
	.globl	read_call
read_call:
	call	read_take
	call	read_take		/* nested */
	movl	$-0x200, %eax
	lock xaddl %eax, lockword	/* the inner drop */
	movl	$-0x200, %eax
	lock xaddl %eax, lockword	/* the outer drop: a hold of 9 */
	END

	movb	$0, %al
	outb	%al, $0xf4
	hlt

read_take:
	movl	$0x200, %eax
	.globl	read_xadd
read_xadd:
	lock xaddl %eax, lockword
	ret

	.globl	spin_take
spin_hold:
	xorl	%eax, %eax
	movl	$1, %ecx
spin_take:
	lock cmpxchgl %ecx, lockword
	.rept	99
	nop
	.endr
	movb	$0, lockword		/* 99 + 1: a hold of 100 */
	ret

	.data
	.align	4
	.globl	lockword
lockword:
	.long	0

	.bss
	.align	16
	.skip	4096
stack_top:
