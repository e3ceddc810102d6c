//===- DTInterfaces.td - dt op interfaces ------------------*- tablegen -*-===//

#ifndef DT_DIALECT_DT_IR_DTINTERFACES_TD
#define DT_DIALECT_DT_IR_DTINTERFACES_TD

include "mlir/IR/OpBase.td"

def DT_ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::mlir::dt";
  let description = [{
    An op that dt can shard. Its rule maps every dim of every tensor operand
    and result to a factor of the op's iteration space (parallel, reduction,
    or needing replication) and lists the operands in which the op is linear
    for each reduction kind, so that partial values may flow through it.
    From the rule, dt enumerates the op's valid strategies: per mesh axis,
    replicate, shard one factor, or pass partial values through.

    dt attaches external models of this interface to the upstream ops of its
    input language (linalg, arith, math, tensor).
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"The op's sharding rule; failure when this instance has none.",
      /*retTy=*/"::mlir::FailureOr<::mlir::dt::ShardingRule>",
      /*methodName=*/"getShardingRule">
  ];
}

#endif // DT_DIALECT_DT_IR_DTINTERFACES_TD
