//===- Passes.td - dt transformation passes ----------------*- tablegen -*-===//

#ifndef DT_DIALECT_DT_TRANSFORMS_PASSES_TD
#define DT_DIALECT_DT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyEncodingsPass : Pass<"dt-verify-encodings", "ModuleOp"> {
  let summary = "Fails when a tensor of a global program lost its sharding";
  let description = [{
    In a function over global tensors (one whose signature carries a
    `#dt.sharding` encoding), every tensor value must carry one. Upstream
    rewrites can drop encodings silently (canonicalize turns some encoded
    types into plain ones); this pass reports each value that lost its
    encoding, naming the op. Every dt pass on the global program runs the
    same check at its end; this pass exposes it to pipelines and tests.

    ```mlir
    func.func @f(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8xf32> {
      // error: 'tensor.cast' op result #0 of type 'tensor<8xf32>' has no
      // #dt.sharding encoding, but it is in a function on global tensors
      %0 = tensor.cast %x : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> to tensor<8xf32>
      return %0 : tensor<8xf32>
    }
    ```
  }];
}

def NormalizeTensorOpsPass : Pass<"dt-normalize-tensor-ops", "ModuleOp"> {
  let summary = "Rewrites ops dt has no rule for, or shards better apart, into ops it plans";
  let description = [{
    Some ops have a form that dt's sharding rules and propagation already
    cover, and none of their own, or shard better taken apart; this pass
    rewrites them, before propagation (dt-compile and `dt-shard` run it
    first):

    - `tensor.generate` becomes a `linalg.generic` over a `tensor.empty`
      whose body reads its indices with `linalg.index` (upstream's
      destination-passing rewrite). Sharded, each rank generates its own
      piece, at global indices (dt-partition offsets `linalg.index`), and a
      body that reads a tensor from above is a gather like any other.
    - `tensor.reshape` of static shapes becomes a `tensor.collapse_shape` or
      `tensor.expand_shape` where one is the same reshape, else a collapse
      to one dim followed by an expand. The shape operand is then unused:
      the static result type already says the shape.
    - `linalg.softmax` over dim `d` becomes four `linalg.generic` ops, as
      upstream decomposes it for lowering: `m = max_d x` (from -inf,
      `arith.maxnumf`), `e = exp(x - m)`, `s = sum_d e` (from 0) and
      `y = e / s` into the softmax's output. Over a split `d`, propagation
      may then finish `m` and `s` with an all_reduce of one value per row
      each instead of gathering every row (a vocabulary-parallel softmax).
    - A multiply-accumulate `linalg.generic` whose first input is read at
      loops and whose second at sums of them (`dw[kh, kw, c, f] +=
      dy[n, h, w, f] * x[n, h + kh, w + kw, c]`: a filter's gradient as the
      chain rule may write it) gets its inputs the other way round, the
      image first, when that makes it a convolution (upstream's
      convolution interface reads the image as the first input). The
      products and their order are the same; propagation then prices its
      compute, and `dt-convolutions-to-matmuls` (which swaps such an op
      too) makes it a matmul: 10x faster than its loops here.
    - `scf.forall` becomes a nest of `scf.for` carrying its shared outputs,
      its `tensor.parallel_insert_slice`s `tensor.insert_slice`s into the
      carried values (the iterations write disjoint tiles, so running them
      in order computes the same).

    ```mlir
    %g = tensor.generate {
    ^bb0(%i: index):
      %f = arith.index_cast %i : index to i32
      tensor.yield %f : i32
    } : tensor<8xi32>
    %r = tensor.reshape %x(%shape)
        : (tensor<8x6xf32>, tensor<1xi64>) -> tensor<48xf32>
    ```
    becomes
    ```mlir
    %e = tensor.empty() : tensor<8xi32>
    %g = linalg.generic {... iterator_types = ["parallel"]} outs(%e ...) {
    ^bb0(%out: i32):
      %i = linalg.index 0 : index
      %f = arith.index_cast %i : index to i32
      linalg.yield %f : i32
    } -> tensor<8xi32>
    %r = tensor.collapse_shape %x [[0, 1]]
        : tensor<8x6xf32> into tensor<48xf32>
    ```
    A result type's `#dt.sharding` encoding is kept.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PropagatePass : Pass<"dt-propagate", "ModuleOp"> {
  let summary = "Decides the sharding of every tensor from a few annotations";
  let description = [{
    Turns a user's annotated program (`dt.sharding` argument/result
    attributes, `dt.constrain`) into the typed form, where every tensor type
    carries a `#dt.sharding` encoding. Annotations are hard constraints. Every
    other op picks, per mesh axis, the choice of its sharding rule (replicate,
    shard one factor, let partial values through where it is linear) whose
    redistributions cost least under the alpha-beta model, with a
    contraction's own compute on each rank added (a roofline of the device),
    given what is already decided around it. An all_reduce that can run in
    one call with another the plan already has (same block, mesh axis,
    reduction and element type, windows from input to first reader that
    overlap: what dt-combine-collectives combines) is priced at its bytes
    and the copies into the combined buffer, without a latency of its own
    (`combine=false` prices each alone). Sweeps run forward and backward
    in program order until nothing changes, and what no information reaches
    replicates. Totals within 0.1 us are a tie; ties go to the choice that
    moves nothing, then to the first in a fixed order, so the same input
    gives the same output.

    Before that, the plan search (`search`: the most whole plans it may
    price; 0 turns it off) looks for what those greedy choices miss: it
    propagates copies of the module with one more value an op makes pinned
    to each sharding (as a `dt.constrain` would pin it), or a function
    argument to another replicated or sharded layout (redistributed once at
    the entry, for all its readers; only when a first round with the
    arguments still fits in the budget), prices each plan as
    dt-cost-report does (collectives, combined calls once, contractions'
    compute and memory-bound ops), keeps the cheapest pin of each round if it
    saves more than a tie (0.1 us, or 1% of a plan under 10 us) and a device
    holds the plan (its largest live set per rank, when the plan without
    pins fits), and goes on from there while pins save and the
    budget lasts (a round after a pin tries the pins that saved in the one
    before, and every value again only when none of those saves). When a
    first round would not fit in the budget, it searches by windows
    (`windows=false` turns that off): each pin is priced on the ops within
    3 use-def steps of its value in its block (small loops, scf.while
    too, and branches whole), as a function whose arguments come and whose
    results leave as the plan has them (in a loop's body, inside a copy of
    the loop that carries what they read and make the next of, so a pin
    may change what a loop carries; windows that are the same program, as
    a model's layers are, are propagated once); the pins that save, in
    windows that do not overlap, are kept together when the whole plan
    with them is cheaper (else the half that saved most, and so on), and a
    round reprices only the windows whose edges changed. The program is
    then propagated with the pins found; `explain` says what the search
    priced and pinned.

    With `explain`, each op decided by its sharding rule gets a remark per
    mesh axis: the choice made, as the placements of its tensor operands
    and results, and its modelled cost (the redistributions it causes
    around the op, under the alpha-beta model, and for a contraction its
    compute, said apart), then every other choice with its cost or the
    reason it was ruled out:

    ```
    f.mlir:9:8: remark: linalg.matmul, mesh axis "tp": chose
      (R, S(1), S(1)) -> S(1) [0.0 us with 0.0072 us compute] over
      (R, R, R) -> R [9.2 us with 0.026 us compute], ...
    ```

    Where an op needs an operand in another sharding than the one it has,
    the change is made explicit as a `dt.redistribute` right away: upstream
    verifiers demand equal types (arith and math ops, destination-style
    inits, returns, loops), so the typed program could not wait for it.

    Before:
    ```mlir
    func.func @f(%x: tensor<16x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                 %w: tensor<64x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>}) ... {
      %y = linalg.matmul ins(%x, %w : ...) outs(%init : tensor<16x256xf32>) -> tensor<16x256xf32>
    ```
    After:
    ```mlir
    func.func @f(%x: tensor<16x64xf32, #dt.sharding<@mesh, [R]>>,
                 %w: tensor<64x256xf32, #dt.sharding<@mesh, [S(1)]>>) ... {
      %y = linalg.matmul ins(%x, %w : ...) outs(%init : tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>)
          -> tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>
    ```
  }];
  let options = [
    Option<"topology", "topology", "std::string", /*default=*/"\"\"",
           "File describing the links of mesh axes and the devices (see "
           "docs/Design.md)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Remark at each op on the choice each mesh axis made and what the "
           "other choices would have cost">,
    Option<"combine", "combine", "bool", /*default=*/"true",
           "Price an all_reduce whose window overlaps another's that the "
           "plan has (same block, axis, reduction and element type) at its "
           "bytes alone: dt-combine-collectives runs them as one call">,
    Option<"search", "search", "unsigned",
           /*default=*/"::mlir::dt::kDefaultPlanSearch",
           "The most whole plans the plan search may price (0: no search); "
           "it runs when its first round fits">,
    Option<"pinArguments", "pin-arguments", "bool", /*default=*/"true",
           "Let the plan search pin function arguments too (each moved once, "
           "at the entry), when a first round with them fits">,
    Option<"windows", "windows", "bool", /*default=*/"true",
           "When a first round of whole plans would not fit in the budget, "
           "search by windows: each pin priced on the ops around its value">
  ];
}

def InsertRedistributePass : Pass<"dt-insert-redistribute", "ModuleOp"> {
  let summary = "Makes every remaining change of sharding an explicit dt.redistribute";
  let description = [{
    For every op of a typed program whose operand shardings form no strategy
    of its sharding rule, chooses the cheapest strategy that produces the
    op's result shardings (its types are fixed) and redistributes the
    operands that differ. `dt-propagate` already leaves none behind; this
    pass makes typed programs written by hand or by other passes sound.

    Before:
    ```mlir
    %2 = math.exp %1 : tensor<8xf32, #dt.sharding<@mesh, [R]>>  // %1 is S(0)
    ```
    After:
    ```mlir
    %r = dt.redistribute %1 : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
                           -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
    %2 = math.exp %r : tensor<8xf32, #dt.sharding<@mesh, [R]>>
    ```
  }];
  let options = [
    Option<"topology", "topology", "std::string", /*default=*/"\"\"",
           "File describing the links of mesh axes and the devices (see "
           "docs/Design.md)">
  ];
}

def CheckPass : Pass<"dt-check", "ModuleOp"> {
  let summary = "Proves that the typed program's shardings are sound";
  let description = [{
    For every op of a function on global tensors, the shardings of its
    operands and results must form a valid strategy of its sharding rule, so
    that computing on the shards gives the single-device result: Partial
    values only where the op is linear in them, sharded factors only where
    the rule allows, every tensor with an encoding. Errors name the op, the
    operand, the shardings found and the fix.

    ```mlir
    // error: 'math.exp' op operand #0 is P(sum) on mesh axis "tp", but the op
    // is not linear in it: reduce it to R before this op (dt.redistribute)
    %1 = math.exp %0 : tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>
    ```
  }];
}

def CostReportPass : Pass<"dt-cost-report", "ModuleOp"> {
  let summary = "Prints each function's communication, compute and per-rank "
                "memory";
  let description = [{
    For each function on global tensors, prints a table of its
    redistributions and collectives (kind, mesh axes, bytes sent per rank,
    estimated time under the alpha-beta model) with totals, the compute of
    its contractions on each rank as their shardings split them (the device
    model propagation uses), the time its other ops on tensors (elementwise
    ops, reductions, transposes, fills) take streaming their tensors
    through memory on each rank (what a plan that runs them replicated
    pays), and the per-rank memory of its arguments and of
    its largest live set (with a warning when that exceeds the device's
    memory). A collective or contraction inside `scf.for` loops
    is priced per run; a collective's row says how often one call runs it
    (the product of the constant trip counts around it, `x8`; `x?` where a
    trip count is not constant, counted once), and the totals count every
    run. Collectives that dt-combine-collectives would run as one call
    (same block, kind, mesh axes, reduction and element type, overlapping
    windows, cheaper together under the model) are said so: the first row
    gives the call's size and time, the others name it by its row number
    (`in one call with #1`), and the total
    counts the call once (`combine=false` prices each alone). `--json`
    prints the same as JSON (`runs`: a number, or null; `call_size`,
    `call_seconds`, `in_call_of`: the index of the call's first row, or
    null). The IR is unchanged.

    ```
    dt-cost-report @main on @mesh [tp=4]
        #  op                               change         collective      axis     bytes/rank       time
        1  dt.redistribute (mlp_tp.mlir:26) P(sum) -> R    all_reduce      tp          6.0 KiB    18.0 us
      total: 1 collective, 6.0 KiB per rank, 18.0 us
      compute per rank: 2 contractions, 0.0 us, 4 memory-bound ops, 0.0 us
      memory per rank: arguments 36.0 KiB, largest live set 48.0 KiB
    ```
  }];
  let options = [
    Option<"json", "json", "bool", /*default=*/"false", "Print JSON">,
    Option<"combine", "combine", "bool", /*default=*/"true",
           "Price collectives that dt-combine-collectives would run as one "
           "call as that call">,
    Option<"topology", "topology", "std::string", /*default=*/"\"\"",
           "File describing the links of mesh axes and the devices (see "
           "docs/Design.md)">
  ];
}

def LowerRedistributePass : Pass<"dt-lower-redistribute", "ModuleOp"> {
  let summary = "Turns each dt.redistribute into its cheapest chain of collectives";
  let description = [{
    Plans every `dt.redistribute` as a shortest path over placement states
    under the alpha-beta model (the cost model of propagation, with the same
    topology option) and replaces it by that chain of global-form
    collectives: `dt.all_gather`, `dt.all_reduce`, `dt.reduce_scatter`,
    `dt.all_to_all`, and the local `dt.local_slice` and `dt.to_partial`. Each
    step changes one mesh axis and keeps the nesting of several axes on one
    dim, so every intermediate type is a valid sharding and the collective
    verifiers check every step. A P(sum) -> S(d) change is one
    reduce_scatter, never an all_reduce and a slice. Before planning, the sum
    (or difference) of two reductions of partial sums becomes one reduction
    of the sum. Chains of redistributions fold first (dt.redistribute's
    folder), and `dt-shard` runs CSE afterwards, which merges identical
    collectives of one value. A value redistributed for several users
    starts a later redistribution from an earlier one's result (one that
    dominates it) when that plan costs less: a partial sum reduced to R for
    one user is sliced locally for another, not reduce-scattered again.

    With `explain`, each redistribution gets a remark with the plan, its
    modelled time and bytes per rank, and DTensor's per-axis plan where that
    differs (each axis that changes, in mesh order, through R where no one
    collective does it):
    `remark: [S(0), S(0)] -> [R, S(0)] of 8x8xf32: all_gather on "y" dim 0,
    all_gather on "x" dim 0, local_slice on "y" dim 0 [6.0 us, 192.0 B per
    rank]`.

    Before:
    ```mlir
    %1 = dt.redistribute %0 : tensor<8x8xf32, #dt.sharding<@mesh, [S(0), S(0)]>>
                           -> tensor<8x8xf32, #dt.sharding<@mesh, [R, S(0)]>>
    ```
    After:
    ```mlir
    %a = dt.all_gather %0 on @mesh ["y"] dim 0 : ... [S(0), S(0)] -> ... [S(0), R]
    %b = dt.all_gather %a on @mesh ["x"] dim 0 : ... [S(0), R] -> ... [R, R]
    %1 = dt.local_slice %b on @mesh ["y"] dim 0 : ... [R, R] -> ... [R, S(0)]
    ```
  }];
  let options = [
    Option<"topology", "topology", "std::string", /*default=*/"\"\"",
           "File describing the links of mesh axes (see docs/Design.md)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per redistribution with its plan and DTensor's">,
    Option<"exchange", "exchange", "bool", /*default=*/"true",
           "Let plans change a layout by point-to-point copies (dt.exchange) "
           "where that moves less">
  ];
}

def PartitionPass : Pass<"dt-partition", "ModuleOp"> {
  let summary = "Rewrites the global program into the SPMD program every rank runs";
  let description = [{
    Takes a global program whose changes of sharding are already collectives
    (after `dt-lower-redistribute`) and gives every tensor its local (per
    rank) type: the shape of the shard the rank holds, without an encoding.
    Ops compute on local shards: linalg, arith, math and tensor ops keep
    their meaning with local types (reshape and slice sizes become local),
    collectives take their local form on their mesh-axis groups,
    `dt.to_partial` of a sum keeps the value on the first rank of each group
    and zeros elsewhere, and `linalg.index` over a sharded loop adds the
    rank's offset through `dt.axis_index`. Partial values are plain local
    tensors whose meaning was fixed by the global program.

    Uneven shards (torch.chunk, one split level per mesh axis) are padded to
    the chunk size: a reduction over an unevenly split dim skips the padded
    iterations (a multiply-accumulate's inputs, a contraction's or a
    convolution's, get their padding zeroed instead, so it can still
    become a library call); collectives of uneven dims carry their layout
    (`extent`, `outer_axes`) so the runtime finds each piece, and packed
    results are sliced back. With `explain`
    (`dt-compile --explain`), a remark at each op that sums over an
    unevenly split dim says which of the two it got (`remark:
    linalg.generic sums over loop d1 (9, split unevenly over "tp"): both
    inputs' padding zeroed first, so it keeps its body and can be a library
    call`).

    Before:
    ```mlir
    func.func @f(%x: tensor<16x64xf32, #dt.sharding<@mesh, [S(0)]>>) -> ... {
      %0 = math.exp %x : tensor<16x64xf32, #dt.sharding<@mesh, [S(0)]>>
    ```
    After (tp = 4):
    ```mlir
    func.func @f(%x: tensor<4x64xf32>) -> ... {
      %0 = math.exp %x : tensor<4x64xf32>
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "A remark at each op that sums over an unevenly split dim: how "
           "its padding is kept out of the sum">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def CombineCollectivesPass : Pass<"dt-combine-collectives", "ModuleOp"> {
  let summary = "Combines collectives of one group into one call (gradient and FSDP buckets)";
  let description = [{
    On the local (partitioned) program: collectives of one block with the
    same op, mesh, axes, reduction and element type become one collective of
    their inputs flattened and concatenated, its result cut back into each,
    when the alpha-beta model says that is cheaper: each collective pays its
    latency (the `(n-1)` or `2(n-1)` message steps of its group's link), and
    combining pays the copies the lowering leaves (every byte read and
    written at the device's memory bandwidth, or at its cache's for the
    part of the copy that fits there: the topology's `cache` line): an
    input into the buffer, unless an op of the block makes it for this
    collective alone (dt-fill-buckets-in-place then makes it in the
    buffer); a gather's result out; and any result the function returns,
    out into the caller's buffer. This is DDP's gradient
    bucketing (all_reduce) and FSDP's (the weights' all_gathers, the
    gradients' reduce_scatters), decided by the model.

    All_reduces always qualify. An all_gather or reduce_scatter qualifies
    along a dim with only extent-1 dims before it (its pieces lie one after
    another in flat order), evenly (no `extent`; the group divides a
    reduce_scatter's dim): the combined gather's `[members x total]` result
    holds each tensor's gather in a column block; a reduce_scatter's inputs
    are cut into one row per member and laid side by side.

    An all_reduce's or all_gather's inputs go into the buffer whole
    multiples of 64 bytes first, then the others, each in program order:
    every run but the second and later of the others starts at a multiple
    of 64 bytes, where a member can be made in place.

    Each collective can run between the op that makes its input ready and
    the first op that reads its result; a collective joins a bucket when
    those windows still overlap. The combined collective goes where the
    first member was, or right after the last input is made if that comes
    later, and carries `dt.combined = N`. Collectives of different blocks (a
    loop body and the code around it) and predicates (i1) are left alone.

    With `overlap` (the CUDA target, where each collective runs on its own
    stream beside the compute that follows its input), a member whose input
    is ready before the bucket's last one loses the overlap it had with the
    compute in between (the contractions there, at the device's rate, up to
    its own time): that counts against combining, so collectives separated
    by a layer's matmuls stay apart while those ready together combine.

    Before (dp = 2):
    ```mlir
    %a = dt.all_reduce %ga on @mesh ["dp"] sum : tensor<64x32xf32> -> tensor<64x32xf32>
    %b = dt.all_reduce %gb on @mesh ["dp"] sum : tensor<32xf32> -> tensor<32xf32>
    ```
    After:
    ```mlir
    %fa = tensor.collapse_shape %ga [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
    %c = tensor.concat dim(0) %fa, %gb : (tensor<2048xf32>, tensor<32xf32>) -> tensor<2080xf32>
    %r = dt.all_reduce %c on @mesh ["dp"] sum {dt.combined = 2 : i64} : tensor<2080xf32> -> tensor<2080xf32>
    %ra = tensor.extract_slice %r[0] [2048] [1] : tensor<2080xf32> to tensor<2048xf32>
    %a = tensor.expand_shape %ra [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
    %b = tensor.extract_slice %r[2048] [32] [1] : tensor<2080xf32> to tensor<32xf32>
    ```
  }];
  let options = [
    Option<"topology", "topology", "std::string", /*default=*/"\"\"",
           "File describing the links of mesh axes (see docs/Design.md)">,
    Option<"overlap", "overlap", "bool", /*default=*/"false",
           "Collectives run beside compute (the CUDA target): count the "
           "overlap a combined member loses">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per combined call (with how many members are made "
           "in its buffer), and per collective kept apart from an open "
           "bucket with the reason">
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def PriceCollectivesPass : Pass<"dt-price-collectives", "ModuleOp"> {
  let summary = "Records on each collective what the cost model expects it "
                "to take";
  let description = [{
    On the local program (after dt-partition and dt-combine-collectives),
    sets `dt.model_seconds` on every all_reduce, all_gather, reduce_scatter
    and all_to_all (and 0 on a local_slice, which moves nothing between
    ranks): the alpha-beta estimate of one run over its group's link
    (the default links or the topology file's), the formula dt-propagate
    and dt-cost-report use. The lowering passes it to the runtime beside the
    collective's site name, and `dt-run --profile` prints it beside the time
    measured, so the model can be checked (and a topology file fitted)
    against a real run.

    ```mlir
    %r = dt.all_reduce %g on @mesh ["dp"] sum {dt.model_seconds = 6.0e-06 : f64} : tensor<256xf32> -> tensor<256xf32>
    ```
  }];
  let options = [
    Option<"topology", "topology", "std::string", /*default=*/"\"\"",
           "File describing the links of mesh axes and the devices (see "
           "docs/Design.md)">
  ];
}

def StripShardingsPass : Pass<"dt-strip-shardings", "ModuleOp"> {
  let summary = "Removes every trace of sharding, leaving the single-device program";
  let description = [{
    Drops `dt.sharding` and `dt.name` attributes and every `#dt.sharding`
    tensor encoding, forwards the inputs of `dt.constrain` and
    `dt.redistribute` (both are the identity on global values), and erases
    `dt.mesh`. What remains is the program a single device runs: dt-compile's
    reference entry, and the oracle of the differential tests. A program
    that already holds collectives has no single-device meaning and is
    rejected.
  }];
}

def WidenPartialSumsPass : Pass<"dt-widen-partial-sums", "ModuleOp"> {
  let summary = "Adds up the ranks' parts of a 16-bit sum in f32, rounding once";
  let description = [{
    On the local program (after `dt-partition`): a `dt.all_reduce` or
    `dt.reduce_scatter` (sum or avg) of f16 or bf16 whose input is a sum
    that accumulates into a 16-bit init (a reduction, a column sum, a
    norm; as `dt-widen-half-sums` matches one), perhaps through
    elementwise linalg ops (generics or named ones: `linalg.add`, `mul`,
    `transpose`, `broadcast`, `map`, ...) or arith ops of tensors linear in
    it (`addf`, `subf`, `mulf`, `divf`, `negf`: a mean, a scaled loss) and
    moves of its
    elements (`tensor.collapse_shape`, `expand_shape`, `extract_slice`: a
    reshape into a 0-D loss), each value on the way after the sum used
    once, reduces the parts in f32: the sum accumulates in f32, the
    generics and arith ops compute in f32 (what they combine it with
    extended), the moves move
    f32, the collective moves f32, and its result is rounded once to the
    16-bit type. A sum that several collectives reduce (CSE makes one of two
    identical sums) is widened once for all of them; its other readers read
    it rounded once.

    The sum may be one an `scf.for` carries, each iteration adding to it
    (gradient accumulation over micro-batches): a sum accumulating into the
    carry, or a plain add of the carry and a sum of this iteration that
    accumulates into a zero fill (`acc + sum(x)` by `arith.addf`,
    `linalg.add`, a generic, or a generic adding its input into the carry
    as its init: each becomes `sum(x)` accumulated into `acc`), perhaps
    with linear links between, each
    value on the way used once. The loop then carries the sum in f32 from
    its init widened, and its readers other than the collective read it
    rounded once after the loop; rounded at every iteration, each rank's
    part would lose what the single device's running sum keeps.

    The single-device program accumulates such a sum in f32 and rounds it
    once (`dt-widen-half-sums`); rounded to 16 bits on each rank first,
    the parts would lose what it keeps (257 is 256 in bf16: the parts 257,
    257, -256, -256 add up to 0 instead of 2). The collective moves twice
    the bytes; these are reductions' results, smaller than what they
    reduce.

    Matmuls (contractions with rows and columns, batched or not) are left
    as they are: the library accumulates them in f32 and rounds once per
    rank, and reducing their results in f32 would double the bytes of a
    data-parallel step's gradients (the choice PyTorch's FSDP calls
    `reduce_dtype`). A matrix-vector product or a dot is a sum like the
    others. With `matmuls`, a matmul's partial product is widened too:
    the library multiplies the 16-bit operands into an f32 result, which
    the ranks reduce (`dt-compile --reduce-matmuls-in-f32`).

    ```mlir
    %p = linalg.reduce ins(%x : tensor<16x32xbf16>) outs(%z : tensor<32xbf16>) dimensions = [0]
      (%in: bf16, %acc: bf16) { %s = arith.addf %in, %acc : bf16
                                linalg.yield %s : bf16 }
    %r = dt.all_reduce %p on @mesh ["dp"] sum : tensor<32xbf16> -> tensor<32xbf16>
    ```
    becomes
    ```mlir
    %p = linalg.generic ... ins(%x : tensor<16x32xbf16>) outs(%z32 : tensor<32xf32>)
      { %e = arith.extf %in : bf16 to f32
        %s = arith.addf %e, %acc : f32 ... }
    %r32 = dt.all_reduce %p on @mesh ["dp"] sum : tensor<32xf32> -> tensor<32xf32>
    %r = linalg.generic ... { arith.truncf %in : f32 to bf16 ... }
    ```
  }];
  let options = [
    Option<"matmuls", "matmuls", "bool", "false",
           "Also a matmul's partial product: made in f32 by the library and "
           "reduced in f32 (twice the bytes)">,
    Option<"explain", "explain", "bool", "false",
           "A remark at each collective that now reduces f32, with its bytes">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def WidenToF64Pass : Pass<"dt-widen-to-f64", "ModuleOp"> {
  let summary = "Spells a program's floats in f64: the yardstick of its rounding";
  let description = [{
    Every float type narrower than f64 (f32, f16, bf16, the f8 types)
    becomes f64: in function signatures, op results, block arguments and
    attributes; a constant keeps its value (each narrow value is exact in
    f64). A conversion between two floats becomes the identity and is
    erased. What remains computes what the program means with rounding
    far below its own: dt-compile's f64 reference (`--wide-reference`), by
    which `dt-run --verify` tells a distributed result that only rounds
    differently from one that is wrong (docs/Runtime.md).

    A program that reinterprets a narrow float's bits (`arith.bitcast`,
    `tensor.bitcast`), holds narrow floats in a resource blob, or declares
    an external function over narrow floats has no f64 spelling and is
    rejected, naming the op.
  }];
}

def InsertBoundsChecksPass : Pass<"dt-insert-bounds-checks", "ModuleOp"> {
  let summary = "Checks each tensor access whose index may fall outside its tensor";
  let description = [{
    An index computed from data (a gather's ids, an embedding's tokens) may
    lie outside the tensor it reads: MLIR leaves the read undefined, the
    compiled code would read neighbouring memory, and a vocab-parallel
    lookup would silently read zeros. PyTorch raises an error there; so does
    dt. Each index of a `tensor.extract` or `tensor.insert` that is not
    provably in range goes through a `dt.bounds_check` against the tensor's
    extent.

    Provably in range, and left alone: a constant in range, a `linalg.index`
    of a loop no longer than the extent, an `scf.for` induction variable
    whose constant bounds lie within it, an unsigned remainder by a constant
    no larger than the extent (`arith.remui`), and an `index_cast` of any of
    these. Everything else is checked; a check is a compare and a branch not
    taken.

    The pass runs on the global program (dt-compile runs it before
    propagation and before the reference is stripped), so the bound is the
    whole tensor's: a vocab-parallel table's ids are checked against the
    vocabulary, not the rank's rows.
  }];
  let dependentDialects = ["::mlir::dt::DTDialect"];
}

def TestPrintShardingRulesPass
    : Pass<"dt-test-print-sharding-rules", "ModuleOp"> {
  let summary = "Prints every op's sharding choices on one mesh axis (for tests)";
  let description = [{
    For each op with a sharding rule, prints the op name and each choice one
    mesh axis can make, as the placements of its tensor operands and results
    (`-` for non-tensors), with `pieces | extent` for reshape factors. Lets
    lit tests pin down the rule of every op family.

    ```
    linalg.matmul: [R, R, R] -> [R] | [S(0), R, S(0)] -> [S(0)] | ...
    ```
  }];
}

def TestSimulateSPMDPass : Pass<"dt-test-simulate-spmd", "ModuleOp"> {
  let summary = "Replaces each sharded function by all its ranks run side by side (for tests)";
  let description = [{
    For the differential test against upstream's CPU pipeline. Each function
    on global tensors (collectives lowered, not partitioned) is partitioned,
    then every rank's copy of the local program is instantiated in one
    function with the original global, unencoded signature: inputs are
    sliced into each rank's shard, `dt.axis_index` becomes each rank's
    coordinate, and each collective combines the copies of its group with
    plain tensor ops following its definition; the results are assembled
    from the shards (and reduced over partial axes). The function then
    computes the global result through the SPMD program, and can run
    wherever plain tensor programs run.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TestAddDriverPass : Pass<"dt-test-add-driver", "ModuleOp"> {
  let summary = "Adds @dt_test_driver: calls a function on fixed inputs and prints its results (for tests)";
  let description = [{
    The function's arguments must be static f32 tensors; element k of every
    input is ((7k) mod 11) - 5, small integers so that sums are exact in any
    order. Each f32 tensor result is printed with printMemrefF32.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"main\"",
           "The function to call">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // DT_DIALECT_DT_TRANSFORMS_PASSES_TD
