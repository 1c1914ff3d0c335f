# tests.mk - generated host stubs the test driver links, and the
# golden-update, valgrind and fuzz targets. Included by the Makefile, which
# links $(B)/specl_tests from TEST_OBJ + TEST_STUB_OBJ + libspecl.a.

# ---- libclang is dlopen'd by the syntax suite (RTLD_LOCAL), not linked:
# PoCL brings its own LLVM (15 on Debian 12), and libLLVM-14 in the global
# symbol scope makes PoCL's compiler crash (segfault in clBuildProgram) in
# every device suite of specl_tests.
TEST_LIBS   := $(filter-out -lclang,$(TEST_LIBS)) -ldl
TEST_CFLAGS += -DSPECL_LIBCLANG='"$(LLVM)/lib/libclang.so.1"' -DSPECL_BIN='"$(B)/specl"'

# ---- host stubs of tests/stubs.yaml, built as a vendoring project would
STUB_DIR   = $(B)/tests/stubs
STUB_NAMES = stub_lora stub_lora_delta stub_lora_tc stub_softmax stub_rmsnorm stub_layernorm \
             stub_lora_rows stub_lora_backward stub_lora_split stub_swiglu_backward \
             stub_add_rmsnorm stub_rope stub_rmsnorm_backward \
             stub_layernorm_backward stub_cross_entropy stub_lora_out_in \
             stub_lora_backward_out_in stub_attention stub_softmax_coop \
             stub_xent_shared
STUB_FILES = $(foreach n,$(STUB_NAMES),$(STUB_DIR)/$(n).c $(STUB_DIR)/$(n).h $(STUB_DIR)/$(n).cl)
TEST_STUB_HEADERS = $(STUB_NAMES:%=$(STUB_DIR)/%.h) $(STUB_DIR)/stub_broken.h \
                    $(STUB_DIR)/stub_fallback.h $(STUB_DIR)/stub_in_place.h \
                    $(STUB_DIR)/stub_rows_broken.h $(STUB_DIR)/stub_top_broken.h
TEST_STUB_OBJ     = $(STUB_NAMES:%=$(STUB_DIR)/%.o) $(STUB_DIR)/stub_broken.o \
                    $(STUB_DIR)/stub_fallback.o $(STUB_DIR)/stub_in_place.o \
                    $(STUB_DIR)/stub_rows_broken.o $(STUB_DIR)/stub_top_broken.o

STUB_CFLAGS = -std=c99 -Wpedantic -Wall -Wextra -Wshadow -Wcast-qual -Wconversion -Werror \
              -O2 -g
ifdef SANITIZE
STUB_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

$(STUB_FILES) &: tests/stubs.yaml $(B)/specl
	$(B)/specl gen tests/stubs.yaml -o $(STUB_DIR)

# Stubs broken on purpose: $(call renamed,FROM,TO) are sed's expressions
# that rename stub FROM to TO (its macros' upper-case prefix too); the
# recipe $(call break_variant,FROM,TO,V) writes $< so renamed to $@ with
# an #error in the parameters of its variant V alone.
upper = $(shell echo '$(1)' | tr a-z A-Z)
renamed = -e 's/$(1)/$(2)/g' -e 's/$(call upper,$(1))/$(call upper,$(2))/g'
define break_variant
sed -e '/^\/\* the parameters of variant $(3) \*\/$$/{n' \
    -e 'a\    "#error $(2): variant $(3) is broken on purpose\\n",' \
    -e '}' $(call renamed,$(1),$(2)) $< > $@.tmp
grep -q '"#error $(2)' $@.tmp && mv $@.tmp $@
endef

# stub_broken: stub_softmax renamed, with an #error as the first line of the
# first text of its kernels (after variant 0's parameters), which its
# variants share, so that stub_broken_create fails in clBuildProgram.
$(STUB_DIR)/stub_broken.h: $(STUB_DIR)/stub_softmax.h
	sed $(call renamed,stub_softmax,stub_broken) $< > $@.tmp && \
	    mv $@.tmp $@
$(STUB_DIR)/stub_broken.c: $(STUB_DIR)/stub_softmax.c
	sed $(call renamed,stub_softmax,stub_broken) \
	    -e '/^static const char \*const stub_broken_text1\[\] = {$$/a\    "#error stub_broken: this source is broken on purpose\\n",' \
	    $< > $@.tmp
	grep -q '"#error stub_broken' $@.tmp && mv $@.tmp $@

