//===- MemoryModel.cpp - Storage-level liveness of a joint graph -*- C++
//-*-===//
//
// Builds per-storage lifetimes in one pass over the storages and their uses,
// then sweeps allocation/free deltas into per-op device and host timelines.
// Blocks come from the exporter's `joint.model` structure (docs/format.md,
// "model") or, failing that, from module-stack frames `<container>.<int>`.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/MemoryModel.h"
#include "joint/Analysis/ModelStructure.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::joint;

MemoryModel::MemoryModel(GraphOp, AnalysisManager &am) {
  build(am.getAnalysis<StorageAliasAnalysis, GraphOp>());
}

MemoryModel::MemoryModel(const StorageAliasAnalysis &aliases) {
  build(aliases);
}

std::optional<unsigned> MemoryModel::getIndex(Operation *op) const {
  auto it = indexOf.find(op);
  if (it == indexOf.end())
    return std::nullopt;
  return it->second;
}

const StorageLifetime *MemoryModel::getLifetime(const Storage *s) const {
  auto it = lifetimeOf.find(s);
  return it == lifetimeOf.end() ? nullptr : &lifetimes[it->second];
}

Operation *MemoryModel::getPeakOp() const {
  return ops.empty() ? nullptr : ops[peakIndex];
}

std::optional<unsigned> MemoryModel::getBlockOf(Operation *op) const {
  auto it = blockOfOp.find(op);
  if (it == blockOfOp.end())
    return std::nullopt;
  return it->second;
}

/// Bytes spanned by one member view: (offset + extent) * element size, with
/// extent = 1 + sum (size_i - 1) * stride_i (0 for an empty tensor).
static std::optional<int64_t> memberSpanBytes(Value v) {
  TensorMetaAttr meta = getTensorMeta(v);
  if (!meta)
    return getNumBytesHint(v);
  auto type = dyn_cast<RankedTensorType>(v.getType());
  std::optional<ScalarType> dtype =
      type ? getScalarType(type.getElementType()) : std::nullopt;
  if (!dtype)
    return std::nullopt;
  ArrayRef<SymInt> sizes = meta.getSizes(), strides = meta.getStrides();
  if (sizes.size() != strides.size() || !meta.getOffset().hasHint())
    return std::nullopt;
  int64_t extent = 1;
  for (auto [size, stride] : llvm::zip_equal(sizes, strides)) {
    if (!size.hasHint() || !stride.hasHint())
      return std::nullopt;
    if (size.hint == 0)
      return int64_t(0);
    int64_t step;
    if (llvm::MulOverflow(size.hint - 1, std::abs(stride.hint), step) ||
        llvm::AddOverflow(extent, step, extent))
      return std::nullopt;
  }
  int64_t span, bytes;
  if (llvm::AddOverflow(meta.getOffset().hint, extent, span) ||
      llvm::MulOverflow(span, getElementBytes(*dtype), bytes))
    return std::nullopt;
  return bytes;
}

std::optional<int64_t> MemoryModel::computeStorageBytes(const Storage &s) {
  // ao copies are fresh contiguous tensors of the source's elements.
  if (Operation *def = s.owner.getDefiningOp())
    if (isa<ao::OffloadOp, ao::ReloadOp>(def))
      return getNumBytesHint(s.owner);
  int64_t bytes = 0;
  for (Value member : s.members) {
    std::optional<int64_t> span = memberSpanBytes(member);
    if (!span)
      return std::nullopt;
    bytes = std::max(bytes, *span);
  }
  return bytes;
}

/// The FQN of a frame named `<container>.<int>` (a ModuleList/Sequential
/// entry), outermost first; empty when the stack has none.
void MemoryModel::findBlocks(GraphOp graph) {
  // Blocks and each op's block from ModelStructure (joint.model, verified by
  // the dialect, else module-stack paths `<container>.<int>`).
  ModelStructure model(graph.getOperation());
  blockSource = model.getBlockSource().str();
  for (const std::string &fqn : model.getBlocks()) {
    blockByFqn.try_emplace(fqn, blocks.size());
    blocks.push_back(BlockMemory{fqn});
  }
  for (Operation *op : ops)
    if (auto call = dyn_cast<CallFunctionOp>(op))
      if (std::optional<unsigned> b = model.getBlockIndex(call))
        blockOfOp[op] = *b;

  // 3. ao ops belong to the block of the value they move.
  for (Operation *op : ops) {
    if (!isa<ao::OffloadOp, ao::ReloadOp, ao::WaitTensorOp>(op))
      continue;
    Operation *src = op->getOperand(0).getDefiningOp();
    if (!src)
      continue;
    auto it = blockOfOp.find(src);
    if (it != blockOfOp.end())
      blockOfOp[op] = it->second;
  }
}

