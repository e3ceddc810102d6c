# dt: `make demo` and `make check` work on a fresh Debian 12 machine.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
LLVM_PREFIX ?= /usr/lib/llvm-22
LIT := $(LLVM_PREFIX)/bin/lit
NINJA := ninja -C $(BUILD_DIR)

.PHONY: all deps configure build check check-roundtrip demo docs clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD_DIR)/build.ninja: | deps
	cmake -G Ninja -S . -B $(BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DMLIR_DIR=$(LLVM_PREFIX)/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=$(LIT)

configure: $(BUILD_DIR)/build.ninja

build: deps configure
	$(NINJA)

# Every test: lit (dialect, passes, fuzzing, docs) and gtest through lit, then
# the lit suite again with every dt-opt output reparsed (--verify-roundtrip).
check: build
	$(NINJA) DTUnitTests mlir-doc dt-plan-table
	LIT=$(LIT) scripts/check.sh $(BUILD_DIR)

demo: build
	@scripts/demo.sh $(BUILD_DIR)

docs: build
	$(NINJA) dt-doc dt-plan-table
	$(BUILD_DIR)/bin/dt-plan-table > docs/Redistribution.md

clean:
	rm -rf $(BUILD_DIR)
