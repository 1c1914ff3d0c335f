# specl - build, test and benchmark. `make help` lists the targets.

CC      ?= cc
WARN     = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wpointer-arith -Wformat=2 -Wvla
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_POSIX_C_SOURCE=200809L -DCL_TARGET_OPENCL_VERSION=120 $(WARN)
ifdef SANITIZE
CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif
LLVM    ?= /usr/lib/llvm-14
B        = build

# specl's version: set here alone. The build writes it into VERSION_H
# (SPECL_VERSION, for --version and every emitted file's header), which
# it rewrites only when it changes, so that a new version rebuilds what
# prints it; the CMake package and specl.pc take it from here too.
VERSION    = 0.2.0
VERSION_H  = $(B)/include/specl_version.h
CFLAGS    += -I$(B)/include

LIB_SRC  = $(filter-out gen/main.c,$(wildcard gen/*.c))
LIB_OBJ  = $(LIB_SRC:gen/%.c=$(B)/obj/%.o) $(B)/obj/templates.o
TEMPLATES = $(sort $(wildcard templates/*.cl templates/*.in)) tests/naive.cl \
            tests/test_gather.cl bench/ceilings.cl
TEST_SRC = $(wildcard tests/*.c)
LIBS     = -lyaml -lOpenCL -lm -ldl -pthread

.PHONY: FORCE all deps run test test-full test-wide test-vendor smoke golden-update valgrind fuzz \
        fuzz-spec fuzz-db fuzz-import bench mutation install uninstall clean help \
        test-targets
all: $(B)/specl

help:
	@echo "make            build $(B)/specl"
	@echo "make run        generate specs/seeds.yaml, run, verify and time on the default OpenCL device"
	@echo "make test       the test suite (CUnit; PoCL when no other device)"
	@echo "make test-full  the test suite with the wide sweep"
	@echo "make test-vendor  build and run examples/cmake from the source tree and from an install"
	@echo "make test-targets  bench/targets.py: its self-test and one case (part of make test)"
	@echo "make test-wide  the wide device sweep, then numeric, sweep and stub (for a GPU: SPECL_DEVICE=P:D)"
	@echo "make CC=clang B=build-clang smoke  build with clang, quick checks of that build"
	@echo "make bench      benchmark specs/bench.yaml against naive and CLBlast"
	@echo "make $(B)/lab    kernel design experiments (bench/lab/lab.c)"
	@echo "make golden-update  refresh tests/golden from the current generator"
	@echo "make valgrind   spec reader and generator under valgrind"
	@echo "make fuzz       fuzz-spec, fuzz-db, fuzz-import (clang libFuzzer), FUZZ_SECONDS each"
	@echo "make fuzz-spec  fuzz the spec reader and the emitter"
	@echo "make fuzz-db    fuzz the tuning-database loader"
	@echo "make fuzz-import  fuzz specl import (a config that reads gives specs that read)"
	@echo "make mutation   break generated code on purpose; the suites must catch it"
	@echo "make SANITIZE=address,undefined test"
	@echo "make install [PREFIX=/usr/local] [DESTDIR=]  specl, its CMake package, specl.pc, specl.1, docs"
	@echo "make uninstall [PREFIX=/usr/local] [DESTDIR=]"

# Targets that need packages run deps first and then build through a
# second make, so that `make -j` never compiles before they are installed.
deps:
	@sh tools/deps.sh

$(B)/obj $(B)/tests:
	@mkdir -p $@

$(VERSION_H): Makefile
	@mkdir -p $(@D)
	@printf '/* specl_version.h - written by the Makefile from its VERSION. */\n#define SPECL_VERSION "%s"\n' \
	    '$(VERSION)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(B)/embed: tools/embed.c | $(B)/obj
	$(CC) -std=c11 -O1 $(WARN) -o $@ $<

$(B)/templates.c: $(B)/embed $(TEMPLATES)
	$(B)/embed $@ $(TEMPLATES)

$(B)/obj/templates.o: $(B)/templates.c | $(B)/obj
	$(CC) $(CFLAGS) -Igen -Wno-overlength-strings -c -o $@ $<

$(B)/obj/%.o: gen/%.c $(wildcard gen/*.h) $(VERSION_H) | $(B)/obj
	$(CC) $(CFLAGS) -Igen -c -o $@ $<

$(B)/libspecl.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(B)/specl: $(B)/obj/main.o $(B)/libspecl.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

run: deps
	$(MAKE) --no-print-directory $(B)/specl
	$(B)/specl gen specs/seeds.yaml -o out
	$(B)/specl bench specs/seeds.yaml --rows 128 --quick

bench: deps
	$(MAKE) --no-print-directory $(B)/specl
	sh bench/run.sh cpu

# bench/lab: candidate kernel designs timed side by side (see lab.c)
$(B)/lab: bench/lab/lab.c | $(B)/obj
	$(CC) $(CFLAGS) -o $@ $< -lOpenCL -lm

clean:
	rm -rf $(B) out

# ---- install: PREFIX/bin/specl, the CMake package that find_package(specl)
# reads (specl::specl and specl_generate) in PREFIX/lib/cmake/specl,
# pkg-config's specl.pc (the version; OpenCL for the emitted sources) in
# PREFIX/lib/pkgconfig, the man page specl.1, and LICENSE, CHANGELOG.md
# and the documents in PREFIX/share/doc/specl. DESTDIR stages it
# (packaging). specl-config.cmake finds PREFIX from its own place.
PREFIX    ?= /usr/local
INSTALL   ?= install
BIN_DIR    = $(DESTDIR)$(PREFIX)/bin
CMAKE_DIR  = $(DESTDIR)$(PREFIX)/lib/cmake/specl
DOC_DIR    = $(DESTDIR)$(PREFIX)/share/doc/specl
PC_DIR     = $(DESTDIR)$(PREFIX)/lib/pkgconfig
MAN_DIR    = $(DESTDIR)$(PREFIX)/share/man/man1
TOP_DOCS   = LICENSE README.md CHANGELOG.md
CMAKE_FILES = cmake/specl-config.cmake cmake/SpeclGenerate.cmake
DOC_FILES  = $(wildcard docs/*.md)

$(B)/specl-config-version.cmake: cmake/specl-config-version.cmake.in $(VERSION_H) | $(B)/obj
	sed 's/@SPECL_VERSION@/$(VERSION)/g' $< > $@.tmp && mv $@.tmp $@

$(B)/specl.1: dist/specl.1.in $(VERSION_H)
	sed 's/@VERSION@/$(VERSION)/g' $< > $@.tmp && mv $@.tmp $@

# specl.pc names PREFIX: written by each install.
$(B)/specl.pc: dist/specl.pc.in $(VERSION_H) FORCE
	sed -e 's/@VERSION@/$(VERSION)/g' -e $(call sq,s|@PREFIX@|$(PREFIX)|g) $< > $@.tmp
	mv $@.tmp $@
FORCE:

# $(call sq,PATH): PATH quoted for the shell ('...', a ' in it as '\''):
# DESTDIR and PREFIX may hold spaces. $(call sq_in,DIR,NAMES): DIR/NAME
# for each NAME, each quoted.
sq     = '$(subst ','\'',$(1))'
sq_in  = $(foreach f,$(2),$(call sq,$(1)/$(f)))

install: $(B)/specl $(B)/specl-config-version.cmake $(B)/specl.pc $(B)/specl.1
	$(INSTALL) -d $(call sq,$(BIN_DIR)) $(call sq,$(CMAKE_DIR)) $(call sq,$(DOC_DIR)/docs) \
	    $(call sq,$(PC_DIR)) $(call sq,$(MAN_DIR))
	$(INSTALL) -m 755 $(B)/specl $(call sq,$(BIN_DIR)/specl)
	$(INSTALL) -m 644 $(CMAKE_FILES) $(B)/specl-config-version.cmake $(call sq,$(CMAKE_DIR))
	$(INSTALL) -m 644 $(B)/specl.pc $(call sq,$(PC_DIR)/specl.pc)
	$(INSTALL) -m 644 $(B)/specl.1 $(call sq,$(MAN_DIR)/specl.1)
	$(INSTALL) -m 644 $(TOP_DOCS) $(call sq,$(DOC_DIR))
	$(INSTALL) -m 644 $(DOC_FILES) $(call sq,$(DOC_DIR)/docs)

uninstall:
	rm -f $(call sq,$(BIN_DIR)/specl)
	rm -f $(call sq_in,$(CMAKE_DIR),$(notdir $(CMAKE_FILES)) specl-config-version.cmake)
	rm -f $(call sq,$(PC_DIR)/specl.pc) $(call sq,$(MAN_DIR)/specl.1)
	rm -f $(call sq_in,$(DOC_DIR),$(TOP_DOCS)) \
	    $(call sq_in,$(DOC_DIR)/docs,$(notdir $(DOC_FILES)))
	-rmdir $(call sq,$(CMAKE_DIR)) $(call sq,$(DOC_DIR)/docs) $(call sq,$(DOC_DIR)) \
	    $(call sq,$(PC_DIR)) $(call sq,$(MAN_DIR)) 2>/dev/null

# ---- tests (rules for generated stubs and fixtures live in tests/tests.mk)
TEST_CFLAGS = $(CFLAGS) -Igen -Itests -I$(B)/tests/stubs -I$(LLVM)/include
TEST_LIBS   = $(LIBS) -pthread -lcunit -L$(LLVM)/lib -lclang -Wl,-rpath,$(LLVM)/lib
TEST_OBJ    = $(patsubst tests/%.c,$(B)/tests/%.o,$(filter-out tests/fuzz_spec.c \
              tests/fuzz_import_target.c,$(TEST_SRC)))

-include tests/tests.mk

$(B)/tests/%.o: tests/%.c $(wildcard tests/*.h gen/*.h) $(VERSION_H) $(TEST_STUB_HEADERS) | $(B)/tests
	$(CC) $(TEST_CFLAGS) -c -o $@ $<

$(B)/specl_tests: $(TEST_OBJ) $(TEST_STUB_OBJ) $(B)/libspecl.a
	$(CC) $(LDFLAGS) -o $@ $^ $(TEST_LIBS)

# The build before the suites runs on every core unless make was given -j
# (a fresh machine's `make test` spent minutes compiling one file a time).
JOBS       ?= $(shell nproc 2>/dev/null || echo 1)
BUILD_JOBS  = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

# PoCL and its LLVM keep objects past exit: LeakSanitizer is told to ignore
# those two libraries (specl's own allocations are still checked). A
# library loaded and unloaded during a run can leave a stale entry in the
# main thread's dynamic TLS, which LeakSanitizer's scan at exit reads and
# crashes on ("Tracer caught signal 11", "DTLS ... at 0x6e0", seen in
# `specl bench` of attention on PoCL): ASan is told not to track dynamic
# TLS. Both settings mean nothing to a build without ASan.
test: deps
	$(MAKE) --no-print-directory $(BUILD_JOBS) $(B)/specl $(B)/specl_tests
	ASAN_OPTIONS=intercept_tls_get_addr=0 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/tune/lsan.supp:print_suppressions=0 \
	    sh tests/run-suites.sh $(B)
	$(MAKE) --no-print-directory test-vendor
	$(MAKE) --no-print-directory test-targets

# bench/targets.py: its verdicts on fixed figures (the GPU checks), then
# one case on PoCL through specl bench; a filter that matches nothing, and
# a case that does not run, exit non-zero.
test-targets: $(B)/specl
	python3 bench/targets.py --self-test
	python3 bench/targets.py --list --area cpu-ladder | \
	    grep -q '^cpu-ladder: ladder tune seeds 512 f32: specs/seeds.yaml'
	python3 bench/targets.py --specl $(B)/specl --no-peers --reps 2 \
	    --area vocab --match "151936 f32 x 1 rows" 2>/dev/null | \
	    grep -q '| vocab | softmax 151936 f32 x 1 rows | .* µs; .*% of a copy .* | ≥ 80% of a copy: \(met\|missed by\)'
	! python3 bench/targets.py --no-peers --match "no such case" \
	    2>/dev/null
	! python3 bench/targets.py --specl /bin/false --no-peers \
	    --area vocab --match "151936 f32 x 1 rows" >/dev/null 2>&1
	@echo "test-targets: ok"

# examples/cmake, a C++ program of two specs' kernels, configured, built
# and run as a user's project would be: (a) with the source tree's
# cmake/SpeclGenerate.cmake and this build's specl, (b) through
# find_package(specl) from `make install` into a temporary prefix, which
# `make uninstall` must then leave empty; (c) install and uninstall
# staged in a DESTDIR with a space, which must land there alone (nothing
# new in the source tree) and leave no file. VENDOR_UNITY:
# CMAKE_UNITY_BUILD for (a) and (b) (ON, the example's own default: the
# NAME.c of several kernels in one translation unit).
VENDOR_DIR   = $(B)/vendor
VENDOR_PREFIX = $(CURDIR)/$(VENDOR_DIR)/prefix
VENDOR_STAGE = $(CURDIR)/$(VENDOR_DIR)/staged root
VENDOR_UNITY ?= ON
CMAKE       ?= cmake
VENDOR_CMAKE = $(CMAKE) -S examples/cmake -DCMAKE_UNITY_BUILD=$(VENDOR_UNITY)
test-vendor: $(B)/specl
	rm -rf $(VENDOR_DIR)
	$(VENDOR_CMAKE) -B $(VENDOR_DIR)/tree -DCMAKE_DISABLE_FIND_PACKAGE_specl=ON \
	    -DSPECL_EXECUTABLE=$(call sq,$(CURDIR)/$(B)/specl)
	$(CMAKE) --build $(VENDOR_DIR)/tree
	$(VENDOR_DIR)/tree/specl_demo
	$(MAKE) --no-print-directory install PREFIX=$(call sq,$(VENDOR_PREFIX)) DESTDIR=
	$(VENDOR_CMAKE) -B $(VENDOR_DIR)/installed -DCMAKE_PREFIX_PATH=$(call sq,$(VENDOR_PREFIX)) \
	    | tee $(VENDOR_DIR)/installed.log
	grep -qxF -- $(call sq,-- specl $(VERSION): $(VENDOR_PREFIX)/lib/cmake/specl) \
	    $(VENDOR_DIR)/installed.log
	$(CMAKE) --build $(VENDOR_DIR)/installed
	$(VENDOR_DIR)/installed/specl_demo
	@set -e; pc=$(call sq,$(VENDOR_PREFIX)/lib/pkgconfig); \
	if command -v pkg-config >/dev/null; then \
	    test "$$(PKG_CONFIG_PATH="$$pc" pkg-config --modversion specl)" = $(VERSION); \
	    PKG_CONFIG_PATH="$$pc" pkg-config --libs specl | grep -qw -- -lOpenCL; \
	    test -x "$$(PKG_CONFIG_PATH="$$pc" pkg-config --variable=specl specl)"; \
	    echo "test-vendor: pkg-config finds specl $(VERSION)"; fi
	$(MAKE) --no-print-directory uninstall PREFIX=$(call sq,$(VENDOR_PREFIX)) DESTDIR=
	@left=$$(find $(call sq,$(VENDOR_PREFIX)) -type f); \
	if [ -n "$$left" ]; then echo "uninstall left: $$left"; exit 1; fi
	@echo "test-vendor: install and uninstall staged in '$(VENDOR_STAGE)'"
	@set -e; stage=$(call sq,$(VENDOR_STAGE)); before=$$(ls -A); \
	$(MAKE) --no-print-directory install DESTDIR="$$stage" PREFIX=/opt/specl; \
	test -x "$$stage/opt/specl/bin/specl"; \
	test -f "$$stage/opt/specl/lib/cmake/specl/specl-config-version.cmake"; \
	test -f "$$stage/opt/specl/share/doc/specl/docs/cli.md"; \
	test -f "$$stage/opt/specl/share/doc/specl/CHANGELOG.md"; \
	grep -qx 'prefix=/opt/specl' "$$stage/opt/specl/lib/pkgconfig/specl.pc"; \
	grep -qx 'Version: $(VERSION)' "$$stage/opt/specl/lib/pkgconfig/specl.pc"; \
	head -n 1 "$$stage/opt/specl/share/man/man1/specl.1" \
	    | grep -q '^\.TH SPECL 1 .*"specl $(VERSION)"'; \
	for c in gen check bench tune import list devices; do \
	    grep -q "^\.BI\{0,1\} \"\{0,1\}$$c" "$$stage/opt/specl/share/man/man1/specl.1" \
	    || { echo "specl.1 lacks $$c"; exit 1; }; done; \
	$(MAKE) --no-print-directory uninstall DESTDIR="$$stage" PREFIX=/opt/specl; \
	left=$$(find "$$stage" -type f); \
	if [ -n "$$left" ]; then echo "uninstall left: $$left"; exit 1; fi; \
	if [ "$$(ls -A)" != "$$before" ]; then \
	    echo "install wrote into the source tree:"; ls -A; exit 1; fi
	@echo "test-vendor: ok"

test-full: deps
	$(MAKE) --no-print-directory $(B)/specl $(B)/specl_tests
	$(B)/specl_tests --full

# A quick check of a build by another compiler, say `make CC=clang
# B=build-clang smoke` (.ci/run does it; the suites run on the default
# build): every spec checks, plans and the golden kernels' files come out
# as tests/golden holds them, the fuzz regressions replay, databases merge
# and a tiny tuning run goes through the device. No test driver: it needs
# what the suites need, and a second full run would double CI's time.
SMOKE_DIR = $(B)/smoke
smoke: deps
	$(MAKE) --no-print-directory $(B)/specl $(B)/fuzz_replay $(B)/fuzz_db_replay \
	    $(B)/fuzz_import_replay
	rm -rf $(SMOKE_DIR)
	$(B)/specl check $(wildcard specs/*.yaml tests/good/*.yaml) tests/golden/golden.yaml \
	    tests/stubs.yaml
	$(B)/specl plan tests/golden/golden.yaml -o $(SMOKE_DIR)/plan
	@set -e; for m in $(GOLDEN_MODELS); do \
	    echo "$(B)/specl plan specs/$$m.yaml -o $(SMOKE_DIR)/plan/$$m"; \
	    $(B)/specl plan specs/$$m.yaml -o $(SMOKE_DIR)/plan/$$m; \
	done
	$(B)/specl gen tests/golden/golden.yaml -o $(SMOKE_DIR)/gen
	@set -e; cd $(SMOKE_DIR); n=0; \
	for f in plan/*.plan plan/*/*.plan; do \
	    cmp $$f $(CURDIR)/tests/golden/$${f#plan/}; n=$$((n + 1)); \
	done; \
	for k in $(GOLDEN_FULL); do for x in cl h c; do \
	    cmp gen/$$k.$$x $(CURDIR)/tests/golden/$$k.$$x; n=$$((n + 1)); \
	done; done; echo "smoke: $$n files as tests/golden holds them"
	$(B)/fuzz_replay tests/fuzz/regressions tests/bad tests/good
	$(B)/fuzz_db_replay tests/fuzz/db-regressions tests/tune/bad tuning tests/tune/a.yaml
	$(B)/fuzz_import_replay tests/fuzz/import-regressions tests/models
	$(B)/specl db merge $(wildcard tuning/*.yaml) tests/tune/a.yaml tests/tune/b.yaml \
	    -o $(SMOKE_DIR)/db.yaml
	$(B)/specl tune tests/tune/small.yaml --kernel t_softmax --rows 8 --strategy random \
	    --max-evals 2 --reps 2 --db $(SMOKE_DIR)/db.yaml
	@echo "smoke: $(B) ok"

# The device suites and the wide sweep (tests/test_wide.c): meant for a
# GPU (make test-wide SPECL_DEVICE=P:D); the float64 references run on
# the host, so it takes long (half an hour or so), longer on a CPU device.
test-wide: deps
	$(MAKE) --no-print-directory $(B)/specl $(B)/specl_tests
	$(B)/specl_tests --wide wide numeric sweep stub