void MemoryModel::build(const StorageAliasAnalysis &aliases) {
  GraphOp graph = aliases.getGraph();
  Block &body = graph.getBody().front();
  for (Operation &op : body) {
    indexOf[&op] = ops.size();
    ops.push_back(&op);
  }
  for (Operation *op : ops)
    if (auto aten = dyn_cast<CallFunctionOp>(op); aten && aten.isBackward()) {
      boundary = indexOf[op];
      break;
    }
  findBlocks(graph);

  // In a graph that computes on an accelerator, values the trace placed on
  // the host (device "cpu") take no device memory and are never transferred.
  auto onHostDevice = [](const Storage *s) {
    TensorMetaAttr meta = getTensorMeta(s->owner);
    return meta &&
           (meta.getDevice() == "cpu" || meta.getDevice().starts_with("cpu:"));
  };
  bool accelerator = llvm::any_of(aliases.getStorages(), [&](Storage *s) {
    return getTensorMeta(s->owner) && !onHostDevice(s);
  });

  size_t n = ops.size();
  std::vector<int64_t> deviceDelta(n + 1, 0), hostDelta(n + 1, 0);
  for (const Storage *s : aliases.getStorages()) {
    std::optional<int64_t> bytes = computeStorageBytes(*s);
    if (!bytes)
      unknownSize.push_back(s);
    if (s->isGraphInput) {
      auto arg = cast<BlockArgument>(s->owner);
      switch (graph.getArgRole(arg.getArgNumber())) {
      case Role::param:
        paramBytes += bytes.value_or(0);
        break;
      case Role::buffer:
        bufferBytes += bytes.value_or(0);
        break;
      default:
        inputBytes += bytes.value_or(0);
        break;
      }
      continue;
    }
    Operation *def = s->owner.getDefiningOp();
    std::optional<unsigned> alloc = def ? getIndex(def) : std::nullopt;
    if (!alloc)
      continue;
    StorageLifetime life;
    life.storage = s;
    life.bytes = bytes.value_or(0);
    life.sizeKnown = bytes.has_value();
    life.alloc = life.free = *alloc;
    life.onHost = isa<ao::OffloadOp>(def);
    life.hostValue = accelerator && !life.onHost && onHostDevice(s);
    auto extend = [&](Operation *user) {
      if (std::optional<unsigned> i = getIndex(user))
        life.free = std::max(life.free, *i);
    };
    for (Value member : s->members)
      for (Operation *user : member.getUsers()) {
        extend(user);
        // The host copy is read until the reload's device copy completes.
        if (life.onHost && isa<ao::ReloadOp>(user))
          for (Operation *wait : user->getResult(0).getUsers())
            extend(wait);
      }
    int64_t deviceBytes = life.onHost || life.hostValue ? 0 : life.bytes;
    deviceDelta[life.alloc] += deviceBytes;
    deviceDelta[life.free + 1] -= deviceBytes;
    hostDelta[life.alloc] += life.onHost ? life.bytes : 0;
    hostDelta[life.free + 1] -= life.onHost ? life.bytes : 0;
    if (life.onHost)
      offloadedBytes += life.bytes;
    lifetimeOf[s] = lifetimes.size();
    lifetimes.push_back(life);
  }

  deviceLive.resize(n);
  hostLive.resize(n);
  int64_t device = 0, host = 0;
  for (size_t i = 0; i < n; ++i) {
    device += deviceDelta[i];
    host += hostDelta[i];
    deviceLive[i] = device;
    hostLive[i] = host;
    if (device > peakTransient) {
      peakTransient = device;
      peakIndex = i;
    }
    peakHost = std::max(peakHost, host);
  }

  for (const StorageLifetime &life : lifetimes) {
    std::optional<unsigned> block =
        getBlockOf(life.storage->owner.getDefiningOp());
    if (life.onHost) {
      if (block)
        blocks[*block].offloadedBytes += life.bytes;
      continue;
    }
    if (life.hostValue)
      continue;
    if (boundary && life.alloc < *boundary && life.free >= *boundary) {
      activationBytes += life.bytes;
      if (block)
        blocks[*block].activationBytes += life.bytes;
    }
  }

  // An offload frees device memory only if nothing reads the source's
  // storage after the forward wait (the wait itself is the keepalive use).
  for (Operation *op : ops) {
    auto offload = dyn_cast<ao::OffloadOp>(op);
    if (!offload || !offload->hasOneUse())
      continue;
    const StorageLifetime *life =
        getLifetime(aliases.lookup(offload.getInput()));
    std::optional<unsigned> wait = getIndex(*offload->user_begin());
    if (life && wait && life->free > *wait)
      ineffectiveOffloads.push_back({op, ops[life->free]});
  }
}
