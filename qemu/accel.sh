#!/usr/bin/env bash
# Print the accelerator QEMU should use: kvm where it demonstrably works, else tcg.
# /dev/kvm alone proves nothing (here it exists, but the CPU lacks vmx/svm and
# QEMU hangs), so require the CPU flag and a real KVM start of QEMU.
if [ -n "${ACCEL:-}" ]; then
	echo "$ACCEL"
	exit 0
fi
if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo &&
   echo quit | timeout 10 qemu-system-x86_64 -accel kvm -machine none -nodefaults \
	-display none -monitor stdio >/dev/null 2>&1; then
	echo kvm
else
	echo tcg
fi