# stub_fallback: stub_softmax with its variant 1 (the CPU defaults)
# broken, so that create must pass over it.
$(STUB_DIR)/stub_fallback.h: $(STUB_DIR)/stub_softmax.h
	sed $(call renamed,stub_softmax,stub_fallback) $< > $@.tmp && \
	    mv $@.tmp $@
$(STUB_DIR)/stub_fallback.c: $(STUB_DIR)/stub_softmax.c
	$(call break_variant,stub_softmax,stub_fallback,1)

# stub_rows_broken: stub_lora_rows with its variant 2 (the CPU defaults
# for few rows) broken, so that on a CPU that rows range's variant fails
# to build at create.
$(STUB_DIR)/stub_rows_broken.h: $(STUB_DIR)/stub_lora_rows.h
	sed $(call renamed,stub_lora_rows,stub_rows_broken) $< > $@.tmp && \
	    mv $@.tmp $@
$(STUB_DIR)/stub_rows_broken.c: $(STUB_DIR)/stub_lora_rows.c
	$(call break_variant,stub_lora_rows,stub_rows_broken,2)

# stub_top_broken: stub_lora_rows with its variant 1 (the CPU defaults,
# its last rows range's) broken, so that on a CPU the handle runs another
# variant and the range for few rows still its own.
$(STUB_DIR)/stub_top_broken.h: $(STUB_DIR)/stub_lora_rows.h
	sed $(call renamed,stub_lora_rows,stub_top_broken) $< > $@.tmp && \
	    mv $@.tmp $@
$(STUB_DIR)/stub_top_broken.c: $(STUB_DIR)/stub_lora_rows.c
	$(call break_variant,stub_lora_rows,stub_top_broken,1)

# stub_in_place: stub_softmax with y allowed to be x (may_alias), as an op
# whose kernels work in place emits it (its in-place section included):
# the stub takes y == x from the same byte and refuses any other overlap.
$(B)/tests/gen_in_place: tests/in_place/gen_in_place.c $(B)/libspecl.a | $(B)/tests
	$(CC) $(CFLAGS) -Igen -o $@ $< $(B)/libspecl.a $(LIBS)
$(STUB_DIR)/stub_in_place.c $(STUB_DIR)/stub_in_place.h &: tests/stubs.yaml $(B)/tests/gen_in_place \
        | $(STUB_FILES)
	$(B)/tests/gen_in_place tests/stubs.yaml $(STUB_DIR)

$(TEST_STUB_OBJ): %.o: %.c $(TEST_STUB_HEADERS)
	$(CC) $(STUB_CFLAGS) -I$(STUB_DIR) -c -o $@ $<

# ---- golden files (tests/golden) and error messages (tests/bad/*.err).
# tests/golden pins what the generator decides (`specl plan`): NAME.plan
# for every kernel of golden.yaml, MODEL/NAME.plan for every kernel of
# specs/MODEL.yaml for each of GOLDEN_MODELS; and the emitted .cl/.h/.c of
# the GOLDEN_FULL kernels only (the syntax and stub suites compile and run
# every emission). Regenerated on purpose only; review with git diff.
# Always from the repo root with the same relative paths: the messages
# (tests/bad/*.err) name the spec path as given (the emitted files only
# its base name).
GOLDEN_FULL   = golden_rmsnorm
GOLDEN_MODELS = llama2-7b llama2-7b-train
TEST_CFLAGS  += -DSPECL_GOLDEN_FULL='"$(GOLDEN_FULL)"' -DSPECL_GOLDEN_MODELS='"$(GOLDEN_MODELS)"'
$(B)/tests/test_emit.o: tests/tests.mk

