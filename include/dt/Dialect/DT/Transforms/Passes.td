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
  let statistics = [
    Statistic<"numFunctionsChecked", "functions-checked",
              "Number of functions on global tensors checked">
  ];
}

#endif // DT_DIALECT_DT_TRANSFORMS_PASSES_TD
