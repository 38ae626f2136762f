# forkscale: the single entry point. `make run` is the main job, `make check` the
# test command; see README.md.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c

FLAVOR ?= debug
SMP ?= 2
# When make check must have printed its summary (seconds since the epoch): 85
# minutes after this make started, unless given (.ci/run gives it from CI's
# start). tests/check.sh cuts every step's time limit to it.
ifndef CHECK_DEADLINE
CHECK_DEADLINE := $(shell echo $$(($$(date +%s) + 5100)))
endif
export CHECK_DEADLINE
CACHE ?= $(HOME)/.cache/forkscale
OUT ?= $(CURDIR)/out
export FLAVOR SMP CACHE

# $(shell) does not see exported variables (make < 4.4), so pass them explicitly.
KERNEL_SH = FLAVOR='$(FLAVOR)' CACHE='$(CACHE)' \
	$(foreach v,TARBALL SERIES_DIR CONFIG_DIR,$(if $($(v)),$(v)='$($(v))')) kernel/kernel.sh
# Evaluated when a recipe runs, i.e. after `kernel` has made them exist.
KDIR = $(shell $(KERNEL_SH) kdir)
KSRC = $(shell $(KERNEL_SH) source)
KHDR = $(shell $(KERNEL_SH) headers)
BZIMAGE = $(KDIR)/arch/x86/boot/bzImage
INITRD := $(OUT)/$(FLAVOR)/initramfs.cpio
KBUILD_MODULE = scripts/kbuild-module.sh $(KDIR) $(CURDIR)

comma := ,
.PHONY: all deps kernel module twins selftests initramfs run check check-fetch check-posted-build check-guest bench conformance soak lint vm devtree patches patches-check clean
all: initramfs

deps:
	@scripts/deps.sh

kernel: deps
	@kernel/kernel.sh build > /dev/null

module: kernel
	@$(KBUILD_MODULE) --no-print-directory modules

selftests: kernel
	@$(MAKE) -s -C selftests/forkscale KSRC=$(KSRC) KHDR=$(KHDR) OUT=$(OUT)/selftests

# forkscale.ko with one defect each (tests/twins.txt), which make check's tests
# must catch (selftests/forkscale/twins.sh).
TWINS_DIR = $(OUT)/$(FLAVOR)/twins
twins: module
	@scripts/build-twins.sh $(KDIR) $(TWINS_DIR)