golden-update: $(B)/specl
	rm -f tests/golden/*.plan tests/golden/*.cl tests/golden/*.h tests/golden/*.c
	rm -rf $(GOLDEN_MODELS:%=tests/golden/%) $(B)/golden-full
	$(B)/specl plan tests/golden/golden.yaml -o tests/golden
	@set -e; for m in $(GOLDEN_MODELS); do \
	    echo "$(B)/specl plan specs/$$m.yaml -o tests/golden/$$m"; \
	    $(B)/specl plan specs/$$m.yaml -o tests/golden/$$m; \
	done
	$(B)/specl gen tests/golden/golden.yaml -o $(B)/golden-full
	cp $(foreach n,$(GOLDEN_FULL),$(B)/golden-full/$(n).cl $(B)/golden-full/$(n).h $(B)/golden-full/$(n).c) tests/golden/
	@for f in tests/bad/*.yaml; do \
	    $(B)/specl check $$f 2>&1 >/dev/null | grep -v '^specl: ' > $${f%.yaml}.err; \
	done; echo "rewrote tests/bad/*.err"
	@for f in tests/models/bad/*.json; do \
	    $(B)/specl import $$f 2>&1 >/dev/null | grep -v '^specl: ' > $${f%.json}.err; \
	done; echo "rewrote tests/models/bad/*.err"

# ---- valgrind: the reader and the generator on every spec and fixture
# (tests/tune/a.yaml: a database of one shape at two row counts, which gen
# --db makes rows ranges of), then the spec, emit and syntax suites (the
# device suites run PoCL, too noisy under valgrind). The bad fixtures are read in one run, which must
# exit 1 (specl's own status) with no valgrind error (which exits 3 there).
VALGRIND = valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
           --suppressions=tests/valgrind.supp
VG_GOOD  = $(wildcard tests/good/*.yaml specs/*.yaml) tests/golden/golden.yaml tests/stubs.yaml

valgrind: $(B)/specl $(B)/specl_tests $(B)/fuzz_replay $(B)/fuzz_db_replay \
          $(B)/fuzz_import_replay
ifdef SANITIZE
	@echo "make valgrind: build without SANITIZE" && exit 1
endif
	@set -e; for f in $(VG_GOOD); do \
	    $(VALGRIND) --error-exitcode=1 $(B)/specl check $$f >/dev/null; \
	done; echo "valgrind: good specs ok"
	@rc=0; $(VALGRIND) --error-exitcode=3 $(B)/specl check tests/bad/*.yaml \
	    >/dev/null 2>$(B)/valgrind.log || rc=$$?; \
	if [ $$rc -ne 1 ]; then cat $(B)/valgrind.log; echo "valgrind: bad fixtures: exit $$rc"; exit 1; fi; \
	echo "valgrind: bad fixtures ok"
	rm -rf $(B)/valgrind-out
	$(VALGRIND) --error-exitcode=1 $(B)/specl gen specs/*.yaml -o $(B)/valgrind-out
	$(VALGRIND) --error-exitcode=1 $(B)/specl plan specs/*.yaml -o $(B)/valgrind-out
	$(VALGRIND) --error-exitcode=1 $(B)/fuzz_replay tests/fuzz/regressions tests/bad tests/good
	$(VALGRIND) --error-exitcode=1 $(B)/fuzz_db_replay tests/fuzz/db-regressions tests/tune/bad \
	    tuning tests/tune/a.yaml
	$(VALGRIND) --error-exitcode=1 $(B)/fuzz_import_replay tests/fuzz/import-regressions \
	    tests/models
	$(VALGRIND) --error-exitcode=1 $(B)/specl_tests spec emit syntax

# ---- fuzzing the spec reader (and, for specs that validate, the emitter),
# the tuning-database loader (and, for databases that load, their round
# trip through tunedb_format and their use by gen --db) and the importer
# (a config that reads must give specs that read back)
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_DIR      = $(B)/fuzz
FUZZ_CFLAGS   = -g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -DCL_TARGET_OPENCL_VERSION=120 \
                -Igen -Itests -I$(B)/include -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_SEEDS    = $(wildcard specs/*.yaml tests/good/*.yaml tests/bad/*.yaml) \
                tests/golden/golden.yaml tests/stubs.yaml
FUZZ_DB_SEEDS = $(wildcard tuning/*.yaml tests/tune/*.yaml tests/tune/bad/*.yaml)
FUZZ_IMPORT_SEEDS = $(wildcard tests/models/*.json tests/models/bad/*.json)

# tests/fuzz_main.c is the main of the replay programs below; the test
# driver has its own (fuzz_db.c it links: it replays the database
# regressions in process).
TEST_OBJ := $(filter-out $(B)/tests/fuzz_main.o,$(TEST_OBJ))

$(B)/fuzz_spec: tests/fuzz_spec.c $(LIB_SRC) $(B)/templates.c $(wildcard gen/*.h) $(VERSION_H)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ tests/fuzz_spec.c $(LIB_SRC) $(B)/templates.c \
	    $(LIBS)

$(B)/fuzz_db: tests/fuzz_db.c tests/fuzz_db.h $(LIB_SRC) $(B)/templates.c $(wildcard gen/*.h) \
           $(VERSION_H)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ tests/fuzz_db.c $(LIB_SRC) $(B)/templates.c \
	    $(LIBS)

# The same targets without libFuzzer: they replay files and directories.
$(B)/fuzz_replay: tests/fuzz_spec.c tests/fuzz_main.c $(B)/libspecl.a
	$(CC) $(CFLAGS) -Igen -o $@ tests/fuzz_spec.c tests/fuzz_main.c \
	    $(B)/libspecl.a $(LDFLAGS) $(LIBS)

$(B)/fuzz_db_replay: tests/fuzz_db.c tests/fuzz_db.h tests/fuzz_main.c $(B)/libspecl.a
	$(CC) $(CFLAGS) -Igen -Itests -o $@ tests/fuzz_db.c tests/fuzz_main.c \
	    $(B)/libspecl.a $(LDFLAGS) $(LIBS)

FUZZ_IMPORT_SRC = tests/fuzz_import.c tests/fuzz_import_target.c

$(B)/fuzz_import: $(FUZZ_IMPORT_SRC) tests/fuzz_import.h $(LIB_SRC) $(B)/templates.c \
           $(wildcard gen/*.h) $(VERSION_H)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_IMPORT_SRC) $(LIB_SRC) $(B)/templates.c \
	    $(LIBS)

$(B)/fuzz_import_replay: $(FUZZ_IMPORT_SRC) tests/fuzz_import.h tests/fuzz_main.c \
           $(B)/libspecl.a
	$(CC) $(CFLAGS) -Igen -Itests -o $@ $(FUZZ_IMPORT_SRC) tests/fuzz_main.c \
	    $(B)/libspecl.a $(LDFLAGS) $(LIBS)

fuzz: fuzz-spec fuzz-db fuzz-import

fuzz-spec: $(B)/fuzz_spec
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/crashes
	@for f in $(FUZZ_SEEDS); do cp $$f $(FUZZ_DIR)/corpus/`echo $$f | tr / _`; done
	$(B)/fuzz_spec -max_total_time=$(FUZZ_SECONDS) -dict=tests/fuzz/spec.dict \
	    -artifact_prefix=$(FUZZ_DIR)/crashes/ -print_final_stats=1 \
	    $(FUZZ_DIR)/corpus tests/fuzz/regressions
	@echo "fuzz: no crash in $(FUZZ_SECONDS) s; crashers go to tests/fuzz/regressions/"

fuzz-db: $(B)/fuzz_db
	@mkdir -p $(FUZZ_DIR)/db-corpus $(FUZZ_DIR)/db-crashes
	@for f in $(FUZZ_DB_SEEDS); do cp $$f $(FUZZ_DIR)/db-corpus/`echo $$f | tr / _`; done
	$(B)/fuzz_db -max_total_time=$(FUZZ_SECONDS) -dict=tests/fuzz/db.dict \
	    -artifact_prefix=$(FUZZ_DIR)/db-crashes/ -print_final_stats=1 \
	    $(FUZZ_DIR)/db-corpus tests/fuzz/db-regressions
	@echo "fuzz-db: no crash in $(FUZZ_SECONDS) s; crashers go to tests/fuzz/db-regressions/"

fuzz-import: $(B)/fuzz_import
	@mkdir -p $(FUZZ_DIR)/import-corpus $(FUZZ_DIR)/import-crashes
	@for f in $(FUZZ_IMPORT_SEEDS); do \
	    cp $$f $(FUZZ_DIR)/import-corpus/`echo $$f | tr / _`; done
	$(B)/fuzz_import -max_total_time=$(FUZZ_SECONDS) -dict=tests/fuzz/import.dict \
	    -artifact_prefix=$(FUZZ_DIR)/import-crashes/ -print_final_stats=1 \
	    $(FUZZ_DIR)/import-corpus tests/fuzz/import-regressions
	@echo "fuzz-import: no crash in $(FUZZ_SECONDS) s; crashers go to" \
	    "tests/fuzz/import-regressions/"

# Breaks generated kernels and stubs on purpose; every mutation must be
# caught by the numeric, sweep and stub suites.
mutation: $(B)/specl $(B)/specl_tests
	sh tests/mutations.sh
