#!/usr/bin/env python3
"""Differential fuzzing of the whole compiler: random valid sharded programs,
each run by dt-run with --verify against the single-device program.

Each program is a random mesh (1 to 3 axes, sizes 1 to 4, at most 8 ranks),
an element type (f32, f64, f16, bf16, i32, i64: integer programs spell
the same ops in integers, keep values small by a remainder instead of tanh,
and verify exactly), random arguments with random
shardings (even and uneven, nested axes, shards smaller than the axis,
partial inputs of kinds that commute), and a random chain of ops over 1-D to
3-D tensors: elementwise maps (arith and math ops on tensors, and linalg's
named elementwise ops), divisions (by values kept away from zero; signed
in integers), square roots and their reciprocals, compare-and-select,
matmuls and batch matmuls, matrix-vector products (matvec, vecmat), dots
(a 0-D result, which maps and dt.constrain take on), transposes,
reductions (sum, max, min, over two dims, two at once), broadcasts,
complex arithmetic inside a generic (the tensors stay real),
bias adds, linalg.index arithmetic, softmax, reshapes, slices, inserts,
scf.forall over tiles,
concats, pads, gathers at computed rows or at an i64 argument's,
mixed-precision matmuls in 16-bit programs (an f32 product rounded back),
calls of private functions, loops (zero trips included, or as many as an
argument's positive entries mod 4, or an scf.while counting up to that),
scf.if on whether most of an argument is
positive (a count, exact in every element type, so that the reference takes
the same branch), selects by bool arguments whose combination (or, and,
xor, perhaps reduced by or) may be a bool result, and dt.constrain to
random shardings, returning the last value and up to two others nothing
uses, with or without a sharding. With --convolutions, convolutions too
(1-D and 2-D, channels last or first, filters in each order the named ops
have, random windows, strides and dilations; grouped ones; adjoints,
inputs' gradients as generics; filters' gradients as generics naming the
image first or second): other programs than the
same seeds make without, so the seeds that other tests and benches name
keep their programs. With --training-steps, training steps of random MLPs
instead (class TrainingStep): forward, loss gradient, backward and update,
in floats, on a data-parallel mesh perhaps by a model axis, full of
gradients to combine into one collective and to make in its bucket; now and
then the gradients accumulated over micro-batches in an scf.for. Nothing
about a program is chosen to suit dt: whatever the planner, the collectives,
the partitioning or the code generation get wrong shows up as a verify
failure, a crash or a rejected program.

Every third program is called twice (--repeat 2): the second call must
find its inputs as the caller left them (an entry that wrote into an
argument buffer computed the second call from its own output).

Every program must pass --verify, except that a program whose lookup reads
its table at raw ids (marked on its first line) may instead end with dt's
bounds error, counted as "out of bounds as expected", and that a float
program (its first argument f16, bf16 or f32; mixed precisions too) may
round past --verify's tolerance (the distributed program rounds each split
contraction's partial sums once more, a training step's gradients compound
that, and a small gradient summed from large terms has few correct digits in
any order): such a program is run again on one rank and spelled in f64 (its
float conversions the identity) on the same inputs, and counted "as accurate
as the reference" when each distributed result is within ROUNDING_FACTOR of
the single-device result's distance from the f64 one (norm-wise, plus one
unit in the last place of the largest value). A failure, a crash (a signal
or an exit code other than 0 and 1), a run without a verdict, or an error
(exit 1) is reported, and the program is written to --out with dt-run's
output, so that it can be minimized into a regression test. Errors are
counted apart: a program the generator wrote is valid, so each one is a
limitation to look at, but not a wrong answer.

Usage: fuzz-programs.py --dt-run PATH [--programs N] [--seed S] [--out DIR]
                        [--jobs J] [--dt-run-args "ARGS"]
                        [--convolutions | --training-steps]
                        [--dt-compile PATH [--compile-args "ARGS"]]
                        [--mpirun "COMMAND"] [--compile-only]
                        [--typed DT_OPT] [--print]
  --dt-compile compiles each program first (--compile-args "--target=cuda
  --emulate-gpu" for the CUDA lowering's kernels run on the CPU;
  --compile-only stops there, for --target=cuda without a GPU); --mpirun
  runs each on the MPI backend, one process per rank; --typed runs each
  program in the typed form dt-opt gives it (-dt-normalize-tensor-ops
  -dt-propagate -dt-insert-redistribute: every tensor typed with its
  sharding, the user's pins then), which dt must take as its input too;
  --print writes the programs to stdout instead of running them.
"""

import argparse
import math
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

DIMS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12]
# Now and then a larger extent (in float programs), so that the library
# matmuls, the GPU row kernels at their real thresholds and uneven pieces of
# some size show up; a tensor stays under LARGEST elements.
LARGE_DIMS = [16, 33, 64, 130, 257]
LARGEST = 40000
UNARY = ["math.tanh", "arith.negf", "math.absf"]
BINARY = ["arith.addf", "arith.subf", "arith.mulf", "arith.maximumf"]
# The integer spelling of each float op the programs use.
INTEGER_OPS = {
    "arith.addf": "arith.addi",
    "arith.subf": "arith.subi",
    "arith.mulf": "arith.muli",
    "arith.maximumf": "arith.maxsi",
    "arith.minimumf": "arith.minsi",
    "math.absf": "math.absi",
    "arith.cmpf ogt": "arith.cmpi sgt",
}


def parallel(rank):
    return ", ".join(['"parallel"'] * rank)


def identity_map(rank):
    loops = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({loops}) -> ({loops})>"


ELEMENT = "f32"  # the element type of the program being written


def integer():
    return ELEMENT in ("i32", "i64")


def spelled(name):
    """`name`, a float op, in the program's element type."""
    return INTEGER_OPS[name] if integer() else name


def ttype(shape, element=None):
    return "tensor<" + "".join(f"{n}x" for n in shape) + f"{element or ELEMENT}>"


