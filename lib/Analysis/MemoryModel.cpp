//===- MemoryModel.cpp - Storage-level liveness of a joint graph ----------===//
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
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include <algorithm>

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

namespace {
/// A closed integer range [lo, hi].
struct Range {
  int64_t lo, hi;
};

/// Ranges of a SymInt expression as torch prints it (`u0`, `2*u0 + 1`,
/// `Max(1, u3)`, `(s0*s1)//2`), from the symbols' recorded `min`/`max`
/// (`joint.symbols`). Recursive descent over +, -, *, //, parentheses and
/// Max/Min; anything else, an unbounded symbol or an overflow gives no range.
class BoundParser {
public:
  BoundParser(StringRef text, const llvm::StringMap<Range> &symbols)
      : text(text), symbols(symbols) {}

  std::optional<Range> parse() {
    std::optional<Range> r = sum();
    skipSpace();
    if (!r || !text.empty())
      return std::nullopt;
    return r;
  }

private:
  void skipSpace() { text = text.ltrim(); }
  bool eat(StringRef token) {
    skipSpace();
    return text.consume_front(token);
  }

  std::optional<Range> sum() {
    std::optional<Range> r = product();
    while (r) {
      if (eat("+")) {
        std::optional<Range> b = product();
        if (!b || llvm::AddOverflow(r->lo, b->lo, r->lo) ||
            llvm::AddOverflow(r->hi, b->hi, r->hi))
          return std::nullopt;
      } else if (eat("-")) {
        std::optional<Range> b = product();
        int64_t lo, hi;
        if (!b || llvm::SubOverflow(r->lo, b->hi, lo) ||
            llvm::SubOverflow(r->hi, b->lo, hi))
          return std::nullopt;
        *r = {lo, hi};
      } else {
        break;
      }
    }
    return r;
  }

  std::optional<Range> product() {
    std::optional<Range> r = atom();
    while (r) {
      if (eat("//")) {
        std::optional<Range> b = atom();
        // Floor division by a positive range only.
        if (!b || b->lo <= 0)
          return std::nullopt;
        *r = {llvm::divideFloorSigned(r->lo, r->lo < 0 ? b->lo : b->hi),
              llvm::divideFloorSigned(r->hi, r->hi < 0 ? b->hi : b->lo)};
      } else if (eat("*")) {
        std::optional<Range> b = atom();
        if (!b)
          return std::nullopt;
        int64_t c[4];
        if (llvm::MulOverflow(r->lo, b->lo, c[0]) ||
            llvm::MulOverflow(r->lo, b->hi, c[1]) ||
            llvm::MulOverflow(r->hi, b->lo, c[2]) ||
            llvm::MulOverflow(r->hi, b->hi, c[3]))
          return std::nullopt;
        *r = {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
      } else {
        break;
      }
    }
    return r;
  }

  std::optional<Range> atom() {
    skipSpace();
    if (eat("(")) {
      std::optional<Range> r = sum();
      return r && eat(")") ? r : std::nullopt;
    }
    if (eat("-")) {
      std::optional<Range> r = atom();
      if (!r || r->lo == INT64_MIN)
        return std::nullopt;
      return Range{-r->hi, -r->lo};
    }
    size_t digits = text.find_if_not(llvm::isDigit);
    if (digits > 0) {
      int64_t v;
      if (text.take_front(digits).getAsInteger(10, v))
        return std::nullopt;
      text = text.drop_front(digits);
      return Range{v, v};
    }
    size_t len =
        text.find_if_not([](char c) { return llvm::isAlnum(c) || c == '_'; });
    StringRef name = text.take_front(len);
    if (name.empty())
      return std::nullopt;
    text = text.drop_front(len);
    if (name == "Max" || name == "Min") {
      if (!eat("("))
        return std::nullopt;
      std::optional<Range> r = sum();
      while (r && eat(",")) {
        std::optional<Range> b = sum();
        if (!b)
          return std::nullopt;
        r = name == "Max"
                ? Range{std::max(r->lo, b->lo), std::max(r->hi, b->hi)}
                : Range{std::min(r->lo, b->lo), std::min(r->hi, b->hi)};
      }
      return r && eat(")") ? r : std::nullopt;
    }
    auto it = symbols.find(name);
    if (it == symbols.end())
      return std::nullopt;
    return it->second;
  }

  StringRef text;
  const llvm::StringMap<Range> &symbols;
};
} // namespace

/// Symbol ranges of the graph that owns `v`, from `joint.symbols` entries
/// with an integer `max` (`min` defaults to 0: sizes are not negative).
static llvm::StringMap<Range> symbolRanges(Value v) {
  llvm::StringMap<Range> out;
  Operation *scope =
      v.getParentBlock() ? v.getParentBlock()->getParentOp() : nullptr;
  auto graph = dyn_cast_or_null<GraphOp>(scope);
  auto list =
      graph ? graph->getAttrOfType<ArrayAttr>("joint.symbols") : ArrayAttr();
  if (!list)
    return out;
  for (auto d : list.getAsRange<DictionaryAttr>()) {
    auto name = d.getAs<StringAttr>("name");
    auto max = d.getAs<IntegerAttr>("max");
    auto min = d.getAs<IntegerAttr>("min");
    if (name && max)
      out[name.getValue()] = {min ? min.getInt() : 0, max.getInt()};
  }
  return out;
}

/// The trace-time value of `s`, else the largest value its expression can
/// take under the recorded symbol ranges (`ranges` is filled on first use).
static std::optional<int64_t>
valueOrBound(const SymInt &s, Value v,
             std::optional<llvm::StringMap<Range>> &ranges) {
  if (s.hasHint())
    return s.hint;
  if (!s.expr)
    return std::nullopt;
  if (!ranges)
    ranges = symbolRanges(v);
  std::optional<Range> r = BoundParser(s.expr.getValue(), *ranges).parse();
  if (!r)
    return std::nullopt;
  return std::max<int64_t>(r->hi, 0);
}

/// Bytes spanned by one member view: (offset + extent) * element size, with
/// extent = 1 + sum (size_i - 1) * stride_i (0 for an empty tensor). A
/// data-dependent size counts at its symbols' recorded upper bound.
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
  std::optional<llvm::StringMap<Range>> ranges;
  std::optional<int64_t> offset = valueOrBound(meta.getOffset(), v, ranges);
  if (sizes.size() != strides.size() || !offset)
    return std::nullopt;
  int64_t extent = 1;
  for (auto [size, stride] : llvm::zip_equal(sizes, strides)) {
    std::optional<int64_t> n = valueOrBound(size, v, ranges);
    std::optional<int64_t> st = valueOrBound(stride, v, ranges);
    if (!n || !st)
      return std::nullopt;
    if (*n == 0)
      return int64_t(0);
    int64_t step;
    if (llvm::MulOverflow(*n - 1, std::abs(*st), step) ||
        llvm::AddOverflow(extent, step, extent))
      return std::nullopt;
  }
  int64_t span, bytes;
  if (llvm::AddOverflow(*offset, extent, span) ||
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