# The kernel crate's samples (samples/, built by Kbuild with the module).
SAMPLE_KOS = $(patsubst %.rs,%.ko,$(wildcard samples/*.rs))
initramfs: module selftests twins
	@mkdir -p $(dir $(INITRD))
	@TWINS=$(TWINS_DIR) qemu/mkinitramfs.sh $(INITRD) $(OUT)/selftests rust/forkscale.ko \
		tests/modules/forkscale_leaky.ko $(SAMPLE_KOS) \
		$(wildcard $(KDIR)/samples/kmemleak/kmemleak-test.ko)

run: initramfs
	@echo "run: booting $(FLAVOR) kernel under $$(qemu/accel.sh) with $(SMP) vCPUs"
	@qemu/run-vm.sh $(BZIMAGE) $(INITRD) $(OUT)/run run
	@qemu/report.sh $(OUT)/run

# The posted kernel (stock 7.3 and the merge set alone) is built and boots in it
# too. When it is not cached, its build starts first, at nice 19, and runs on
# beside the series' build. Where the kernel groups tasks by session
# (autogroup, as on this machine), nice ranks it only within its own session,
# which setsid makes: the two builds then share the CPUs about equally (the
# cold run at 9121299: the series' in 873 s, the posted one in 792 s, both done
# before the tests began). tests/check.sh waits for it before the posted
# kernel's guest, and stops it if check.sh is stopped (its process group is in
# out/check/posted-early.pid). A make check stopped before check.sh runs leaves
# it to finish into the cache.
check-posted-build: deps
	@mkdir -p $(OUT)/check
	@if FLAVOR=$(FLAVOR) $(POSTED_KERNEL) source > $(OUT)/check/posted-early.log 2>&1; then \
		FLAVOR=$(FLAVOR) setsid -f bash -c 'echo $$$$ > "$$0"; exec nice -n 19 env "$$@" build' \
			$(OUT)/check/posted-early.pid $(POSTED_KERNEL) < /dev/null >> $(OUT)/check/posted-early.log 2>&1; \
	else \
		echo "check: no posted kernel source tree ($(OUT)/check/posted-early.log); tests/check.sh reports it" >&2; \
	fi

check: check-posted-build initramfs
	@tests/check.sh $(BZIMAGE) $(INITRD) $(KDIR) $(OUT)/check

# make deps' source fetch against the real mirror with fake pins: it downloads
# the 167 MB .deb twice, so it is not part of make check.
check-fetch:
	@mkdir -p $(OUT)
	@tests/host/source_fetch.sh | tee $(OUT)/check-fetch.tap; ! grep -q '^not ok' $(OUT)/check-fetch.tap

# The development loop: one boot, the guest tests T names (T=a,b; CASE=<case> for one
# kselftest-harness case; TWIN=<name> boots that broken twin of tests/twins.txt as the
# module). Rebuilds only what changed, and the module's twins only for twins.sh.
GUEST_INITRD = $(OUT)/$(FLAVOR)/check-guest.cpio
GUEST_TWINS = $(filter twins.sh,$(subst $(comma), ,$(T)))
GUEST_KO = $(if $(TWIN),$(TWINS_DIR)/$(TWIN)/forkscale.ko,rust/forkscale.ko)
check-guest: module selftests $(if $(GUEST_TWINS),twins)
	@$(if $(TWIN),scripts/build-twins.sh $(KDIR) $(TWINS_DIR) $(TWIN))
	@mkdir -p $(dir $(GUEST_INITRD))
	@TWINS=$(if $(GUEST_TWINS),$(TWINS_DIR)) \
		qemu/mkinitramfs.sh $(GUEST_INITRD) $(OUT)/selftests $(GUEST_KO) \
		tests/modules/forkscale_leaky.ko $(SAMPLE_KOS) \
		$(wildcard $(KDIR)/samples/kmemleak/kmemleak-test.ko) > /dev/null
	@tests/check-guest.sh $(BZIMAGE) $(GUEST_INITRD) $(OUT)/selftests $(OUT)/check-guest "$(T)" "$(CASE)"

# The soak (SOAK_SECS, default 600) and fault injection on the debug kernel; make
# check runs a 60 s version of the same test.
soak: initramfs
	@if [ "$(FLAVOR)" != debug ]; then echo "soak: needs FLAVOR=debug" >&2; exit 2; fi
	@tests/soak.sh $(BZIMAGE) $(INITRD) $(OUT)/soak

# checkpatch --strict, rustfmt, CLIPPY=1 and W=1 on what the series and the module
# add (kernel/lint.sh); make check runs it too.
lint: kernel
	@kernel/lint.sh $(OUT)/lint

# Every variant in one run: stock 7.3 and the series' variants, throughput
# from the perf flavour, lock statistics from the debug flavour. SMP=1,2,4 sweeps
# vCPU counts; QUICK=1 is the short run. Writes Documentation/results.md.
# PATHLEN=1: instructions per operation and lock hold path lengths (the perf
# flavour under icount, with the bench/lockhold plugin), written to
# Documentation/pathlen.md. PREBUILT=<dir>
# boots images built elsewhere and builds nothing (bench/bench.sh).
STOCK_KERNEL = SERIES_DIR='$(CURDIR)/kernel/stock' CACHE='$(CACHE)' \
	$(foreach v,TARBALL CONFIG_DIR,$(if $($(v)),$(v)='$($(v))')) kernel/kernel.sh
# Stock plus the merge set alone (every series but measure/), as posted.
POSTED_KERNEL = SERIES_DIR='$(CURDIR)/kernel/posted' CACHE='$(CACHE)' \
	$(foreach v,TARBALL CONFIG_DIR,$(if $($(v)),$(v)='$($(v))')) kernel/kernel.sh
# PATHLEN=1 counts lock holds with bench/lockhold on the perf kernels alone.
BENCH_FLAVOURS = perf $(if $(filter 1,$(PATHLEN) $(C2C)),,debug)
bench: $(if $(PREBUILT),,deps)
	@$(if $(PREBUILT),true,for f in $(BENCH_FLAVOURS); do \
		echo "bench: building the $$f kernels (cached) and initramfs"; \
		$(MAKE) -s --no-print-directory initramfs FLAVOR=$$f; \
		FLAVOR=$$f $(STOCK_KERNEL) build > /dev/null; \
		[ "$(KERNELS)" = series ] || FLAVOR=$$f $(POSTED_KERNEL) build > /dev/null; \
	done)
	@OUT='$(OUT)' bench/bench.sh $(OUT)/bench

# Lookups by pid number on the series (without the module and under each
# batching setting) and on the posted kernel, and the kernel's own selftests,
# against a boot of stock 7.3: builds the stock debug kernel (cached; make bench
# builds it too), which make check does not build. (make check boots the posted
# kernel, and compares it with stock's committed results.)
conformance: initramfs
	@if [ "$(FLAVOR)" != debug ]; then echo "conformance: needs FLAVOR=debug" >&2; exit 2; fi
	@FLAVOR=debug $(STOCK_KERNEL) build > /dev/null
	@FLAVOR=debug $(POSTED_KERNEL) build > /dev/null
	@tests/conformance.sh "$$(FLAVOR=debug $(STOCK_KERNEL) kdir)/arch/x86/boot/bzImage" \
		$(BZIMAGE) $(INITRD) $(OUT)/conformance \
		"$$(FLAVOR=debug $(POSTED_KERNEL) kdir)/arch/x86/boot/bzImage"

# An interactive guest shell on this terminal (Ctrl-a x quits).
vm: initramfs
	@qemu/run-vm.sh $(BZIMAGE) $(INITRD) $(OUT)/vm shell

# Kernel development: commit in the tree `make devtree` prints, then `make patches`
# re-exports kernel/patches/ (git format-patch) and the cover letter from it.
devtree: deps
	@kernel/kernel.sh devtree

patches:
	@kernel/kernel.sh export
	@bench/doc_figures.py --write Documentation/review-notes.rst

# Each prefix of the series builds on its own (kernel and Rust doctests); slow
# (a full build, then one incremental build per patch), so not part of check.
patches-check: deps
	@kernel/patches-check.sh $(OUT)/patches-check

clean:
	@if [ -d "$(KDIR)" ]; then $(KBUILD_MODULE) clean; fi
	rm -rf $(OUT)
