//===- StatePattern.h - Patterns forwarding to a state ----------*- C++ -*-===//
//
// The appliers (remat, CPU offload) keep what their roots share (storage
// groups, fresh names, a summary) in one state object; each root is a
// pattern that forwards its match to one member of that state.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_LIB_DIALECT_JOINT_TRANSFORMS_STATEPATTERN_H
#define JOINT_LIB_DIALECT_JOINT_TRANSFORMS_STATEPATTERN_H

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace joint {

/// A pattern rooted at `OpT` whose matchAndRewrite is `state.*Rewrite`.
template <typename OpT, typename StateT,
          LogicalResult (StateT::*Rewrite)(OpT, PatternRewriter &)>
struct StatePattern : OpRewritePattern<OpT> {
  StatePattern(MLIRContext *ctx, StateT &state)
      : OpRewritePattern<OpT>(ctx), state(state) {}
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    return (state.*Rewrite)(op, rewriter);
  }
  StateT &state;
};

} // namespace joint
} // namespace mlir

#endif // JOINT_LIB_DIALECT_JOINT_TRANSFORMS_STATEPATTERN_H
