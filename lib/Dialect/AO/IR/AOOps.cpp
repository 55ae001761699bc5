//===- AOOps.cpp - The ao (activation offload) dialect --------------------===//
//
// Verifiers that encode the offload protocol: offload -> one forward wait
// (keepalive = the offloaded source) -> host tensor read only by reloads;
// reload of a forward wait's result -> one backward wait.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/AO/IR/AOOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::ao;

#include "joint/Dialect/AO/IR/AODialect.cpp.inc"

void AODialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "joint/Dialect/AO/IR/AOOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "joint/Dialect/AO/IR/AOOps.cpp.inc"

/// The single use of `value` as the input of an ao.wait_tensor, or a failure
/// naming what was found instead.
static LogicalResult verifySingleWaitUser(Operation *op, Value value,
                                          StringRef what) {
  if (!value.hasOneUse())
    return op->emitOpError()
           << "must be consumed by exactly one ao.wait_tensor, but " << what
           << " has " << std::distance(value.use_begin(), value.use_end())
           << " uses";
  OpOperand &use = *value.use_begin();
  auto wait = dyn_cast<WaitTensorOp>(use.getOwner());
  if (!wait || use.getOperandNumber() != 0)
    return op->emitOpError()
           << "must be consumed by exactly one ao.wait_tensor as its input, "
              "but is used by "
           << use.getOwner()->getName();
  return success();
}

LogicalResult OffloadOp::verify() {
  return verifySingleWaitUser(*this, getResult(), "the host copy");
}

Operation *ReloadOp::getOffload() {
  auto wait = getInput().getDefiningOp<WaitTensorOp>();
  return wait ? wait.getInput().getDefiningOp<OffloadOp>() : nullptr;
}

LogicalResult ReloadOp::verify() {
  if (!getOffload())
    return emitOpError() << "source must be the forward ao.wait_tensor of an "
                            "ao.offload (a reload may never race its own "
                            "offload)";
  if (getDevice().empty())
    return emitOpError() << "needs a target device";
  return verifySingleWaitUser(*this, getResult(), "the reloaded tensor");
}

bool WaitTensorOp::isOffloadWait() {
  return getInput().getDefiningOp<OffloadOp>() != nullptr;
}
bool WaitTensorOp::isReloadWait() {
  return getInput().getDefiningOp<ReloadOp>() != nullptr;
}

LogicalResult WaitTensorOp::verify() {
  if (auto offload = getInput().getDefiningOp<OffloadOp>()) {
    if (!getKeepalive())
      return emitOpError() << "waits on an ao.offload and must carry the "
                              "offloaded source as keepalive";
    if (getKeepalive() != offload.getInput())
      return emitOpError() << "keepalive must be the offloaded source";
    // The host copy is read only by reloads, and kept alive by their waits
    // (torch: gpu = ao.wait_tensor(gpu, keepalive=cpu)).
    for (OpOperand &use : getResult().getUses()) {
      Operation *user = use.getOwner();
      if (isa<ReloadOp>(user))
        continue;
      if (auto wait = dyn_cast<WaitTensorOp>(user);
          wait && wait.isReloadWait() && wait.getKeepalive() == getResult() &&
          use.getOperandNumber() == 1)
        continue;
      return emitOpError()
             << "result is a host tensor and may only be read by "
                "ao.reload (or kept alive by its wait), but is used by "
             << user->getName();
    }
    return success();
  }
  if (auto reload = getInput().getDefiningOp<ReloadOp>()) {
    if (getLastUseOfStorage())
      return emitOpError() << "waits on an ao.reload and takes no last_use";
    if (getKeepalive() && getKeepalive() != reload.getInput())
      return emitOpError() << "waits on an ao.reload; its keepalive must be "
                              "the host tensor being reloaded";
    return success();
  }
  return emitOpError() << "input must be the result of ao.offload or "
                          "ao.reload";
}
