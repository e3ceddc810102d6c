// dt-compile reports what it cannot compile, naming the value and the reason,
// and writes nothing.
// RUN: rm -f %t.so
// RUN: not dt-compile %s -o %t.so 2>&1 | FileCheck %s --implicit-check-not="see current operation"
// RUN: not test -e %t.so
// RUN: not dt-compile %s --target=tpu -o %t.so 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: dt-compile: --target=tpu: expected cpu or cuda
// RUN: not dt-compile %s --target=cuda --profile-kernels -o %t.so 2>&1 | FileCheck %s --check-prefix=PROFILE
// PROFILE: dt-compile: --profile-kernels times the CPU target's kernels; dt-run --profile times a GPU's with events, in any CUDA artifact
// RUN: not dt-compile %t.missing.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: dt-compile: cannot open input file '{{.*}}missing.mlir'
// RUN: not dt-compile %s 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: dt-compile: a shared object needs an output path: -o FILE.so
// RUN: not dt-compile --explain --emit=description %s 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: dt-compile: --explain prints the cost report on stdout: write the output elsewhere with -o FILE
// An output path that cannot be written is reported before compiling,
// naming it; an input without entries, and a file that is not MLIR (an
// artifact, a .npy), are errors too, and leave an existing output as it was.
// RUN: not dt-compile %s -o %t.no-such-dir/x.so 2>&1 | FileCheck %s --check-prefix=NODIR
// NODIR: dt-compile: cannot write {{.*}}.no-such-dir/x.so: there is no directory {{.*}}.no-such-dir{{$}}
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: not dt-compile %s -o %t.dir 2>&1 | FileCheck %s --check-prefix=ISDIR
// ISDIR: dt-compile: cannot write {{.*}}.dir: it is a directory
// A directory no file can be created in, whatever the permissions say
// (root may write anywhere, but not in /proc): the linker said it first.
// RUN: not dt-compile %s -o /proc/x.so 2>&1 | FileCheck %s --check-prefix=PROC
// PROC: dt-compile: cannot write /proc/x.so: cannot create a file in /proc: {{.+}}
// RUN: echo keep > %t.keep.so && echo "// nothing" > %t.empty.mlir
// RUN: not dt-compile %t.empty.mlir -o %t.keep.so 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: empty.mlir:1:1: error: the program has no public function with a body: an artifact's entries are its public functions
// RUN: printf 'func.func private @helper() {\n  return\n}\n' > %t.private.mlir
// RUN: not dt-compile %t.private.mlir -o %t.keep.so 2>&1 | FileCheck %s --check-prefix=PRIVATE
// PRIVATE: private.mlir:1:1: error: the program has no public function with a body: {{.*}}; @helper is private
// RUN: not dt-compile %dt_tools_dir/dt-run -o %t.keep.so 2>&1 | FileCheck %s --check-prefix=ELF
// ELF: dt-run: error: not MLIR text or bytecode: byte 0 is 0x7f (an ELF file: a dt-compile artifact runs with dt-run){{$}}
// RUN: %npy array %t.npy '<f4' 2 1,2
// RUN: not dt-opt %t.npy 2>&1 | FileCheck %s --check-prefix=NPY
// NPY: .npy: error: not MLIR text or bytecode: byte {{[0-9]+}} is 0x{{[0-9a-f]+}} (a .npy file: dt-run reads one with --input)
// RUN: FileCheck %s --check-prefix=KEPT < %t.keep.so
// KEPT: {{^keep$}}
// MLIR bytecode is not mistaken for binary junk.
// RUN: dt-opt %s --emit-bytecode -o %t.mlirbc
// RUN: dt-opt %t.mlirbc -o /dev/null

// --help lists dt-compile's options, not the ones LLVM's libraries register.
// RUN: dt-compile --help | FileCheck %s --check-prefix=HELP
// HELP: dt-compile options:
// HELP: --emit=<value>
// HELP: --target=<string>
// HELP-NOT: aarch64
// HELP-NOT: --x86-

// An entry whose argument has a dynamic shape: the runtime allocates every
// buffer from the description.
// CHECK: dt-compile-errors.mlir:[[@LINE+6]]:1: error: arg #0 has type 'tensor<?x8xf32>'; an entry takes and returns statically shaped tensors only
// The single-device program, lowered at the same time on a thread of its
// own, fails on it too; its errors are dropped when the SPMD program's
// lowering failed, so that one problem is reported once.
// CHECK-NOT: error
dt.mesh @mesh = <["tp" = 2]>
func.func @main(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  return %x : tensor<?x8xf32>
}
