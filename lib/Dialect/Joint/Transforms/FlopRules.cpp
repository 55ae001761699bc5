//===- FlopRules.cpp - Warn about ops the cost model has no rule for ------===//
//
// The warning joint-memory-report and joint-plan-memory give for the ops
// CostModel prices by a guess (CostModel::getGuessedFlopOps).
//
//===----------------------------------------------------------------------===//

#include "FlopRules.h"
#include "joint/Support/NamedDiagnostics.h"

using namespace mlir;
using namespace mlir::joint;

void mlir::joint::warnOpsWithoutFlopRule(ArrayRef<CallFunctionOp> ops,
                                         StringRef pass) {
  if (ops.empty())
    return;
  InFlightDiagnostic d = emitWarning(ops.front()->getLoc());
  markNamed(d, CallFunctionOp(ops.front()).getName())
      << pass << ": " << ops.size()
      << " op(s) have no FLOP rule and count one FLOP per element of their "
         "largest tensor: ";
  constexpr size_t kNamed = 3;
  llvm::interleaveComma(ops.take_front(kNamed), d, [&](CallFunctionOp op) {
    d << "'" << op.getName() << "' (" << op.getTarget() << ")";
  });
  if (ops.size() > kNamed)
    d << " and " << ops.size() - kNamed << " more";
}