class Program:
    def __init__(self, rng: random.Random):
        self.rng = rng
        naxes = rng.choice([1, 1, 2, 2, 2, 3])
        while True:
            self.mesh = [rng.choice([1, 2, 2, 3, 4]) for _ in range(naxes)]
            ranks = 1
            for s in self.mesh:
                ranks *= s
            if ranks <= 8:
                break
        self.args = []  # (name, shape, sharding, element type)
        self.may_index_out_of_bounds = False
        self.body = []
        self.functions = []  # private callees, as text
        self.values = []  # (name, shape)
        self.masks = []  # bool values that may be returned: (name, shape)
        self.counter = 0
        # Choices added since the seeds of the tests were chosen draw from a
        # stream of their own, so that the programs keep their shape.
        self.aux = random.Random(hash(rng.getstate()[1]))
        # And those added since aux_op's ops (column sums accumulated, micro-
        # batches) from a third, so that aux_op's keep theirs.
        self.later = random.Random(hash(rng.getstate()[1]) + 1)
        # And those added since (convolution adjoints, filter gradients)
        # from a fourth.
        self.latest = random.Random(hash(rng.getstate()[1]) + 2)
        self.aux_body = []  # the lines of aux_op's ops, after the others
        self.aux_results = []  # (name, shape) of aux_op's ops, returned

    def dim(self, *others):
        """An extent for a new dim of a tensor whose other dims are
        `others`."""
        rest = 1
        for n in others:
            rest *= n
        # Floats only (16-bit sums accumulate in f32, dt-widen-half-sums).
        if ELEMENT in ("f32", "f64", "f16", "bf16") and self.rng.random() < 0.15:
            large = self.rng.choice(LARGE_DIMS)
            if rest * large <= LARGEST:
                return large
        return self.rng.choice(DIMS)

    def fresh(self):
        self.counter += 1
        return f"%v{self.counter}"

    def sharding(self, rank, partial=0.0, kinds=None):
        """A random placement per mesh axis: R, S(d) or, with the given
        probability, P of one of `kinds` (by default kinds that commute:
        sum and avg, or max alone, or min alone)."""
        if kinds is None:
            kinds = self.rng.choice(
                [("sum",), ("max",), ("min",)] if integer() else [("sum", "sum", "avg"), ("sum",), ("max",), ("min",)]
            )
        placements = []
        for _ in self.mesh:
            r = self.rng.random()
            if r < partial:
                placements.append(f"P({self.rng.choice(kinds)})")
            elif r < partial + (1 - partial) * 0.45 or rank == 0:
                placements.append("R")
            else:
                placements.append(f"S({self.rng.randrange(rank)})")
        return self.placements(*placements)

    def placements(self, *choices):
        """The sharding of these placements, one per mesh axis."""
        return "#dt.sharding<@mesh, [" + ", ".join(choices) + "]>"

    def new_arg(self, shape):
        name = f"%a{len(self.args)}"
        self.args.append((name, shape, self.sharding(len(shape), partial=0.08), ELEMENT))
        self.values.append((name, shape))
        return name

    def new_index_arg(self, shape):
        """An i64 argument (seeded in [-8, 8]), split or replicated."""
        name = f"%a{len(self.args)}"
        self.args.append((name, shape, self.sharding(len(shape)), "i64"))
        return name

    def emit(self, line):
        self.body.append("  " + line)

    def pick(self, pred=lambda shape: len(shape) > 0):
        """A value whose shape `pred` accepts (by default any but a 0-D
        one, which only the maps and dt.constrain take)."""
        choices = [v for v in self.values if pred(v[1])]
        return self.rng.choice(choices) if choices else None

    def squash(self, name, shape):
        """Keeps values small after a sum: tanh, or a remainder by 7 for
        integers. Returns the new value's name."""
        out = self.fresh()
        self.squash_into(out, name, shape)
        return out

    def squash_into(self, out, name, shape, indent=""):
        t = ttype(shape)
        if integer():
            self.emit(f"{indent}{out}_7 = arith.constant dense<7> : {t}")
            self.emit(f"{indent}{out} = arith.remsi {name}, {out}_7 : {t}")
        else:
            self.emit(f"{indent}{out} = math.tanh {name} : {t}")

    def empty(self, shape):
        """A tensor.empty of `shape`, and a name for the op that writes it."""
        empty, out = self.fresh(), self.fresh()
        self.emit(f"{empty} = tensor.empty() : {ttype(shape)}")
        return empty, out

    def filled(self, shape, value="%zero"):
        empty, fill = self.fresh(), self.fresh()
        t = ttype(shape)
        self.emit(f"{empty} = tensor.empty() : {t}")
        self.emit(f"{fill} = linalg.fill ins({value} : {ELEMENT}) outs({empty} : {t}) -> {t}")
        return fill

    # --- ops; each appends its result to self.values -------------------
    def op_unary(self):
        name, shape = self.pick(lambda s: True)
        if integer():  # |x|, or x * x kept small
            out = self.fresh()
            if self.rng.random() < 0.5:
                self.emit(f"{out} = math.absi {name} : {ttype(shape)}")
            else:
                self.emit(f"{out} = arith.muli {name}, {name} : {ttype(shape)}")
                out = self.squash(out, shape)
            self.values.append((out, shape))
            return
        op = self.rng.choice(UNARY + ["exp"])
        out = self.fresh()
        if op == "exp":  # exp of a tanh stays in [1/e, e]
            mid = self.fresh()
            self.emit(f"{mid} = math.tanh {name} : {ttype(shape)}")
            self.emit(f"{out} = math.exp {mid} : {ttype(shape)}")
        else:
            self.emit(f"{out} = {op} {name} : {ttype(shape)}")
        self.values.append((out, shape))

    def dense_constant(self, shape):
        """A constant of `shape` that is not a splat: each element its own
        small number (an integer for integer programs)."""
        def values(dims):
            if not dims:
                if integer():
                    return str(self.aux.randint(-8, 8))
                return repr(self.aux.randint(-64, 64) / 16)
            return "[" + ", ".join(values(dims[1:]) for _ in range(dims[0])) + "]"
        name = self.fresh()
        self.emit(f"{name} = arith.constant dense<{values(shape)}> : {ttype(shape)}")
        return name

    # --- ops of the auxiliary stream (aux_op) ---------------------------
    def aux_op(self):
        """An op the tests' seeds did not have, drawn from self.aux: its
        operands values already made or constants (no new argument), its
        lines after every other op's and its result returned, so that the
        rest of the program is what the main stream made."""
        main = self.rng, self.body, self.values
        self.rng, self.body, self.values = self.aux, [], list(self.values)
        try:
            self.aux.choice([self.op_contract, self.op_elementwise, self.op_strided_slice,
                             self.op_pool, self.op_batched_contract])()
            if len(self.values) > len(main[2]):
                self.aux_body += self.body
                self.aux_results.append(self.values[-1])
        finally:
            self.rng, self.body, self.values = main

    def op_contract(self):
        """linalg.contract of a 2-D value by another value or a constant of
        its columns' extent, the right operand and the result in either dim
        order."""
        lhs = self.pick(lambda s: len(s) == 2)
        if not lhs:
            return
        m, k = lhs[1]
        n = self.rng.choice([1, 2, 3, 5, 8])
        rhs_transposed, out_transposed = self.rng.random() < 0.5, self.rng.random() < 0.5
        rhs_shape = [n, k] if rhs_transposed else [k, n]
        other = self.pick(lambda s: s == rhs_shape)
        if other and self.rng.random() < 0.5:
            rhs = other[0]
        elif k * n <= 512:
            rhs = self.dense_constant(rhs_shape)
        else:
            return
        shape = [n, m] if out_transposed else [m, n]
        maps = ("[affine_map<(m, n, k) -> (m, k)>, "
                f"affine_map<(m, n, k) -> {'(n, k)' if rhs_transposed else '(k, n)'}>, "
                f"affine_map<(m, n, k) -> {'(n, m)' if out_transposed else '(m, n)'}>]")
        init, out = self.filled(shape), self.fresh()
        self.emit(f"{out} = linalg.contract indexing_maps = {maps} ins({lhs[0]}, {rhs} : "
                  f"{ttype(lhs[1])}, {ttype(rhs_shape)}) outs({init} : {ttype(shape)}) -> {ttype(shape)}")
        self.values.append((self.squash(out, shape), shape))

    def op_batched_contract(self):
        """A multiply-accumulate generic with one or two batch dims, or two
        row, column or summed dims, every operand's dims and the loops in an
        order of their own (attention's scores and weighted values, the
        heads a dim of their own; a linear layer on [batch, seq, width]
        activations): a value of 2 to 4 dims, one of them split in two when
        fewer than 4 (the way a program splits its width into heads), by
        another value or a constant."""
        lhs = self.pick(lambda s: len(s) in (2, 3, 4))
        if not lhs:
            return
        name, shape = lhs
        if len(shape) < 4:
            name = self.fresh()
            shape = self.split_dim(lhs[0], shape, name)
        # The dims past m and k: batch dims, or a second row or summed dim.
        extra = self.rng.choice([["b0", "b1"], ["b0", "m1"], ["b0", "k1"], ["m1", "k1"]])
        lhs_loops = ["m", "k"] + extra[: len(shape) - 2]
        self.rng.shuffle(lhs_loops)
        extent = dict(zip(lhs_loops, shape), n=self.rng.choice([1, 2, 3, 5, 8]))
        batch = [loop for loop in lhs_loops if loop.startswith("b")]
        sums = [loop for loop in lhs_loops if loop.startswith("k")]
        rows = [loop for loop in lhs_loops if loop.startswith("m")]
        cols = ["n"]
        if self.rng.random() < 0.3:
            extent["n1"] = self.rng.choice([2, 3])
            cols.append("n1")

        def shuffled(loops):
            return self.rng.sample(loops, len(loops))
        rhs_loops = shuffled(batch + sums + cols)
        rhs_shape = [extent[loop] for loop in rhs_loops]
        other = self.pick(lambda s: s == rhs_shape)
        if other and self.rng.random() < 0.5:
            rhs = other[0]
        elif math.prod(rhs_shape) <= 512:
            rhs = self.dense_constant(rhs_shape)
        else:
            return
        loops = shuffled(batch + rows + cols + sums)
        out_loops = shuffled(batch + rows + cols)
        self.multiply_accumulate(
            ", ".join(loops), ["reduction" if loop in sums else "parallel" for loop in loops],
            [(name, shape, lhs_loops, "%x"), (rhs, rhs_shape, rhs_loops, "%y")], ("%x", "%y"),
            out_loops, [extent[loop] for loop in out_loops])

    def op_strided_slice(self):
        """extract_slice with strides; sometimes inserted back, strided, into
        a value of the source's shape."""
        name, shape = self.pick()
        strides = [self.rng.randint(1, 3) for _ in shape]
        sizes = [self.rng.randint(1, (n - 1) // st + 1) for n, st in zip(shape, strides)]
        offsets = [self.rng.randint(0, n - 1 - (sz - 1) * st)
                   for n, sz, st in zip(shape, sizes, strides)]
        out = self.fresh()
        self.emit(f"{out} = tensor.extract_slice {name}{offsets} {sizes} {strides} : "
                  f"{ttype(shape)} to {ttype(sizes)}")
        into = self.pick(lambda s: s == shape)
        if self.rng.random() < 0.5:
            inserted = self.fresh()
            self.emit(f"{inserted} = tensor.insert_slice {out} into {into[0]}{offsets} {sizes} "
                      f"{strides} : {ttype(sizes)} into {ttype(shape)}")
            self.values.append((inserted, shape))
        else:
            self.values.append((out, sizes))

    def op_pool(self):
        """A 1-D pooling (sum; max too for floats) of a 3-D value read as
        (batch, width, channels), a random window and stride."""
        v = self.pick(lambda s: len(s) == 3)
        if not v:
            return
        n, w, c = v[1]
        window = self.rng.randint(1, min(w, 4))
        stride = self.rng.randint(1, 3)
        shape = [n, (w - window) // stride + 1, c]
        kind = "sum" if integer() or self.rng.random() < 0.5 else "max"
        init = self.filled(shape, "%zero" if kind == "sum" else "%ninf")
        window_empty, out = self.fresh(), self.fresh()
        self.emit(f"{window_empty} = tensor.empty() : {ttype([window])}")
        self.emit(f"{out} = linalg.pooling_nwc_{kind} {{dilations = dense<1> : tensor<1xi64>, "
                  f"strides = dense<{stride}> : tensor<1xi64>}} ins({v[0]}, {window_empty} : "
                  f"{ttype(v[1])}, {ttype([window])}) outs({init} : {ttype(shape)}) -> {ttype(shape)}")
        self.values.append((self.squash(out, shape), shape))

    def op_elementwise(self):
        """linalg.elementwise of a binary kind: a value and another value or
        a constant."""
        v = self.pick()
        if not v:
            return
        other = self.pick(lambda s: s == v[1])
        if math.prod(v[1]) <= 512 and (not other or self.rng.random() < 0.5):
            other_name = self.dense_constant(v[1])
        elif other:
            other_name = other[0]
        else:
            return
        kind = self.rng.choice(["add", "sub", "mul"])
        empty, out = self.empty(v[1])
        t = ttype(v[1])
        self.emit(f"{out} = linalg.elementwise kind=#linalg.elementwise_kind<{kind}> "
                  f"ins({v[0]}, {other_name} : {t}, {t}) outs({empty} : {t}) -> {t}")
        self.values.append((self.squash(out, v[1]), v[1]))

    def op_binary(self):
        name, shape = self.pick(lambda s: True)
        other = self.pick(lambda s: s == shape and self.rng.random() < 0.8)
        small = shape and math.prod(shape) <= 512
        if small and self.aux.random() < (0.2 if other else 0.6):
            other_name = self.dense_constant(shape)
        elif other:
            other_name = other[0]
        else:
            other_name = self.new_arg(shape)
        out = self.fresh()
        op = spelled(self.rng.choice(BINARY))
        self.emit(f"{out} = {op} {name}, {other_name} : {ttype(shape)}")
        self.values.append((out, shape))

    def away_from_zero(self, name, t):
        """2 + tanh(`name`), in [1, 3]: a float divisor."""
        two, squashed, divisor = self.fresh(), self.fresh(), self.fresh()
        self.emit(f"{two} = arith.constant dense<2.0> : {t}")
        self.emit(f"{squashed} = math.tanh {name} : {t}")
        self.emit(f"{divisor} = arith.addf {squashed}, {two} : {t}")
        return divisor

    def op_named_map(self):
        """A linalg named elementwise op (linalg.add, linalg.exp, ...), which
        dt meets as named ops, not as the arith ops on tensors above."""
        name, shape = self.pick(lambda s: True)
        t = ttype(shape)
        unary = [] if integer() else ["exp", "abs", "negf", "tanh"]
        op = self.rng.choice(["add", "sub", "mul", "max", "min"] + unary + ([] if integer() else ["div"]))
        empty, out = self.empty(shape)
        if op in unary:
            source = name
            if op == "exp":  # exp of a tanh stays in [1/e, e]
                source = self.fresh()
                self.emit(f"{source} = math.tanh {name} : {t}")
            self.emit(f"{out} = linalg.{op} ins({source} : {t}) outs({empty} : {t}) -> {t}")
        else:
            other = self.pick(lambda s: s == shape and self.rng.random() < 0.8)
            other_name = other[0] if other else self.new_arg(shape)
            if op == "div":
                other_name = self.away_from_zero(other_name, t)
            self.emit(f"{out} = linalg.{op} ins({name}, {other_name} : {t}, {t}) "
                      f"outs({empty} : {t}) -> {t}")
            if op == "mul" and integer():
                out = self.squash(out, shape)
        self.values.append((out, shape))

    def op_divide(self):
        """x / y away from zero: by 2 + tanh(y) in floats, by |y| mod 5 + 1
        in integers (signed division, which dt guards against a zero
        divisor); in floats now and then sqrt or rsqrt of 1 + x * x, as a
        norm takes."""
        name, shape = self.pick(lambda s: True)
        t = ttype(shape)
        other = self.pick(lambda s: s == shape and self.rng.random() < 0.8)
        other_name = other[0] if other else self.new_arg(shape)
        out = self.fresh()
        if integer():
            absolute, five, one, rem, divisor = (self.fresh() for _ in range(5))
            self.emit(f"{absolute} = math.absi {other_name} : {t}")
            self.emit(f"{five} = arith.constant dense<5> : {t}")
            self.emit(f"{one} = arith.constant dense<1> : {t}")
            self.emit(f"{rem} = arith.remsi {absolute}, {five} : {t}")
            self.emit(f"{divisor} = arith.addi {rem}, {one} : {t}")
            self.emit(f"{out} = arith.divsi {name}, {divisor} : {t}")
        elif self.rng.random() < 0.5:
            divisor = self.away_from_zero(other_name, t)
            self.emit(f"{out} = arith.divf {name}, {divisor} : {t}")
        else:
            one, square, sum_ = self.fresh(), self.fresh(), self.fresh()
            self.emit(f"{one} = arith.constant dense<1.0> : {t}")
            self.emit(f"{square} = arith.mulf {name}, {name} : {t}")
            self.emit(f"{sum_} = arith.addf {square}, {one} : {t}")
            root = self.rng.choice(["math.sqrt", "math.rsqrt"])
            self.emit(f"{out} = {root} {sum_} : {t}")
        self.values.append((out, shape))

    def op_matvec(self):
        """linalg.matvec (a 2-D value times a 1-D one) or linalg.vecmat, or
        linalg.dot of two 1-D values (a 0-D result)."""
        if self.rng.random() < 0.25:
            return self.op_dot()
        matrix = self.pick(lambda s: len(s) == 2)
        if not matrix:
            return
        m, n = matrix[1]
        vecmat = self.rng.random() < 0.5
        length = m if vecmat else n
        vector = self.pick(lambda s: s == [length] and self.rng.random() < 0.7)
        vector_name = vector[0] if vector else self.new_arg([length])
        shape = [n if vecmat else m]
        init, out = self.filled(shape), self.fresh()
        if vecmat:
            self.emit(f"{out} = linalg.vecmat ins({vector_name}, {matrix[0]} : {ttype([length])}, "
                      f"{ttype(matrix[1])}) outs({init} : {ttype(shape)}) -> {ttype(shape)}")
        else:
            self.emit(f"{out} = linalg.matvec ins({matrix[0]}, {vector_name} : {ttype(matrix[1])}, "
                      f"{ttype([length])}) outs({init} : {ttype(shape)}) -> {ttype(shape)}")
        self.values.append((self.squash(out, shape), shape))

    def op_dot(self):
        v = self.pick(lambda s: len(s) == 1)
        if not v:
            return
        other = self.pick(lambda s: s == v[1] and self.rng.random() < 0.7)
        other_name = other[0] if other else self.new_arg(v[1])
        init, out = self.filled([]), self.fresh()
        self.emit(f"{out} = linalg.dot ins({v[0]}, {other_name} : {ttype(v[1])}, {ttype(v[1])}) "
                  f"outs({init} : {ttype([])}) -> {ttype([])}")
        self.values.append((self.squash(out, []), []))

    def op_matmul(self):
        """linalg.matmul on 2-D values, batch_matmul on 3-D ones."""
        lhs = self.pick(lambda s: len(s) in (2, 3))
        if not lhs:
            return
        batch, (m, k) = lhs[1][:-2], lhs[1][-2:]
        rhs = self.pick(lambda s: s[:-1] == batch + [k] and self.rng.random() < 0.5)
        if rhs:
            rhs_name, n = rhs[0], rhs[1][-1]
        else:
            n = self.dim(*batch, m, k)
            rhs_name = self.new_arg(batch + [k, n])
        shape = batch + [m, n]
        out = self.fresh()
        op = "linalg.batch_matmul" if batch else "linalg.matmul"
        # In 16-bit programs, now and then mixed precision: the product in
        # f32, rounded back after.
        result = "f32" if ELEMENT in ("f16", "bf16") and self.rng.random() < 0.4 else ELEMENT
        if result == ELEMENT:
            init = self.filled(shape)
        else:
            empty, init, zero = self.fresh(), self.fresh(), self.fresh()
            self.emit(f"{zero} = arith.constant 0.0 : f32")
            self.emit(f"{empty} = tensor.empty() : {ttype(shape, 'f32')}")
            self.emit(f"{init} = linalg.fill ins({zero} : f32) outs({empty} : {ttype(shape, 'f32')}) -> {ttype(shape, 'f32')}")
        self.emit(
            f"{out} = {op} ins({lhs[0]}, {rhs_name} : {ttype(lhs[1])}, "
            f"{ttype(batch + [k, n])}) outs({init} : {ttype(shape, result)}) -> {ttype(shape, result)}"
        )
        if result != ELEMENT:
            rounded = self.fresh()
            self.emit(f"{rounded} = arith.truncf {out} : {ttype(shape, 'f32')} to {ttype(shape)}")
            out = rounded
        # Keep magnitudes near 1 so that tolerances stay meaningful.
        self.values.append((self.squash(out, shape), shape))

    # (op, rank of the image, the filter's dims in order: "w" a window dim,
    # "c" the image's channels, "f" the filters, "g" the groups; whether the
    # image's channels come right after its batch dim (and its groups))
    CONVOLUTIONS = [
        ("linalg.conv_1d_nwc_wcf", 3, ("w", "c", "f"), False),
        ("linalg.conv_1d_ncw_fcw", 3, ("f", "c", "w"), True),
        ("linalg.conv_2d_nhwc_hwcf", 4, ("w", "w", "c", "f"), False),
        ("linalg.conv_2d_nhwc_fhwc", 4, ("f", "w", "w", "c"), False),
        ("linalg.conv_2d_nchw_fchw", 4, ("f", "c", "w", "w"), True),
    ]
    # Grouped: the image is [n, h, w, g, c] or [n, g, c, h, w].
    GROUPED_CONVOLUTIONS = [
        ("linalg.conv_2d_nhwgc_gfhwc", 5, ("g", "f", "w", "w", "c"), False),
        ("linalg.conv_2d_ngchw_gfchw", 5, ("g", "f", "c", "w", "w"), True),
        ("linalg.conv_2d_ngchw_fgchw", 5, ("f", "g", "c", "w", "w"), True),
    ]

    def image(self, rank):
        """A value of `rank` dims for a convolution to read (most often one
        made before), or a new argument: its name and shape."""
        value = self.pick(lambda s: len(s) == rank and self.rng.random() < 0.7)
        if value:
            return value
        shape = []
        for _ in range(rank):
            shape.append(self.dim(*shape))
        return self.new_arg(shape), shape

    def op_conv(self):
        """A convolution (--convolutions) of a 3-D or 4-D value, or a grouped
        one of a 5-D value (which of them drawn from the later stream), with
        a filter argument of random window, stride and dilation; or (drawn
        from the latest stream) a convolution's adjoint or a filter's
        gradient."""
        which = self.latest.random()
        if which < 0.25:
            return self.op_conv_adjoint()
        if which < 0.45:
            return self.op_conv_filter_gradient()
        grouped = self.later.random() < 0.3
        op, rank, filter_dims, channels_first = (
            self.later.choice(self.GROUPED_CONVOLUTIONS) if grouped
            else self.rng.choice(self.CONVOLUTIONS))
        name, shape = self.image(rank)
        # The channels (after their groups) between the batch and the image,
        # or after the image.
        inner = 2 if grouped else 1
        spatial = shape[1 + inner:] if channels_first else shape[1:-inner]
        if grouped:
            groups, channels = shape[1:3] if channels_first else shape[-2:]
        else:
            groups, channels = 1, shape[1] if channels_first else shape[-1]
        windows, strides, dilations, out_spatial = [], [], [], []
        for extent in spatial:
            window = self.rng.randint(1, min(3, extent))
            dilation = self.rng.choice([1, 1, 2]) if (window - 1) * 2 < extent else 1
            stride = self.rng.choice([1, 1, 2])
            span = (window - 1) * dilation + 1
            windows.append(window)
            strides.append(stride)
            dilations.append(dilation)
            out_spatial.append((extent - span) // stride + 1)
        filters = self.rng.choice(DIMS)
        dims = iter(windows)
        extents = {"c": channels, "f": filters, "g": groups}
        filter_shape = [next(dims) if d == "w" else extents[d] for d in filter_dims]
        filt = self.new_arg(filter_shape)
        out_channels = [groups, filters] if grouped else [filters]
        out_shape = ([shape[0]] + out_channels + out_spatial if channels_first
                     else [shape[0]] + out_spatial + out_channels)
        init = self.filled(out_shape)
        out = self.fresh()
        n = len(spatial)
        self.emit(
            f"{out} = {op} {{dilations = dense<{dilations}> : tensor<{n}xi64>, "
            f"strides = dense<{strides}> : tensor<{n}xi64>}} ins({name}, {filt} : "
            f"{ttype(shape)}, {ttype(filter_shape)}) outs({init} : {ttype(out_shape)}) "
            f"-> {ttype(out_shape)}")
        self.values.append((self.squash(out, out_shape), out_shape))

    def op_conv_adjoint(self):
        """The gradient of a convolution's input, as the chain rule writes it:
        a generic adding each product of a 3-D or 4-D value (dy) and a filter
        argument where the forward read its input, `dx[n, s * o + d * k, c]
        += dy[n, o, f] * w[k, c, f]` (in one of CONVOLUTIONS' layouts), into
        zeros; an image row past the last window's now and then, which no
        product reaches."""
        _, rank, filter_dims, channels_first = self.rng.choice(self.CONVOLUTIONS)
        name, shape = self.image(rank)
        spatial = shape[2:] if channels_first else shape[1:-1]
        filters = shape[1] if channels_first else shape[-1]
        channels = self.rng.choice(DIMS)
        windows, image, rows = [], [], []
        for i, extent in enumerate(spatial):
            window = self.rng.randint(1, 3)
            dilation = self.rng.choice([1, 1, 2])
            stride = self.rng.choice([1, 1, 2])
            windows.append(window)
            image.append((extent - 1) * stride + (window - 1) * dilation + 1
                         + self.rng.choice([0, 0, 1]))
            rows.append(f"o{i} * {stride} + k{i} * {dilation}")
        n = len(spatial)
        outs = [f"o{i}" for i in range(n)]
        ks = iter(f"k{i}" for i in range(n))
        filter_loops = [next(ks) if d == "w" else d for d in filter_dims]
        dims = iter(windows)
        filter_shape = [next(dims) if d == "w" else {"c": channels, "f": filters}[d]
                        for d in filter_dims]
        filt = self.new_arg(filter_shape)
        dy_loops = ["n", "f", *outs] if channels_first else ["n", *outs, "f"]
        dx_rows = ["n", "c", *rows] if channels_first else ["n", *rows, "c"]
        dx_shape = ([shape[0], channels] + image if channels_first
                    else [shape[0]] + image + [channels])
        loops = ", ".join(["n", *outs, *(f"k{i}" for i in range(n)), "c", "f"])
        kinds = (["parallel"] + ["reduction"] * (2 * n) + ["parallel", "reduction"])
        self.multiply_accumulate(
            loops, kinds, [(name, shape, dy_loops, "%d"), (filt, filter_shape, filter_loops, "%w")],
            ("%d", "%w"), dx_rows, dx_shape)

    def op_conv_filter_gradient(self):
        """The gradient of a convolution's filter, as the chain rule writes
        it: a generic summing the products of a 3-D or 4-D value (the image)
        and a gradient argument (dy) over the batch and the output image,
        `dw[k, c, f] += x[n, s * o + d * k, c] * dy[n, o, f]` (in one of
        CONVOLUTIONS' layouts), into zeros; the image named first or second
        (dt swaps a second one into a convolution's order)."""
        _, rank, filter_dims, channels_first = self.latest.choice(self.CONVOLUTIONS)
        name, shape = self.image(rank)
        spatial = shape[2:] if channels_first else shape[1:-1]
        channels = shape[1] if channels_first else shape[-1]
        filters = self.latest.choice(DIMS)
        windows, outs, rows = [], [], []
        for i, extent in enumerate(spatial):
            window = self.latest.randint(1, min(3, extent))
            dilation = self.latest.choice([1, 1, 2]) if (window - 1) * 2 < extent else 1
            stride = self.latest.choice([1, 1, 2])
            windows.append(window)
            outs.append((extent - (window - 1) * dilation - 1) // stride + 1)
            rows.append(f"o{i} * {stride} + k{i} * {dilation}")
        n = len(spatial)
        dy_shape = ([shape[0], filters] + outs if channels_first
                    else [shape[0]] + outs + [filters])
        dy = self.new_arg(dy_shape)
        out_loops = [f"o{i}" for i in range(n)]
        ks = iter(f"k{i}" for i in range(n))
        filter_loops = [next(ks) if d == "w" else d for d in filter_dims]
        dims = iter(windows)
        filter_shape = [next(dims) if d == "w" else {"c": channels, "f": filters}[d]
                        for d in filter_dims]
        x_rows = ["n", "c", *rows] if channels_first else ["n", *rows, "c"]
        dy_loops = ["n", "f", *out_loops] if channels_first else ["n", *out_loops, "f"]
        loops = ", ".join([*(f"k{i}" for i in range(n)), "c", "f", "n", *out_loops])
        kinds = ["parallel"] * (n + 2) + ["reduction"] * (n + 1)
        inputs = [(name, shape, x_rows, "%x"), (dy, dy_shape, dy_loops, "%g")]
        if self.latest.random() < 0.5:
            inputs.reverse()
        self.multiply_accumulate(loops, kinds, inputs, ("%x", "%g"), filter_loops,
                                 filter_shape)

    def multiply_accumulate(self, loops, kinds, inputs, product, out_loops, shape):
        """Emits a generic over `loops` (of iterator `kinds`) adding the
        product of its two `inputs` (each a value, its shape, the loops it is
        read at and its block argument, in the order the generic names them)
        into zeros at `out_loops`: `product` names the factors' arguments in
        the order the body multiplies them. Keeps the result, squashed."""
        init, out = self.filled(shape), self.fresh()
        maps = "".join(f"affine_map<({loops}) -> ({', '.join(m)})>, " for _, _, m, _ in inputs)
        self.emit(
            f"{out} = linalg.generic {{indexing_maps = [{maps}"
            f"affine_map<({loops}) -> ({', '.join(out_loops)})>], "
            f"iterator_types = [{', '.join(f'{chr(34)}{k}{chr(34)}' for k in kinds)}]}} "
            f"ins({inputs[0][0]}, {inputs[1][0]} : {ttype(inputs[0][1])}, {ttype(inputs[1][1])}) "
            f"outs({init} : {ttype(shape)}) {{")
        self.emit(f"    ^bb0({inputs[0][3]}: {ELEMENT}, {inputs[1][3]}: {ELEMENT}, %acc: {ELEMENT}):")
        self.emit(f"      %p = {spelled('arith.mulf')} {product[0]}, {product[1]} : {ELEMENT}")
        self.emit(f"      %s = {spelled('arith.addf')} %acc, %p : {ELEMENT}")
        self.emit(f"      linalg.yield %s : {ELEMENT}")
        self.emit(f"  }} -> {ttype(shape)}")
        self.values.append((self.squash(out, shape), shape))

    def op_transpose(self):
        v = self.pick(lambda s: len(s) >= 2)
        if not v:
            return
        perm = list(range(len(v[1])))
        while perm == sorted(perm):
            self.rng.shuffle(perm)
        shape = [v[1][p] for p in perm]
        empty, out = self.empty(shape)
        self.emit(
            f"{out} = linalg.transpose ins({v[0]} : {ttype(v[1])}) "
            f"outs({empty} : {ttype(shape)}) permutation = {perm}"
        )
        self.values.append((out, shape))

    def op_reduce(self):
        v = self.pick(lambda s: len(s) >= 2)
        if not v:
            return
        dim = self.rng.randrange(len(v[1]))
        shape = v[1][:dim] + v[1][dim + 1 :]
        kind = self.rng.choice(["sum", "max", "min"])
        init = self.filled(shape, {"sum": "%zero", "max": "%ninf", "min": "%pinf"}[kind])
        out = self.fresh()
        combiner = spelled({"sum": "arith.addf", "max": "arith.maximumf",
                            "min": "arith.minimumf"}[kind])
        self.emit(
            f"{out} = linalg.reduce ins({v[0]} : {ttype(v[1])}) outs({init} : {ttype(shape)}) "
            f"dimensions = [{dim}]"
        )
        self.emit(f"    (%in: {ELEMENT}, %acc: {ELEMENT}) {{")
        self.emit(f"      %r = {combiner} %in, %acc : {ELEMENT}")
        self.emit(f"      linalg.yield %r : {ELEMENT}")
        self.emit("    }")
        if kind == "sum":  # a sum of up to 12 values in [-1, 1]
            out = self.squash(out, shape)
        self.values.append((out, shape))

    def op_broadcast(self):
        v = self.pick(lambda s: len(s) <= 2)
        if not v:
            return
        dim = self.rng.randrange(len(v[1]) + 1)
        shape = v[1][:dim] + [self.dim(*v[1])] + v[1][dim:]
        empty, out = self.empty(shape)
        self.emit(
            f"{out} = linalg.broadcast ins({v[0]} : {ttype(v[1])}) "
            f"outs({empty} : {ttype(shape)}) dimensions = [{dim}]"
        )
        self.values.append((out, shape))

    def op_bias(self):
        """A generic adding a 1-D value along one dim of a 2-D or 3-D one."""
        v = self.pick(lambda s: len(s) >= 2)
        if not v:
            return
        rank = len(v[1])
        dim = self.rng.randrange(rank)
        bias = self.pick(lambda s: s == [v[1][dim]])
        bias_name = bias[0] if bias else self.new_arg([v[1][dim]])
        loops = ", ".join(f"d{i}" for i in range(rank))
        out = self.fresh()
        t = ttype(v[1])
        self.emit(
            f"{out} = linalg.generic {{indexing_maps = [affine_map<({loops}) -> ({loops})>, "
            f"affine_map<({loops}) -> (d{dim})>, affine_map<({loops}) -> ({loops})>], "
            f"iterator_types = [{parallel(rank)}]}} "
            f"ins({v[0]}, {bias_name} : {t}, {ttype([v[1][dim]])}) outs({v[0]} : {t}) {{"
        )
        self.emit(f"    ^bb0(%x: {ELEMENT}, %b: {ELEMENT}, %o: {ELEMENT}):")
        self.emit(f"      %r = {spelled('arith.addf')} %x, %b : {ELEMENT}")
        self.emit(f"      linalg.yield %r : {ELEMENT}")
        self.emit(f"  }} -> {t}")
        self.values.append((out, v[1]))

    def op_index(self):
        """Adds a value of the global index along one dim (linalg.index)."""
        name, shape = self.pick()
        rank = len(shape)
        dim = self.rng.randrange(rank)
        loops = ", ".join(f"d{i}" for i in range(rank))
        empty, out = self.empty(shape)
        t = ttype(shape)
        self.emit(
            f"{out} = linalg.generic {{indexing_maps = [affine_map<({loops}) -> ({loops})>, "
            f"affine_map<({loops}) -> ({loops})>], "
            f"iterator_types = [{parallel(rank)}]}} "
            f"ins({name} : {t}) outs({empty} : {t}) {{"
        )
        self.emit(f"    ^bb0(%x: {ELEMENT}, %o: {ELEMENT}):")
        self.emit(f"      %i = linalg.index {dim} : index")
        if integer():
            self.emit(f"      %c = arith.index_cast %i : index to {ELEMENT}")
            self.emit(f"      %r = arith.addi %x, %c : {ELEMENT}")
        else:
            self.emit("      %c = arith.index_cast %i : index to i64")
            self.emit(f"      %f = arith.sitofp %c : i64 to {ELEMENT}")
            self.emit(f"      %s = arith.mulf %f, %eighth : {ELEMENT}")
            self.emit(f"      %r = arith.addf %x, %s : {ELEMENT}")
        self.emit(f"      linalg.yield %r : {ELEMENT}")
        self.emit(f"  }} -> {t}")
        self.values.append((out, shape))

    def op_complex(self):
        """Complex arithmetic inside one generic over two values of a shape:
        z = tanh(x) + i tanh(y), w = z^2 + exp(z) / (conj(z) z + 1), and
        |w|, re(w) or re + im of log(conj(z) z + 1) back as reals (no
        angle, whose jump at the negative axis an approximation may cross).
        16-bit programs compute it in f32."""
        if integer():
            return
        name, shape = self.pick()
        other = self.pick(lambda s: s == shape and self.rng.random() < 0.8)
        other_name = other[0] if other else self.new_arg(shape)
        rank = len(shape)
        identity = identity_map(rank)
        empty, out = self.empty(shape)
        t = ttype(shape)
        wide = "f32" if ELEMENT in ("f16", "bf16") else ELEMENT
        c = f"complex<{wide}>"
        self.emit(
            f"{out} = linalg.generic {{indexing_maps = [{identity}, {identity}, {identity}], "
            f"iterator_types = [{parallel(rank)}]}} "
            f"ins({name}, {other_name} : {t}, {t}) outs({empty} : {t}) {{"
        )
        self.emit(f"    ^bb0(%x: {ELEMENT}, %y: {ELEMENT}, %o: {ELEMENT}):")
        parts = ["%x", "%y"]
        if wide != ELEMENT:
            self.emit(f"      %xw = arith.extf %x : {ELEMENT} to {wide}")
            self.emit(f"      %yw = arith.extf %y : {ELEMENT} to {wide}")
            parts = ["%xw", "%yw"]
        self.emit(f"      %a = math.tanh {parts[0]} : {wide}")
        self.emit(f"      %b = math.tanh {parts[1]} : {wide}")
        self.emit(f"      %z = complex.create %a, %b : {c}")
        self.emit(f"      %one = complex.constant [1.0 : {wide}, 0.0 : {wide}] : {c}")
        self.emit(f"      %zz = complex.mul %z, %z : {c}")
        self.emit(f"      %ez = complex.exp %z : {c}")
        self.emit(f"      %cz = complex.conj %z : {c}")
        self.emit(f"      %n = complex.mul %cz, %z : {c}")
        self.emit(f"      %d = complex.add %n, %one : {c}")
        self.emit(f"      %q = complex.div %ez, %d : {c}")
        self.emit(f"      %w = complex.add %zz, %q : {c}")
        result = self.rng.choice(["abs", "re", "log"])
        if result == "abs":
            self.emit(f"      %r = complex.abs %w : {c}")
        elif result == "re":
            self.emit(f"      %r = complex.re %w : {c}")
        else:
            self.emit(f"      %l = complex.log %d : {c}")
            self.emit(f"      %lr = complex.re %l : {c}")
            self.emit(f"      %li = complex.im %l : {c}")
            self.emit(f"      %r = arith.addf %lr, %li : {wide}")
        if wide != ELEMENT:
            self.emit(f"      %rn = arith.truncf %r : {wide} to {ELEMENT}")
            self.emit(f"      linalg.yield %rn : {ELEMENT}")
        else:
            self.emit(f"      linalg.yield %r : {ELEMENT}")
        self.emit(f"  }} -> {t}")
        self.values.append((out, shape))

    def op_softmax(self):
        if integer():
            return
        name, shape = self.pick()
        dim = self.rng.randrange(len(shape))
        empty, out = self.empty(shape)
        t = ttype(shape)
        self.emit(f"{out} = linalg.softmax dimension({dim}) ins({name} : {t}) outs({empty} : {t}) -> {t}")
        self.values.append((out, shape))

    def op_reshape(self):
        name, shape = self.pick()
        out = self.fresh()
        if self.rng.random() < 0.25:
            self.reshape_to_shape(name, shape, out)
            return
        if len(shape) >= 2 and self.rng.random() < 0.5:
            d = self.rng.randrange(len(shape) - 1)
            new = shape[:d] + [shape[d] * shape[d + 1]] + shape[d + 2 :]
            groups = [[i] for i in range(d)] + [[d, d + 1]] + [[i + 1] for i in range(d + 1, len(new))]
            self.emit(f"{out} = tensor.collapse_shape {name} {groups} : {ttype(shape)} into {ttype(new)}")
        elif len(shape) < 3:
            new = self.split_dim(name, shape, out)
        else:
            return
        self.values.append((out, new))

    def split_dim(self, name, shape, out):
        """Emits `out`, `name` with a random dim split in two by a random
        factor (tensor.expand_shape), and returns its shape."""
        d = self.rng.randrange(len(shape))
        n = shape[d]
        a = self.rng.choice([f for f in range(1, n + 1) if n % f == 0])
        new = shape[:d] + [a, n // a] + shape[d + 1 :]
        groups = [[i] for i in range(d)] + [[d, d + 1]] + [[i + 1] for i in range(d + 1, len(shape))]
        self.emit(f"{out} = tensor.expand_shape {name} {groups} output_shape {new} : "
                  f"{ttype(shape)} into {ttype(new)}")
        return new

    def reshape_to_shape(self, name, shape, out):
        """tensor.reshape by a constant shape: flat, the dims swapped (a
        reshape through one dim), or a flat value split in two."""
        count = 1
        for n in shape:
            count *= n
        choices = [[count]]
        if len(shape) == 2 and shape[0] != shape[1]:
            choices.append([shape[1], shape[0]])
        if len(shape) == 1:
            choices += [[a, count // a] for a in range(2, count) if count % a == 0]
        new = self.rng.choice(choices)
        dims = self.fresh()
        self.emit(f"{dims} = arith.constant dense<{new}> : tensor<{len(new)}xi64>")
        self.emit(
            f"{out} = tensor.reshape {name}({dims}) : "
            f"({ttype(shape)}, tensor<{len(new)}xi64>) -> {ttype(new)}"
        )
        self.values.append((out, new))

    def op_generate(self):
        """tensor.generate of (sum of (d + 1) * i_d) mod 7 over the global
        indices, scaled by a scalar from above (floats), added to a value
        of its shape."""
        name, shape = self.pick()
        rank = len(shape)
        t = ttype(shape)
        generated, out = self.fresh(), self.fresh()
        self.emit(f"{generated} = tensor.generate {{")
        self.emit("  ^bb0(" + ", ".join(f"%gi{d}: index" for d in range(rank)) + "):")
        total = "%gi0"
        for d in range(1, rank):
            self.emit(f"    %gc{d} = arith.constant {d + 1} : index")
            self.emit(f"    %gm{d} = arith.muli %gi{d}, %gc{d} : index")
            self.emit(f"    %gs{d} = arith.addi {total}, %gm{d} : index")
            total = f"%gs{d}"
        self.emit("    %gseven = arith.constant 7 : index")
        self.emit(f"    %gk = arith.remui {total}, %gseven : index")
        if integer():
            self.emit(f"    %gr = arith.index_cast %gk : index to {ELEMENT}")
        else:
            self.emit("    %gki = arith.index_cast %gk : index to i64")
            self.emit(f"    %gkf = arith.sitofp %gki : i64 to {ELEMENT}")
            self.emit(f"    %gr = arith.mulf %gkf, %eighth : {ELEMENT}")
        self.emit(f"    tensor.yield %gr : {ELEMENT}")
        self.emit(f"  }} : {t}")
        add = "arith.addi" if integer() else "arith.addf"
        self.emit(f"{out} = {add} {name}, {generated} : {t}")
        self.values.append((out, shape))

    def op_forall(self):
        """scf.forall over tiles of one or two dims (as tiling writes it):
        each tile doubled, inserted into a fresh tensor with
        tensor.parallel_insert_slice."""
        name, shape = self.pick()
        dims = [d for d, n in enumerate(shape) if n > 1]
        if not dims:
            return
        tiled = sorted(self.rng.sample(dims, min(len(dims), self.rng.choice([1, 2]))))
        counts = {d: self.rng.choice([f for f in range(1, shape[d] + 1) if shape[d] % f == 0])
                  for d in tiled}
        tile = [n // counts.get(d, 1) for d, n in enumerate(shape)]
        t, tt = ttype(shape), ttype(tile)
        empty, out = self.empty(shape)
        ivs = ", ".join(f"%fi{d}" for d in tiled)
        trips = ", ".join(str(counts[d]) for d in tiled)
        self.emit(f"{out} = scf.forall ({ivs}) in ({trips}) shared_outs(%fo = {empty}) -> ({t}) {{")
        offsets = []
        for d in range(len(shape)):
            if d in counts:
                self.emit(f"  %foff{d} = affine.apply affine_map<(i) -> (i * {tile[d]})>(%fi{d})")
                offsets.append(f"%foff{d}")
            else:
                offsets.append("0")
        window = (f"[{', '.join(offsets)}] [{', '.join(map(str, tile))}] "
                  f"[{', '.join('1' for _ in shape)}]")
        self.emit(f"  %fs = tensor.extract_slice {name}{window} : {t} to {tt}")
        add = "arith.addi" if integer() else "arith.addf"
        self.emit(f"  %fr = {add} %fs, %fs : {tt}")
        self.emit("  scf.forall.in_parallel {")
        self.emit(f"    tensor.parallel_insert_slice %fr into %fo{window} : {tt} into {t}")
        self.emit("  }")
        self.emit("}")
        self.values.append((out, shape))

    def op_slice(self):
        """extract_slice of a window; sometimes inserted back elsewhere."""
        name, shape = self.pick()
        sizes = [self.rng.randint(1, n) for n in shape]
        offsets = [self.rng.randint(0, n - s) for n, s in zip(shape, sizes)]
        out = self.fresh()
        self.emit(
            f"{out} = tensor.extract_slice {name}{offsets} {sizes} {[1] * len(shape)} : "
            f"{ttype(shape)} to {ttype(sizes)}"
        )
        if self.rng.random() < 0.5:
            into = self.pick(lambda s: s == shape)
            at = [self.rng.randint(0, n - s) for n, s in zip(shape, sizes)]
            inserted = self.fresh()
            self.emit(
                f"{inserted} = tensor.insert_slice {out} into {into[0]}{at} {sizes} "
                f"{[1] * len(shape)} : {ttype(sizes)} into {ttype(shape)}"
            )
            self.values.append((inserted, shape))
        else:
            self.values.append((out, sizes))

    def op_concat(self):
        name, shape = self.pick()
        dim = self.rng.randrange(len(shape))
        other = self.pick(lambda s: len(s) == len(shape) and all(
            a == b for i, (a, b) in enumerate(zip(s, shape)) if i != dim))
        new = list(shape)
        new[dim] += other[1][dim]
        out = self.fresh()
        self.emit(
            f"{out} = tensor.concat dim({dim}) {name}, {other[0]} : "
            f"({ttype(shape)}, {ttype(other[1])}) -> {ttype(new)}"
        )
        self.values.append((out, new))

    def op_pad(self):
        name, shape = self.pick()
        low = [self.rng.randint(0, 2) for _ in shape]
        high = [self.rng.randint(0, 2) for _ in shape]
        new = [n + a + b for n, a, b in zip(shape, low, high)]
        out = self.fresh()
        indices = ", ".join(f"%i{i}: index" for i in range(len(shape)))
        self.emit(f"{out} = tensor.pad {name} low{low} high{high} {{")
        self.emit(f"    ^bb0({indices}):")
        self.emit(f"      tensor.yield %eighth : {ELEMENT}")
        self.emit(f"  }} : {ttype(shape)} to {ttype(new)}")
        self.values.append((out, new))

    def op_reduce2(self):
        """A generic summing a 3-D value over two of its dims at once."""
        v = self.pick(lambda s: len(s) == 3)
        if not v:
            return
        keep = self.rng.randrange(3)
        shape = [v[1][keep]]
        init = self.filled(shape)
        out, squashed = self.fresh(), self.fresh()
        iterators = ", ".join('"parallel"' if d == keep else '"reduction"' for d in range(3))
        self.emit(
            f"{out} = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, "
            f"affine_map<(d0, d1, d2) -> (d{keep})>], iterator_types = [{iterators}]}} "
            f"ins({v[0]} : {ttype(v[1])}) outs({init} : {ttype(shape)}) {{"
        )
        self.emit(f"    ^bb0(%x: {ELEMENT}, %acc: {ELEMENT}):")
        self.emit(f"      %r = {spelled('arith.addf')} %x, %acc : {ELEMENT}")
        self.emit(f"      linalg.yield %r : {ELEMENT}")
        self.emit(f"  }} -> {ttype(shape)}")
        self.squash_into(squashed, out, shape)
        self.values.append((squashed, shape))

    def op_gather(self):
        """Rows of a 2-D table at computed indices, read with tensor.extract
        (as an embedding lookup is written)."""
        table = self.pick(lambda s: len(s) == 2)
        if not table:
            return
        rows, cols = table[1]
        count = self.dim(cols)
        stride = self.rng.choice([1, 2, 3, 5])
        shape = [count, cols]
        empty, out = self.empty(shape)
        self.emit(
            f"{out} = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], "
            f'iterator_types = ["parallel", "parallel"]}} outs({empty} : {ttype(shape)}) {{'
        )
        self.emit(f"    ^bb0(%o: {ELEMENT}):")
        self.emit("      %i = linalg.index 0 : index")
        self.emit("      %j = linalg.index 1 : index")
        self.emit(f"      %stride = arith.constant {stride} : index")
        self.emit(f"      %rows = arith.constant {rows} : index")
        self.emit("      %k = arith.muli %i, %stride : index")
        self.emit("      %row = arith.remui %k, %rows : index")
        self.emit(f"      %x = tensor.extract {table[0]}[%row, %j] : {ttype(table[1])}")
        self.emit(f"      linalg.yield %x : {ELEMENT}")
        self.emit(f"  }} -> {ttype(shape)}")
        self.values.append((out, shape))

    def op_loop(self, trips=None):
        """An scf.for carrying a value through a few steps of
        tanh(x * w + b), w and b loop-invariant; `trips` names the trip
        count when the data gives it."""
        name, shape = self.pick()
        w = self.pick(lambda s: s == shape)
        b = self.pick(lambda s: s == shape)
        out = self.fresh()
        t = ttype(shape)
        trips = trips or f"%c{self.rng.randint(0, 3)}"
        self.emit(f"{out} = scf.for %i{out[1:]} = %c0 to {trips} step %c1 iter_args(%h{out[1:]} = {name}) -> ({t}) {{")
        self.loop_step(f"%h{out[1:]}", w[0], b[0], out[1:], shape)
        self.emit(f"    scf.yield %y{out[1:]} : {t}")
        self.emit("  }")
        self.values.append((out, shape))

    def op_accumulate(self):
        """Gradient accumulation: an scf.for whose carry starts from a value
        of the program and adds a product at each step, or a column sum (a
        bias gradient): a matmul or a reduction into the carry (its init),
        or an arith add or a linalg.generic add of one; the carry may hold a
        partial sum through the loop, whatever its init holds."""
        lhs = self.pick(lambda s: len(s) == 2)
        if not lhs:
            return
        m, k = lhs[1]
        rhs = self.pick(lambda s: len(s) == 2 and s[0] == k)
        if rhs:
            rhs_name, n = rhs[0], rhs[1][1]
        else:
            n = self.dim(m, k)
            rhs_name = self.new_arg([k, n])
        # Column sums of the right operand: a sum over its rows, k.
        columns = not integer() and self.later.random() < 0.35
        shape = [n] if columns else [m, n]
        t = ttype(shape)
        init = self.pick(lambda s: s == shape)
        init_name = init[0] if init else self.new_arg(shape)
        # The matmul reducing into the carry, an arith add of its product,
        # or a linalg.generic adding it (as torch-mlir writes aten.add).
        form = self.rng.choice(["into", "arith", "generic"])
        zero = None if form == "into" else self.filled(shape)
        loop, tag = self.fresh(), self.fresh()[1:]
        trips = f"%c{self.rng.randint(0, 3)}"
        operands = f"ins({lhs[0]}, {rhs_name} : {ttype(lhs[1])}, {ttype([k, n])})"
        self.emit(f"{loop} = scf.for %i{tag} = %c0 to {trips} step %c1 iter_args(%g{tag} = {init_name}) -> ({t}) {{")

        def term(out, into):
            if not columns:
                self.emit(f"    {out} = linalg.matmul {operands} outs({into} : {t}) -> {t}")
                return
            self.emit(f"    {out} = linalg.reduce ins({rhs_name} : {ttype([k, n])}) outs({into} : {t}) dimensions = [0]")
            self.emit(f"      (%in: {ELEMENT}, %acc: {ELEMENT}) {{")
            self.emit(f"        %r = arith.addf %in, %acc : {ELEMENT}")
            self.emit(f"        linalg.yield %r : {ELEMENT}")
            self.emit("      }")

        if form == "into":
            term(f"%y{tag}", f"%g{tag}")
        else:
            term(f"%p{tag}", zero)
        if form == "arith":
            self.emit(f"    %y{tag} = {spelled('arith.addf')} %g{tag}, %p{tag} : {t}")
        if form == "generic":
            identity = identity_map(len(shape))
            self.emit(f"    %y{tag} = linalg.generic {{indexing_maps = [{identity}, {identity}, {identity}], "
                      f'iterator_types = [{parallel(len(shape))}]}} '
                      f"ins(%g{tag}, %p{tag} : {t}, {t}) outs({zero} : {t}) {{")
            self.emit(f"      ^bb0(%a: {ELEMENT}, %b: {ELEMENT}, %o: {ELEMENT}):")
            self.emit(f"        %s = {spelled('arith.addf')} %a, %b : {ELEMENT}")
            self.emit(f"        linalg.yield %s : {ELEMENT}")
            self.emit(f"    }} -> {t}")
        self.emit(f"    scf.yield %y{tag} : {t}")
        self.emit("  }")
        self.values.append((self.squash(loop, shape), shape))

    def positives(self):
        """How many entries of an argument are positive, as an i32 scalar,
        and how many entries it has. Exact: the reference counts the same
        inputs, so it takes the same branch (a count of computed values
        could differ by a rounding near zero)."""
        arg = self.rng.choice([a for a in self.args if a[3] == ELEMENT])
        name, shape = arg[0], arg[1]
        rank = len(shape)
        dims = ", ".join(f"d{i}" for i in range(rank))
        reductions = ", ".join(['"reduction"'] * rank)
        zero, init, count, scalar = self.fresh(), self.fresh(), self.fresh(), self.fresh()
        self.emit(f"{zero} = arith.constant 0 : i32")
        self.emit(f"{init}_e = tensor.empty() : tensor<i32>")
        self.emit(f"{init} = linalg.fill ins({zero} : i32) outs({init}_e : tensor<i32>) -> tensor<i32>")
        self.emit(
            f"{count} = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({dims})>, "
            f"affine_map<({dims}) -> ()>], iterator_types = [{reductions}]}} "
            f"ins({name} : {ttype(shape)}) outs({init} : tensor<i32>) {{"
        )
        self.emit(f"    ^bb0(%x: {ELEMENT}, %n: i32):")
        self.emit(f"      %p = {spelled('arith.cmpf ogt')}, %x, %zero : {ELEMENT}")
        self.emit("      %one = arith.extui %p : i1 to i32")
        self.emit("      %r = arith.addi %n, %one : i32")
        self.emit("      linalg.yield %r : i32")
        self.emit("  } -> tensor<i32>")
        self.emit(f"{scalar} = tensor.extract {count}[] : tensor<i32>")
        entries = 1
        for n in shape:
            entries *= n
        return scalar, entries

    def op_branch(self):
        """An scf.if on whether most of an argument is positive: each branch
        maps a value its own way, or yields it as it is, and may constrain
        what it yields (the other branch then moves its value there)."""
        count, entries = self.positives()
        half, cond = self.fresh(), self.fresh()
        self.emit(f"{half} = arith.constant {entries // 2} : i32")
        self.emit(f"{cond} = arith.cmpi sgt, {count}, {half} : i32")
        name, shape = self.pick()
        t = ttype(shape)
        out = self.fresh()
        self.emit(f"{out} = scf.if {cond} -> ({t}) {{")
        for branch in ("then", "else"):
            if branch == "else":
                self.emit("} else {")
            how = self.rng.choice(["map", "map", "same"])
            result = name
            if how == "map":
                result = self.fresh()
                if integer():
                    self.emit(f"  {result} = math.absi {name} : {t}")
                else:
                    self.emit(f"  {result} = {self.rng.choice(UNARY)} {name} : {t}")
            if self.rng.random() < 0.3:
                constrained = self.fresh()
                sharding = self.sharding(len(shape), partial=0.2)
                self.emit(f"  {constrained} = dt.constrain {result} to {sharding} : {t}")
                result = constrained
            self.emit(f"  scf.yield {result} : {t}")
        self.emit("  }")
        self.values.append((out, shape))

    def op_counted_loop(self):
        """A loop of as many trips as an argument has positive entries,
        mod 4: a trip count the host reads from a tensor."""
        count, _ = self.positives()
        four, trips32, trips = self.fresh(), self.fresh(), self.fresh()
        self.emit(f"{four} = arith.constant 4 : i32")
        self.emit(f"{trips32} = arith.remsi {count}, {four} : i32")
        self.emit(f"{trips} = arith.index_cast {trips32} : i32 to index")
        self.op_loop(trips)

    def op_masked(self):
        """A select by a bool argument (a padding mask); the mask combined
        with another bool argument (by or, and or xor), perhaps reduced by
        or over a dim, may be returned. Bools are compared exactly, so they
        come from arguments only: a compare of computed values could flip
        where the reference rounds differently."""
        name, shape = self.pick()
        other = self.pick(lambda s: s == shape)
        b = ttype(shape, "i1")
        mask, mask2 = self.new_bool_arg(shape), self.new_bool_arg(shape)
        out = self.fresh()
        self.emit(f"{out} = arith.select {mask}, {name}, {other[0]} : {b}, {ttype(shape)}")
        self.values.append((out, shape))
        both = self.fresh()
        self.emit(f"{both} = arith.{self.rng.choice(['ori', 'andi', 'xori'])} {mask}, {mask2} : {b}")
        if len(shape) >= 2 and self.rng.random() < 0.5:
            dim = self.rng.randrange(len(shape))
            rows = shape[:dim] + shape[dim + 1 :]
            false, empty, init, reduced = self.fresh(), self.fresh(), self.fresh(), self.fresh()
            r = ttype(rows, "i1")
            self.emit(f"{false} = arith.constant false")
            self.emit(f"{empty} = tensor.empty() : {r}")
            self.emit(f"{init} = linalg.fill ins({false} : i1) outs({empty} : {r}) -> {r}")
            self.emit(f"{reduced} = linalg.reduce ins({both} : {b}) outs({init} : {r}) dimensions = [{dim}]")
            self.emit("    (%in: i1, %acc: i1) {")
            self.emit("      %r = arith.ori %in, %acc : i1")
            self.emit("      linalg.yield %r : i1")
            self.emit("    }")
            both, shape = reduced, rows
        self.masks.append((both, shape))

    def new_bool_arg(self, shape):
        """An i1 argument (seeded 0 or 1); partial only as or (max) or and
        (min), the kinds a bool has."""
        name = f"%a{len(self.args)}"
        self.args.append((name, shape, self.sharding(len(shape), partial=0.08, kinds=self.bool_kinds()), "i1"))
        return name

    def bool_kinds(self):
        return (self.rng.choice(["max", "min"]),)

    def op_while(self):
        """An scf.while carrying a value and an i32 counter through
        tanh(x * w + b) until the counter reaches an argument's positive
        entries mod 4 (exact, so the reference runs as many trips)."""
        count, _ = self.positives()
        four, trips = self.fresh(), self.fresh()
        self.emit(f"{four} = arith.constant 4 : i32")
        self.emit(f"{trips} = arith.remsi {count}, {four} : i32")
        name, shape = self.pick()
        w = self.pick(lambda s: s == shape)
        b = self.pick(lambda s: s == shape)
        t = ttype(shape)
        out, start, one = self.fresh(), self.fresh(), self.fresh()
        tag = out[1:]
        self.emit(f"{start} = arith.constant dense<0> : tensor<i32>")
        self.emit(f"{one} = arith.constant dense<1> : tensor<i32>")
        self.emit(
            f"{out}:2 = scf.while (%h{tag} = {name}, %n{tag} = {start}) : ({t}, tensor<i32>) -> ({t}, tensor<i32>) {{"
        )
        self.emit(f"    %k{tag} = tensor.extract %n{tag}[] : tensor<i32>")
        self.emit(f"    %go{tag} = arith.cmpi slt, %k{tag}, {trips} : i32")
        self.emit(f"    scf.condition(%go{tag}) %h{tag}, %n{tag} : {t}, tensor<i32>")
        self.emit("  } do {")
        self.emit(f"  ^bb0(%g{tag}: {t}, %trips{tag}: tensor<i32>):")
        self.loop_step(f"%g{tag}", w[0], b[0], tag, shape)
        self.emit(f"    %next{tag} = arith.addi %trips{tag}, {one} : tensor<i32>")
        self.emit(f"    scf.yield %y{tag}, %next{tag} : {t}, tensor<i32>")
        self.emit("  }")
        self.values.append((f"{out}#0", shape))

    def loop_step(self, h, w, b, tag, shape):
        """A loop body's %y<tag> = tanh(h * w + b) (a remainder for
        integers)."""
        t = ttype(shape)
        self.emit(f"    %m{tag} = {spelled('arith.mulf')} {h}, {w} : {t}")
        self.emit(f"    %a{tag} = {spelled('arith.addf')} %m{tag}, {b} : {t}")
        self.squash_into(f"%y{tag}", f"%a{tag}", shape, indent="  ")

    def op_select(self):
        """A mask from a comparison, then a select (a ReLU's shape)."""
        name, shape = self.pick()
        other = self.pick(lambda s: s == shape)
        mask, out = self.fresh(), self.fresh()
        t = ttype(shape)
        self.emit(f"{mask} = {spelled('arith.cmpf ogt')}, {name}, {other[0]} : {t}")
        self.emit(f"{out} = arith.select {mask}, {name}, {other[0]} : {ttype(shape, 'i1')}, {t}")
        self.values.append((out, shape))

    def op_call(self):
        """A call of a private function of a few maps (propagation goes
        through calls)."""
        name, shape = self.pick()
        t = ttype(shape)
        callee = f"@f{len(self.functions)}"
        first, then = ("math.absi", "arith.subi") if integer() else ("math.tanh", "arith.mulf")
        self.functions.append(
            f"func.func private {callee}(%x: {t}) -> {t} {{\n"
            f"  %t = {first} %x : {t}\n"
            f"  %m = {then} %t, %x : {t}\n"
            f"  return %m : {t}\n"
            "}"
        )
        out = self.fresh()
        self.emit(f"{out} = func.call {callee}({name}) : ({t}) -> {t}")
        self.values.append((out, shape))

    def op_two_outputs(self):
        """One generic reducing a 2-D value's rows to their max and their
        sum at once."""
        v = self.pick(lambda s: len(s) == 2)
        if not v:
            return
        rows = [v[1][0]]
        most, total = self.filled(rows, "%ninf"), self.filled(rows)
        out, squashed = self.fresh(), self.fresh()
        t, r = ttype(v[1]), ttype(rows)
        self.emit(
            f"{out}:2 = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, "
            f"affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], "
            f'iterator_types = ["parallel", "reduction"]}} ins({v[0]} : {t}) outs({most}, {total} : {r}, {r}) {{'
        )
        self.emit(f"    ^bb0(%x: {ELEMENT}, %m: {ELEMENT}, %s: {ELEMENT}):")
        self.emit(f"      %m2 = {spelled('arith.maximumf')} %x, %m : {ELEMENT}")
        self.emit(f"      %s2 = {spelled('arith.addf')} %x, %s : {ELEMENT}")
        self.emit(f"      linalg.yield %m2, %s2 : {ELEMENT}, {ELEMENT}")
        self.emit(f"  }} -> ({r}, {r})")
        self.squash_into(squashed, f"{out}#1", rows)
        self.values.append((f"{out}#0", rows))
        self.values.append((squashed, rows))

    def op_lookup(self):
        """Rows of a 2-D table at indices from an i64 argument (an
        embedding lookup): |i| mod rows, unsigned (which dt proves in range)
        or signed (which it checks), or now and then |i| itself, which may
        lie outside a small table: the run must then fail with dt's bounds
        error (the program is marked OUT_OF_BOUNDS_MARK), never crash or
        read outside."""
        table = self.pick(lambda s: len(s) == 2)
        if not table:
            return
        rows, cols = table[1]
        count = self.dim(cols)
        ids = self.new_index_arg([count])
        shape = [count, cols]
        empty, out = self.empty(shape)
        self.emit(
            f"{out} = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0)>, "
            f"affine_map<(d0, d1) -> (d0, d1)>], "
            f'iterator_types = ["parallel", "parallel"]}} ins({ids} : {ttype([count], "i64")}) '
            f"outs({empty} : {ttype(shape)}) {{"
        )
        self.emit(f"    ^bb0(%id: i64, %o: {ELEMENT}):")
        self.emit("      %j = linalg.index 1 : index")
        self.emit("      %abs = math.absi %id : i64")
        self.emit(f"      %rows = arith.constant {rows} : i64")
        mode = self.rng.choice(["remui"] * 4 + ["remsi"] * 4 + ["raw"])
        if mode == "raw":
            self.may_index_out_of_bounds = True
            self.emit("      %row = arith.index_cast %abs : i64 to index")
        else:
            self.emit(f"      %k = arith.{mode} %abs, %rows : i64")
            self.emit("      %row = arith.index_cast %k : i64 to index")
        self.emit(f"      %x = tensor.extract {table[0]}[%row, %j] : {ttype(table[1])}")
        self.emit(f"      linalg.yield %x : {ELEMENT}")
        self.emit(f"  }} -> {ttype(shape)}")
        self.values.append((out, shape))

    def op_constrain(self):
        name, shape = self.pick(lambda s: True)
        out = self.fresh()
        sharding = self.sharding(len(shape), partial=0.2)
        self.emit(f"{out} = dt.constrain {name} to {sharding} : {ttype(shape)}")
        self.values.append((out, shape))

    def generate(self, nops, convolutions=False):
        first = []
        for _ in range(self.rng.choice([1, 2, 2, 2, 3])):
            first.append(self.dim(*first))
        self.new_arg(first)
        ops = [
            (self.op_unary, 2),
            (self.op_binary, 3),
            (self.op_matmul, 3),
            (self.op_named_map, 2),
            (self.op_divide, 1),
            (self.op_matvec, 1),
            (self.op_transpose, 1),
            (self.op_reduce, 2),
            (self.op_broadcast, 2),
            (self.op_bias, 1),
            (self.op_index, 1),
            (self.op_generate, 1),
            (self.op_complex, 1),
            (self.op_softmax, 1),
            (self.op_reshape, 2),
            (self.op_slice, 1),
            (self.op_forall, 1),
            (self.op_concat, 1),
            (self.op_pad, 1),
            (self.op_reduce2, 1),
            (self.op_gather, 1),
            (self.op_loop, 1),
            (self.op_accumulate, 1),
            (self.op_branch, 1),
            (self.op_counted_loop, 1),
            (self.op_while, 1),
            (self.op_select, 1),
            (self.op_masked, 1),
            (self.op_call, 1),
            (self.op_two_outputs, 1),
            (self.op_lookup, 1),
            (self.op_constrain, 4),
        ] + ([(self.op_conv, 4)] if convolutions else [])
        funcs = [f for f, w in ops for _ in range(w)]
        for _ in range(nops):
            if self.aux.random() < 0.15:
                self.aux_op()
            self.rng.choice(funcs)()
        # The last value and up to two others nothing uses, so that little
        # of the program is dead.
        body = "\n".join(self.body)
        unused = [
            v for v in self.values[:-1]
            if v[0].startswith("%v") and not re.search(re.escape(v[0]) + r"\b(?!\s*=)", body)
        ]
        results = [self.values[-1]] + self.rng.sample(unused, min(len(unused), self.rng.randint(0, 2)))
        results = [(n, s, ELEMENT) for n, s in results]
        if self.masks:
            n, s = self.rng.choice(self.masks)
            results.append((n, s, "i1"))
        results += [(n, s, ELEMENT) for n, s in self.aux_results]
        return self.text(results)

    def text(self, results):
        axes = ", ".join(f'"m{i}" = {s}' for i, s in enumerate(self.mesh))
        lines = [f"dt.mesh @mesh = <[{axes}]>"]
        args = ",\n    ".join(
            f"{n}: {ttype(s, e)} {{dt.sharding = {sh}}}" for n, s, sh, e in self.args
        )
        outs = []
        for _, shape, element in results:
            if self.rng.random() < 0.7:
                kinds = self.bool_kinds() if element == "i1" else None
                sharding = self.sharding(len(shape), partial=0.1, kinds=kinds)
                outs.append(f"{ttype(shape, element)} {{dt.sharding = {sharding}}}")
            else:
                outs.append(ttype(shape, element))
        lines.append(f"func.func @main(\n    {args})\n    -> ({', '.join(outs)}) {{")
        if integer():
            lowest = "-2147483648" if ELEMENT == "i32" else "-9223372036854775808"
            highest = "2147483647" if ELEMENT == "i32" else "9223372036854775807"
            constants = {"zero": "0", "ninf": lowest, "pinf": highest, "eighth": "1"}
        else:
            lowest = "-65504.0" if ELEMENT == "f16" else "-1.0e30"
            constants = {"zero": "0.0", "ninf": lowest, "pinf": lowest.lstrip("-"),
                         "eighth": "0.125"}
        lines += [f"  %{name} = arith.constant {value} : {ELEMENT}" for name, value in constants.items()]
        lines += [f"  %c{i} = arith.constant {i} : index" for i in range(4)]
        lines += self.body + self.aux_body
        names = ", ".join(n for n, _, _ in results)
        types = ", ".join(ttype(s, e) for _, s, e in results)
        lines.append(f"  return {names} : {types}")
        lines.append("}")
        lines += self.functions
        return "\n".join(lines) + "\n"


# Widths of a training step's layers: some make gradients of whole 64-byte
# runs in f32 (16, 32, 64, 128), some do not (the bucket lays those last).
WIDTHS = [3, 5, 8, 12, 16, 24, 32, 33, 64, 100, 128]
TRANSPOSED_A = ("affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
                "affine_map<(d0, d1, d2) -> (d0, d1)>")
TRANSPOSED_B = ("affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, "
                "affine_map<(d0, d1, d2) -> (d0, d1)>")


class TrainingStep(Program):
    """A training step of a random MLP, written out as a framework's
    autodiff would: the forward pass (matmul, bias, tanh or none, perhaps a
    residual connection; the activations perhaps with a sequence dim,
    collapsed into rows for each matmul and expanded after), the
    gradient of a squared loss, the backward pass (weight gradients x^T dz,
    bias gradients as sums over the batch, input gradients dz w^T; the
    transposes as linalg.transpose or as a matmul's indexing maps) and an
    update of each parameter (returned as its gradient alone, SGD, or SGD
    with momentum, whose buffer is an argument too), perhaps the loss.

    The mesh is data-parallel (m0), perhaps by a model axis (m1): the batch
    is split on m0 (or not), each parameter replicated on m0 (data
    parallelism: its gradient a partial sum to reduce) or split (sharded
    parameters: reduce_scatter and all_gather), and replicated or split on
    m1. So the programs are full of gradients that dt-combine-collectives
    puts in one call and dt-fill-buckets-in-place makes in their bucket,
    with members of every kind: whole 64-byte runs and not, made by a
    matmul or a reduction, returned or read by the update."""

    def arg(self, shape, sharding, element=None):
        name = f"%a{len(self.args)}"
        self.args.append((name, shape, sharding, element or ELEMENT))
        return name

    def data_sharding(self, rank):
        """The batch split on m0 (mostly), the sequence or the features
        perhaps on m1."""
        split = ["S(0)"] * 4 + ["R"]
        model = ["R", "R"] + [f"S({d})" for d in range(1, rank)]
        return self.placements(*[self.rng.choice(split if i == 0 else model) for i in range(len(self.mesh))])

    def parameter_sharding(self, rank):
        """Replicated on m0 (mostly: data parallelism) or split (sharded
        parameters); on m1 replicated or split along any dim."""
        data = ["R"] * 5 + [f"S({self.rng.randrange(rank)})"]
        model = ["R"] + [f"S({d})" for d in range(rank)]
        return self.placements(*[self.rng.choice(data if i == 0 else model) for i in range(len(self.mesh))])

    @staticmethod
    def stacked(sharding, micro):
        """`sharding` of a tensor with `micro` micro-batches stacked in
        front of its dims (none when 0): each split dim one further."""
        if not micro:
            return sharding
        return re.sub(r"S\((\d+)\)", lambda m: f"S({int(m.group(1)) + 1})", sharding)

    def micro_batch(self, name, step, micro, shape):
        """Micro-batch `step` of `name`, which stacks `micro` of `shape`."""
        out = self.fresh()
        zeros = ", ".join(["0"] * len(shape))
        sizes = ", ".join(str(n) for n in shape)
        ones = ", ".join(["1"] * (len(shape) + 1))
        self.emit(f"{out} = tensor.extract_slice {name}[{step}, {zeros}] [1, {sizes}] [{ones}] : "
                  f"{ttype([micro] + shape)} to {ttype(shape)}")
        return out

    def accumulate(self, outer, step, micro, grads, results):
        """Wraps the micro-batch's step written since `outer` (the body
        before it) in an scf.for over `micro` micro-batches, carrying the
        sums of `grads` and `results` (its loss) from zero fills; returns
        them as the loop's results."""
        carried = [(grad, shape, ELEMENT) for _, grad, shape in grads] + results
        tag = self.fresh()[2:]
        carries = [f"%acc{tag}_{k}" for k in range(len(carried))]
        sums = [self.added(carry, value, shape, element)
                for carry, (value, shape, element) in zip(carries, carried)]
        types = ", ".join(ttype(shape, element) for _, shape, element in carried)
        self.emit(f"scf.yield {', '.join(sums)} : {types}")
        inner, self.body = self.body, outer
        inits = [self.filled(shape) for _, shape, _ in carried]
        loop = self.fresh()
        self.emit(f"{loop}:{len(carried)} = scf.for {step} = %c0 to %c{micro} step %c1 iter_args("
                  + ", ".join(f"{c} = {i}" for c, i in zip(carries, inits)) + f") -> ({types}) {{")
        self.body += ["  " + line for line in inner]
        self.emit("}")
        total = [f"{loop}#{k}" for k in range(len(carried))]
        return ([(param, total[k], shape) for k, (param, _, shape) in enumerate(grads)],
                [(total[len(grads) + k], shape, element) for k, (_, shape, element) in enumerate(results)])

    def added(self, carry, value, shape, element):
        """`carry` + `value`, spelled (from the later stream) as arith.addf,
        linalg.add, or a generic adding `value` into `carry` in place."""
        spelling = self.later.choice(["arith", "arith", "named", "in place"])
        if spelling == "arith":
            return self.elementwise("arith.addf", carry, value, shape, element)
        t = ttype(shape, element)
        out = self.fresh()
        if spelling == "named":
            empty = self.fresh()
            self.emit(f"{empty} = tensor.empty() : {t}")
            self.emit(f"{out} = linalg.add ins({carry}, {value} : {t}, {t}) outs({empty} : {t}) -> {t}")
            return out
        identity = identity_map(len(shape))
        self.emit(f"{out} = linalg.generic {{indexing_maps = [{identity}, {identity}], "
                  f"iterator_types = [{parallel(len(shape))}]}} ins({value} : {t}) outs({carry} : {t}) {{")
        self.emit(f"  ^bb0(%in: {element}, %out: {element}):")
        self.emit(f"    %s = arith.addf %out, %in : {element}")
        self.emit(f"    linalg.yield %s : {element}")
        self.emit(f"}} -> {t}")
        return out

    def matmul(self, lhs, rhs, shape, maps=None):
        init, out = self.filled(shape), self.fresh()
        lhs_name, lhs_shape = lhs
        rhs_name, rhs_shape = rhs
        spelled_maps = f" indexing_maps = [{maps}]" if maps else ""
        self.emit(f"{out} = linalg.matmul{spelled_maps} ins({lhs_name}, {rhs_name} : {ttype(lhs_shape)}, "
                  f"{ttype(rhs_shape)}) outs({init} : {ttype(shape)}) -> {ttype(shape)}")
        return out

    def transposed(self, name, shape):
        empty, out = self.empty(shape[::-1])
        self.emit(f"{out} = linalg.transpose ins({name} : {ttype(shape)}) "
                  f"outs({empty} : {ttype(shape[::-1])}) permutation = [1, 0]")
        return out

    def elementwise(self, op, lhs, rhs, shape, element=None):
        out = self.fresh()
        self.emit(f"{out} = {op} {lhs}, {rhs} : {ttype(shape, element)}")
        return out

    def splat(self, value, shape, element=None):
        out = self.fresh()
        self.emit(f"{out} = arith.constant dense<{value}> : {ttype(shape, element)}")
        return out

    def cast(self, name, shape, source, target):
        """`name` converted elementwise from `source` to `target` (extf
        or truncf), or `name` itself when they are the same."""
        if source == target:
            return name
        out = self.fresh()
        op = "arith.extf" if target == "f32" else "arith.truncf"
        self.emit(f"{out} = {op} {name} : {ttype(shape, source)} to {ttype(shape, target)}")
        return out

    def sum_rows(self, name, shape, dims):
        kept = [n for d, n in enumerate(shape) if d not in dims]
        init, out = self.filled(kept), self.fresh()
        self.emit(f"{out} = linalg.reduce ins({name} : {ttype(shape)}) outs({init} : {ttype(kept)}) "
                  f"dimensions = [{', '.join(map(str, dims))}]")
        self.emit(f"    (%in: {ELEMENT}, %acc: {ELEMENT}) {{")
        self.emit(f"      %r = arith.addf %in, %acc : {ELEMENT}")
        self.emit(f"      linalg.yield %r : {ELEMENT}")
        self.emit("    }")
        return out

    def add_bias(self, name, shape, bias):
        """`bias` added along the last dim of `name`."""
        out = self.fresh()
        t = ttype(shape)
        loops = ", ".join(f"d{i}" for i in range(len(shape)))
        maps = (f"affine_map<({loops}) -> ({loops})>, affine_map<({loops}) -> (d{len(shape) - 1})>, "
                f"affine_map<({loops}) -> ({loops})>")
        self.emit(f"{out} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{parallel(len(shape))}]}} "
                  f"ins({name}, {bias} : {t}, {ttype(shape[-1:])}) outs({name} : {t}) {{")
        self.emit(f"    ^bb0(%x: {ELEMENT}, %b: {ELEMENT}, %o: {ELEMENT}):")
        self.emit(f"      %r = arith.addf %x, %b : {ELEMENT}")
        self.emit(f"      linalg.yield %r : {ELEMENT}")
        self.emit(f"  }} -> {t}")
        return out

    def flat(self, name, width):
        """Activations of `width` features as a matrix of rows: with a
        sequence dim, (batch, seq, width) collapsed to (batch * seq, width),
        as frameworks feed a linear layer."""
        if len(self.rows) == 1:
            return name
        out = self.fresh()
        self.emit(f"{out} = tensor.collapse_shape {name} [[0, 1], [2]] : "
                  f"{ttype(self.rows + [width])} into {ttype([self.rows[0] * self.rows[1], width])}")
        return out

    def unflat(self, name, width):
        """flat's inverse."""
        if len(self.rows) == 1:
            return name
        out = self.fresh()
        self.emit(f"{out} = tensor.expand_shape {name} [[0, 1], [2]] output_shape {self.rows + [width]} : "
                  f"{ttype([self.rows[0] * self.rows[1], width])} into {ttype(self.rows + [width])}")
        return out

    def generate(self, nops=None, convolutions=False):
        rng = self.rng
        self.mesh = rng.choice([[2], [2], [3], [4], [8], [2, 2], [4, 2], [2, 4], [1, 2]])
        layers = rng.randint(1, 5)
        widths = [rng.choice(WIDTHS) for _ in range(layers + 1)]
        batch = rng.choice([4, 6, 8, 16, 32, 64])
        # Now and then a sequence dim: activations (batch, seq, features).
        self.rows = [batch] if rng.random() < 0.6 else [rng.choice([2, 4, 8]), rng.choice([3, 4, 8, 16])]
        rows = self.rows
        count = math.prod(rows)  # the rows of each matmul
        # Now and then gradient accumulation: the inputs hold M micro-batches,
        # and an scf.for carries the sums of their gradients (and loss).
        micro = self.later.choice([0, 0, 0, 2, 3])
        inputs = [self.arg(([micro] if micro else []) + rows + [width],
                           self.stacked(self.data_sharding(len(rows) + 1), micro))
                  for width in (widths[0], widths[-1])]
        # Mixed precision, now and then, in 16-bit steps: f32 master
        # parameters, rounded to the step's type for the forward and
        # backward passes, updated in f32 by the gradients widened.
        master = ELEMENT if ELEMENT not in ("bf16", "f16") or rng.random() < 0.6 else "f32"
        params = []  # (weight, bias or None, whether a tanh follows, whether a residual adds)
        for i in range(layers):
            shape = [widths[i], widths[i + 1]]
            w = self.arg(shape, self.parameter_sharding(2), master)
            b = self.arg(shape[1:], self.parameter_sharding(1), master) if rng.random() < 0.8 else None
            act = i < layers - 1 or rng.random() < 0.5
            residual = widths[i] == widths[i + 1] and rng.random() < 0.5
            params.append((w, b, act, residual))
        # The parameters as the passes read them.
        working = {}
        for i, (w, b, _, _) in enumerate(params):
            working[w] = self.cast(w, [widths[i], widths[i + 1]], master, ELEMENT)
            if b:
                working[b] = self.cast(b, [widths[i + 1]], master, ELEMENT)

        if micro:
            outer, self.body = self.body, []
            step = self.fresh()
            x, target = (self.micro_batch(name, step, micro, rows + [width])
                         for name, width in zip(inputs, (widths[0], widths[-1])))
        else:
            x, target = inputs

        # Forward: a[i + 1] = act(h[i] w[i] + b[i]); h[i + 1] = a[i + 1], plus
        # h[i] with a residual connection.
        h, a = [x], [x]
        for i, (w, b, act, residual) in enumerate(params):
            shape = rows + [widths[i + 1]]
            z = self.matmul((self.flat(h[i], widths[i]), [count, widths[i]]),
                            (working[w], [widths[i], widths[i + 1]]), [count, widths[i + 1]])
            z = self.unflat(z, widths[i + 1])
            if b:
                z = self.add_bias(z, shape, working[b])
            if act:
                t = self.fresh()
                self.emit(f"{t} = math.tanh {z} : {ttype(shape)}")
                z = t
            a.append(z)
            h.append(self.elementwise("arith.addf", z, h[i], shape) if residual else z)

        # The gradient of the mean squared error, and the loss itself.
        out_shape = rows + [widths[-1]]
        diff = self.elementwise("arith.subf", h[-1], target, out_shape)
        dy = self.elementwise("arith.mulf", diff, self.splat(f"{1.0 / count:.6e}", out_shape), out_shape)
        results = []
        if rng.random() < 0.5:
            square = self.elementwise("arith.mulf", diff, diff, out_shape)
            results.append((self.sum_rows(square, out_shape, list(range(len(out_shape)))), [], ELEMENT))

        # Backward, last layer first.
        grads = []  # (parameter, its gradient, shape), in the order made
        for i in reversed(range(layers)):
            w, b, act, residual = params[i]
            shape = rows + [widths[i + 1]]
            dz = dy
            if act:  # tanh' = 1 - tanh^2
                square = self.elementwise("arith.mulf", a[i + 1], a[i + 1], shape)
                slope = self.elementwise("arith.subf", self.splat("1.0", shape), square, shape)
                dz = self.elementwise("arith.mulf", dy, slope, shape)
            w_shape = [widths[i], widths[i + 1]]
            h_flat, dz_flat = self.flat(h[i], widths[i]), self.flat(dz, widths[i + 1])
            if rng.random() < 0.5:
                dw = self.matmul((h_flat, [count, widths[i]]), (dz_flat, [count, widths[i + 1]]), w_shape,
                                 TRANSPOSED_A)
            else:
                dw = self.matmul((self.transposed(h_flat, [count, widths[i]]), [widths[i], count]),
                                 (dz_flat, [count, widths[i + 1]]), w_shape)
            grads.append((w, dw, w_shape))
            if b:
                grads.append((b, self.sum_rows(dz, shape, list(range(len(rows)))), w_shape[1:]))
            if i > 0:
                in_flat = [count, widths[i]]
                w16 = working[w]
                if rng.random() < 0.5:
                    back = self.matmul((dz_flat, [count, widths[i + 1]]), (w16, w_shape), in_flat, TRANSPOSED_B)
                else:
                    back = self.matmul((dz_flat, [count, widths[i + 1]]),
                                       (self.transposed(w16, w_shape), w_shape[::-1]), in_flat)
                back = self.unflat(back, widths[i])
                # Through a residual connection the gradient also passes as it is.
                dy = self.elementwise("arith.addf", back, dy, rows + [widths[i]]) if residual else back

        if micro:
            grads, results = self.accumulate(outer, step, micro, grads, results)

        # The update of each parameter, in the master parameters' type.
        for param, grad, shape in grads:
            kind = rng.choice(["gradient", "sgd", "sgd", "momentum"])
            if kind == "gradient":
                results.append((grad, shape, ELEMENT))
                continue
            grad = self.cast(grad, shape, ELEMENT, master)
            lr = self.splat("1.000000e-01", shape, master)
            if kind == "momentum":
                sharding = next(arg[2] for arg in self.args if arg[0] == param)
                buffer = self.arg(shape, sharding, master)
                decay = self.splat("9.000000e-01", shape, master)
                decayed = self.elementwise("arith.mulf", buffer, decay, shape, master)
                grad = self.elementwise("arith.addf", decayed, grad, shape, master)
                results.append((grad, shape, master))
            step = self.elementwise("arith.mulf", grad, lr, shape, master)
            results.append((self.elementwise("arith.subf", param, step, shape, master), shape, master))
        return self.text(results)


# The first line of a program whose lookup may index outside its table.
OUT_OF_BOUNDS_MARK = "// may index out of bounds"
# dt's report of such an index (dt_rt_index_out_of_range).
OUT_OF_BOUNDS_ERROR = re.compile(r"rank \d+: index -?\d+ is out of bounds \[0, \d+\)|the single-device reference: index")


def program(seed, convolutions=False, training_steps=False):
    """The program of `seed` and its number of ranks (with convolutions
    among its ops, or a training step: another program)."""
    global ELEMENT
    rng = random.Random(seed)
    if training_steps:
        ELEMENT = rng.choice(["f32"] * 5 + ["f64", "bf16", "f16"])
        prog = TrainingStep(rng)
    else:
        ELEMENT = rng.choice(["f32"] * 6 + ["f64", "bf16", "f16", "i32", "i64"])
        prog = Program(rng)
    text = prog.generate(rng.randint(2, 16), convolutions)
    if prog.may_index_out_of_bounds:
        text = OUT_OF_BOUNDS_MARK + "\n" + text
    ranks = 1
    for size in prog.mesh:
        ranks *= size
    return text, ranks


# What dt-run --verify prints when it judged results against f64.
DT_RUN_JUDGED = "against the program in f64 (the same inputs):"
ROUNDED_ARGUMENT = re.compile(r"%a0: tensor<[0-9x]*(bf16|f16|f32)>")
# A float conversion, spelled in f64 on both sides.
CONVERSION = re.compile(r"(%[\w#]+) = arith\.(?:extf|truncf) (%[\w#]+) : \S+ to (\S+)")
# How much further from the f64 result a program's distributed result
# may be than its single-device one (norm-wise, plus one unit in the last
# place of the largest value): each contraction split over ranks rounds its
# partial sums once more, and the gradients of a step compound that
# (measured: at most 3.9 times over 750 training steps).
ROUNDING_FACTOR = 4
UNIT = {"bf16": 2.0**-8, "f16": 2.0**-11, "f32": 2.0**-24}


def distance(values, exact):
    """The largest |value - exact|, infinite where one is NaN or infinite
    and the other is not the same."""
    worst = 0.0
    for a, b in zip(values, exact):
        if a == b or (math.isnan(a) and math.isnan(b)):
            continue
        d = abs(a - b)
        if not math.isfinite(d):
            return math.inf
        worst = max(worst, d)
    return worst


def as_accurate_as_reference(args, text, seed, distributed, tmp):
    """Whether a program whose floats are narrower than f64 (its first
    argument bf16, f16 or f32, mixed precisions too) that failed --verify is
    as accurate as its single-device reference all the same: both against
    the program spelled in f64 on the same inputs. A NaN or infinity where
    the f64 program has none counts as less accurate. Returns (verdict,
    report)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import npy

    element = ROUNDED_ARGUMENT.search(text).group(1)
    one_rank = re.sub(r'^(dt\.mesh @mesh = <\[.*)$',
                      lambda m: re.sub(r'= \d+', "= 1", m.group(1)), text, count=1, flags=re.M)
    signature = re.search(r"func\.func @main\(\n    (.*?)\)\n    -> \(", text, re.S).group(1)
    names = re.findall(r"(%a\d+): (tensor<[^>]*>)", signature)
    inputs = (one_rank.splitlines()[0 if not text.startswith("//") else 1] + "\n"
              f"func.func @main(\n    {signature})\n    -> ({', '.join(t for _, t in names)}) {{\n"
              f"  return {', '.join(n for n, _ in names)} : {', '.join(t for _, t in names)}\n}}\n")
    # Every float in f64; a conversion between two of them (now f64 to
    # f64, which arith rejects) becomes the identity max(x, x).
    wide = one_rank.replace("bf16", "f64").replace("f16", "f64").replace("f32", "f64")
    wide = CONVERSION.sub(r"\1 = arith.maximumf \2, \2 : \3", wide)
    files = {}
    for name, program in [("one_rank", one_rank), ("inputs", inputs), ("wide", wide)]:
        files[name] = os.path.join(tmp, f"{name}.mlir")
        with open(files[name], "w") as f:
            f.write(program)

    def run(command, out):
        proc = subprocess.run(command + ["--output-dir", os.path.join(tmp, out)],
                              capture_output=True, timeout=180, env=dict(os.environ, TMPDIR=tmp))
        if proc.returncode != 0:
            raise RuntimeError(f"{out}: exit code {proc.returncode}\n" + proc.stderr.decode(errors="replace"))

    try:
        run(distributed + ["--seed", str(seed % 1000)], "distributed")
        run([args.dt_run, files["one_rank"], "--seed", str(seed % 1000)], "reference")
        run([args.dt_run, files["inputs"], "--seed", str(seed % 1000)], "inputs")
        widened = []
        for i in range(len(names)):
            # Floats widened to f64 (exactly); integers and bools as they are.
            source = os.path.join(tmp, "inputs", f"result{i}.npy")
            header, _ = npy.read(source)
            target = source
            if header["descr"] in ("<V2", "<f2", "<f4"):
                values = npy.values(source)
                target = os.path.join(tmp, f"input{i}.npy")
                npy.write(target, dict(header, descr="<f8"), struct.pack(f"<{len(values)}d", *values))
            widened += ["--input", f"{i}={target}"]
        run([args.dt_run, files["wide"]] + widened, "exact")
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
        return "wrong", f"the check against f64 did not run: {e}"
    report, ok, k = [], True, 0
    while os.path.exists(os.path.join(tmp, "exact", f"result{k}.npy")):
        exact, got, ref = (npy.values(os.path.join(tmp, d, f"result{k}.npy"))
                           for d in ("exact", "distributed", "reference"))
        scale = max((abs(x) for x in exact if math.isfinite(x)), default=0.0)
        err_got, err_ref = distance(got, exact), distance(ref, exact)
        fine = err_got <= ROUNDING_FACTOR * err_ref + UNIT[element] * scale
        ok = ok and fine
        report.append(f"  result #{k}: against f64 (max {scale:.3g}), distributed max abs err {err_got:.3g}, "
                      f"single-device {err_ref:.3g}: {'ok' if fine else 'LESS ACCURATE'}")
        k += 1
    return ("rounding" if ok else "wrong"), "\n".join(report)


# --typed: the passes that give a program its typed form (those of
# dt-compile's global pipeline up to the redistributions).
TYPED_PASSES = ["-dt-normalize-tensor-ops", "-dt-propagate", "-dt-insert-redistribute"]


def tool_failure(name, command):
    """Runs a step before dt-run (dt-opt, dt-compile): None when it
    succeeds, else the verdict and its output (an error when it exits 1
    with a message, a crash otherwise)."""
    proc = subprocess.run(command, capture_output=True, timeout=180)
    if proc.returncode == 0:
        return None
    output = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    verdict = "error" if proc.returncode == 1 and "error:" in output else "crash"
    return verdict, f"{name}: exit code {proc.returncode}\n{output}"


def run_one(args, seed, text, ranks):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "program.mlir")
        with open(path, "w") as f:
            f.write(text)
        command = [args.dt_run]
        if args.mpirun:
            command = args.mpirun.split() + ["-np", str(ranks), args.dt_run, "--backend=mpi"]
        try:
            if args.typed:
                # The program as dt types it: every tensor with its
                # sharding, dt.redistribute where it moves. dt takes its
                # own output as input, with the user's types as pins.
                typed = os.path.join(tmp, "typed.mlir")
                failed = tool_failure("dt-opt", [args.typed, path, "-o", typed] + TYPED_PASSES)
                if failed:
                    return failed
                path = typed
            if args.dt_compile:
                artifact = os.path.join(tmp, "program.so")
                failed = tool_failure(
                    "dt-compile", [args.dt_compile, path, "-o", artifact] + args.compile_args.split())
                if failed:
                    return failed
                path = artifact
                if args.compile_only:
                    return "pass", ""
            # Each mpirun keeps its session directory in the program's own
            # temporary directory: two at once in one TMPDIR race to make it.
            repeat = ["--repeat", "2"] if seed % 3 == 0 else []
            proc = subprocess.run(
                command + [path, "--seed", str(seed % 1000), "--verify"] + repeat
                + args.dt_run_args.split(),
                capture_output=True,
                timeout=180,
                env=dict(os.environ, TMPDIR=tmp),
            )
        except subprocess.TimeoutExpired:
            return "crash", "timed out after 180 s"
        except OSError as e:
            # A tool that cannot be executed (relinked mid-campaign): no
            # verdict on the program, and the campaign goes on.
            return "error", f"error: cannot run {e.filename}: {e.strerror}"
        output = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
        # dt-run's own judge of a result past the tolerance against the
        # program in f64 (dt-widen-to-f64) ran, and passed the program or not.
        judged = DT_RUN_JUDGED in output
        passed = proc.returncode == 0 and "verify: PASS" in output
        if (proc.returncode != 0 and "verify: FAIL" in output) or (passed and judged):
            # A program whose floats are narrower than f64 may round past
            # the tolerance and still be as accurate as the reference: this
            # judge, which spells the program in f64 by itself, must agree
            # with dt-run's where that ran.
            if not ROUNDED_ARGUMENT.search(text):
                return "wrong", output
            widened = os.path.join(tmp, "widened")
            os.makedirs(widened)
            verdict, report = as_accurate_as_reference(args, text, seed, command + [path], widened)
            output += "against the program in f64 on the same inputs (fuzz-programs' judge):\n" + report
            if judged and (verdict == "rounding") != passed:
                return "wrong", output + "\nthe two judges disagree"
            return verdict, output
    if passed:
        return "pass", output
    if proc.returncode == 1 and text.startswith(OUT_OF_BOUNDS_MARK) and OUT_OF_BOUNDS_ERROR.search(output):
        return "bounds", output
    if proc.returncode == 1 and "error:" in output:
        return "error", output
    return "crash", f"exit code {proc.returncode}\n{output}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dt-run", required=False)
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=None)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--dt-run-args", default="")
    parser.add_argument("--dt-compile", help="compile with it first (then dt-run runs the artifact)")
    parser.add_argument("--compile-args", default="", help="dt-compile's options, as --target=cuda --emulate-gpu")
    parser.add_argument("--mpirun", help="run under this mpirun command (-np is added) on the MPI backend")
    parser.add_argument("--compile-only", action="store_true", help="with --dt-compile: compile, run nothing")
    parser.add_argument("--convolutions", action="store_true",
                        help="convolutions among the ops (other programs than without)")
    parser.add_argument("--training-steps", action="store_true",
                        help="training steps of random MLPs instead (gradients to combine)")
    parser.add_argument("--typed", metavar="DT_OPT",
                        help="run each program as this dt-opt types it (every tensor typed, "
                        "dt.redistribute where it moves), not as written")
    parser.add_argument("--print", action="store_true")
    args = parser.parse_args()

    seeds = [args.seed * 100003 + i for i in range(args.programs)]
    if args.print:
        for seed in seeds:
            text, ranks = program(seed, args.convolutions, args.training_steps)
            print(f"// seed {seed}, {ranks} ranks\n{text}")
        return 0
    if not args.dt_run:
        parser.error("--dt-run is required unless --print")

    counts = {"pass": 0, "bounds": 0, "rounding": 0, "wrong": 0, "error": 0, "crash": 0}
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        programs = {seed: program(seed, args.convolutions, args.training_steps) for seed in seeds}
        futures = {seed: pool.submit(run_one, args, seed, *programs[seed]) for seed in seeds}
        for seed in seeds:
            verdict, output = futures[seed].result()
            counts[verdict] += 1
            if verdict in ("pass", "bounds"):
                continue
            if verdict == "rounding":
                first = "past --verify's tolerance, as accurate as the single-device program against f64"
            else:
                first = next((l for l in output.splitlines() if "error" in l or "FAIL" in l), output[:200])
            print(f"{verdict}: seed {seed}: {first.strip()}")
            if args.out:
                os.makedirs(args.out, exist_ok=True)
                with open(os.path.join(args.out, f"{verdict}-{seed}.mlir"), "w") as f:
                    f.write(
                        f"// {verdict}: {programs[seed][1]} ranks; dt-run PROGRAM --seed {seed % 1000} "
                        f"--verify {args.dt_run_args} (compiled with: {args.compile_args})\n"
                    )
                    f.write("".join(f"// {l}\n" for l in output.splitlines()[-60:]))
                    f.write(programs[seed][0])
    print(
        f"fuzz-programs: {args.programs} programs, {counts['pass']} pass, "
        f"{counts['bounds']} out of bounds as expected, "
        f"{counts['rounding']} as accurate as the reference, "
        f"{counts['wrong']} wrong, {counts['crash']} crashes, {counts['error']} errors"
    )
    return 0 if counts["wrong"] == counts["crash"] == counts["error"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
