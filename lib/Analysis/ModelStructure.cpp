//===- ModelStructure.cpp - Blocks and attention modules of a graph -------===//
//
// Implements ModelStructure: blocks from `joint.model` block_containers (a
// listed block inside another listed block is none: the outermost wins) or
// the module-stack fallback (outermost `<container>.<int>` frames of
// forward ops, ordered by container first appearance, then index), and
// attention modules from `joint.model`, the name `self_attn`, and what ops
// compute (the innermost module owning an SDPA variant or an eager
// bmm/matmul -> softmax -> bmm/matmul chain). All work is per distinct
// module stack or per softmax op with a bounded walk, so it is linear.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/ModelStructure.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::joint;

/// Attribute name of the `self_attn` convention (Hugging Face, torchtitan).
static constexpr StringLiteral kSelfAttn = "self_attn";

/// How far the eager-attention match walks from a softmax (ops).
static constexpr unsigned kEagerAttentionDepth = 8;

StringRef ModelStructure::findContaining(StringRef fqn,
                                         const llvm::StringSet<> &set) {
  while (true) {
    if (set.contains(fqn))
      return fqn;
    size_t dot = fqn.rfind('.');
    if (dot == StringRef::npos)
      return "";
    fqn = fqn.take_front(dot);
  }
}

ModelStructure::ModelStructure(Operation *op) {
  graph = dyn_cast<GraphOp>(op);
  if (!graph)
    if (auto module = dyn_cast<ModuleOp>(op))
      for (GraphOp g : module.getOps<GraphOp>()) {
        graph = g;
        break;
      }
  if (!graph)
    return;
  findBlocks();
}

void ModelStructure::forEachForwardModule(GraphOp graph,
                                          function_ref<void(StringRef)> fn) {
  llvm::DenseSet<Attribute> seen;
  for (CallFunctionOp op : graph.getBody().front().getOps<CallFunctionOp>()) {
    ArrayAttr stack = op.getModuleStackAttr();
    if (!op.isForward() || !stack || !seen.insert(stack).second)
      continue;
    for (Attribute f : stack)
      fn(cast<ModuleFrameAttr>(f).getFqn());
  }
}

/// Whether a proper ancestor module of `fqn` is in `set`.
static bool hasAncestorIn(StringRef fqn, const llvm::StringSet<> &set) {
  auto [parent, last] = fqn.rsplit('.');
  return last != fqn && !ModelStructure::findContaining(parent, set).empty();
}

void ModelStructure::findBlocks() {
  // The dialect verified the attribute's shape; a graph built without the
  // verifier (a tool) simply has no blocks from it. The outermost container
  // wins: a listed block inside another listed block (an expert of an MoE
  // layer, from an exporter that listed nested containers) is no block.
  SmallVector<StringRef> listed;
  llvm::StringSet<> listedSet;
  if (auto model = graph->getAttrOfType<DictionaryAttr>(kModelAttr))
    if (auto containers = model.getAs<ArrayAttr>("block_containers"))
      for (Attribute c : containers)
        if (auto d = dyn_cast<DictionaryAttr>(c))
          if (auto list = d.getAs<ArrayAttr>("blocks"))
            for (Attribute b : list)
              if (auto fqn = dyn_cast<StringAttr>(b))
                if (!fqn.getValue().empty() &&
                    listedSet.insert(fqn.getValue()).second)
                  listed.push_back(fqn.getValue());
  for (StringRef fqn : listed) {
    if (hasAncestorIn(fqn, listedSet))
      continue;
    blockIndex.try_emplace(fqn, blocks.size());
    blocks.push_back(fqn.str());
  }
  if (!blocks.empty()) {
    blockSource = "model";
  } else {
    // Fallback: outermost `<container>.<int>` frames (an expert
    // `...mlp.experts.3` inside `layers.0` is not a block).
    struct Candidate {
      std::string fqn;
      unsigned containerOrder;
      uint64_t index;
    };
    llvm::StringMap<unsigned> containerOrder;
    llvm::StringSet<> all;
    std::vector<Candidate> candidates;
    forEachForwardModule(graph, [&](StringRef fqn) {
      auto [container, last] = fqn.rsplit('.');
      uint64_t index;
      if (last == fqn || container.empty() || last.getAsInteger(10, index) ||
          !all.insert(fqn).second)
        return;
      unsigned order =
          containerOrder.try_emplace(container, containerOrder.size())
              .first->second;
      candidates.push_back({fqn.str(), order, index});
    });
    std::vector<Candidate> outermost;
    for (Candidate &c : candidates)
      if (findContaining(StringRef(c.fqn).rsplit('.').first, all).empty())
        outermost.push_back(std::move(c));
    llvm::stable_sort(outermost, [](const Candidate &a, const Candidate &b) {
      return std::tie(a.containerOrder, a.index) <
             std::tie(b.containerOrder, b.index);
    });
    for (Candidate &c : outermost) {
      blockIndex.try_emplace(c.fqn, blocks.size());
      blocks.push_back(std::move(c.fqn));
    }
    if (!blocks.empty())
      blockSource = "module-stack";
  }
  for (const std::string &b : blocks)
    blockSet.insert(b);
}

/// The op name of a target, `aten::bmm.default` -> `bmm`.
static StringRef opName(CallFunctionOp op) {
  return op.getTarget().split("::").second.split('.').first;
}

static bool isSdpa(CallFunctionOp op) {
  StringRef name = opName(op);
  return name.contains("scaled_dot_product") ||
         name.contains("flash_attention") ||
         name.contains("efficient_attention") ||
         name.contains("cudnn_attention") || name.contains("flex_attention");
}

static bool isBatchedMatmul(Operation *op) {
  auto call = dyn_cast_or_null<CallFunctionOp>(op);
  if (!call)
    return false;
  StringRef name = opName(call);
  return name == "bmm" || name == "matmul" || name == "baddbmm" ||
         name == "einsum";
}

static bool isSoftmax(CallFunctionOp op) {
  StringRef name = opName(op);
  return name == "_softmax" || name == "softmax" || name == "_safe_softmax";
}

/// Eager attention: the softmax reads (through at most kEagerAttentionDepth
/// ops on its first operand: mask add, scale, views) a batched matmul, and
/// its result reaches another batched matmul within as many forward ops.
static bool isEagerAttentionSoftmax(CallFunctionOp softmax) {
  Operation *op = softmax;
  bool scores = false;
  for (unsigned i = 0; i < kEagerAttentionDepth && op->getNumOperands(); ++i) {
    op = op->getOperand(0).getDefiningOp();
    if (!op)
      break;
    if (isBatchedMatmul(op)) {
      scores = true;
      break;
    }
  }
  if (!scores)
    return false;
  SmallVector<std::pair<Operation *, unsigned>> worklist{{softmax, 0}};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!worklist.empty()) {
    auto [cur, depth] = worklist.pop_back_val();
    if (depth >= kEagerAttentionDepth)
      continue;
    for (Operation *user : cur->getUsers()) {
      auto call = dyn_cast<CallFunctionOp>(user);
      if (!call || !call.isForward() || !seen.insert(user).second)
        continue;
      if (isBatchedMatmul(user))
        return true;
      worklist.push_back({user, depth + 1});
    }
  }
  return false;
}

void ModelStructure::findAttention() {
  if (attentionFound || !graph)
    return;
  attentionFound = true;
  auto add = [&](StringRef fqn) {
    if (!fqn.empty() && attentionSet.insert(fqn).second)
      attention.push_back(fqn.str());
  };
  if (auto model = graph->getAttrOfType<DictionaryAttr>(kModelAttr))
    if (auto list = model.getAs<ArrayAttr>("attention"))
      for (Attribute e : list)
        if (auto d = dyn_cast<DictionaryAttr>(e))
          if (auto fqn = d.getAs<StringAttr>("fqn"))
            add(fqn.getValue());
  forEachForwardModule(graph, [&](StringRef fqn) {
    if (fqn == kSelfAttn || fqn.rsplit('.').second == kSelfAttn)
      add(fqn);
  });
  // Modules that compute attention: the innermost named frame of the op.
  // Whether a target is SDPA or softmax is decided once per target.
  llvm::DenseMap<Attribute, bool> attentionTarget;
  for (CallFunctionOp op : graph.getBody().front().getOps<CallFunctionOp>()) {
    auto [known, inserted] = attentionTarget.try_emplace(op.getTargetAttr());
    if (inserted)
      known->second = isSdpa(op) || isSoftmax(op);
    if (!known->second || !op.isForward())
      continue;
    ArrayAttr stack = op.getModuleStackAttr();
    if (!stack || stack.empty())
      continue;
    StringRef innermost;
    for (Attribute f : llvm::reverse(stack))
      if (StringRef fqn = cast<ModuleFrameAttr>(f).getFqn(); !fqn.empty()) {
        innermost = fqn;
        break;
      }
    if (innermost.empty() || attentionSet.contains(innermost))
      continue;
    if (!isSdpa(op) && !isEagerAttentionSoftmax(op))
      continue;
    // A block that computes attention itself has no attention module: taking
    // the block would offload all of it, which is scope=block.
    if (findBlock(innermost) == innermost) {
      if (blockComputingAttention.empty())
        blockComputingAttention = innermost.str();
      continue;
    }
    add(innermost);
  }
}

std::optional<unsigned> ModelStructure::getBlockIndex(CallFunctionOp op) {
  ArrayAttr stack = op.getModuleStackAttr();
  if (!stack || blocks.empty())
    return std::nullopt;
  auto [it, inserted] = blockCache.try_emplace(stack, std::nullopt);
  if (!inserted)
    return it->second;
  for (Attribute f : llvm::reverse(stack)) {
    StringRef block = findBlock(cast<ModuleFrameAttr>(f).getFqn());
    if (!block.empty()) {
      std::optional<unsigned> index = blockIndex.lookup(block);
      blockCache[stack] = index;
      return index;
    }
  }
  return std::nullopt;
}

StringRef ModelStructure::getAttentionOf(CallFunctionOp op, Place *place) {
  findAttention();
  ArrayAttr stack = op.getModuleStackAttr();
  if (!stack) {
    if (place)
      *place = Place::Unlabeled;
    return {};
  }
  auto it = attentionCache.find(stack);
  if (it == attentionCache.end()) {
    std::pair<StringRef, Place> where{StringRef(), Place::Unlabeled};
    // Innermost frame first; the outermost attention module containing it.
    for (Attribute f : llvm::reverse(stack)) {
      StringRef fqn = cast<ModuleFrameAttr>(f).getFqn();
      if (fqn.empty())
        continue;
      where.second = Place::Outside;
      StringRef root;
      for (size_t dot = fqn.find('.'); dot != StringRef::npos && root.empty();
           dot = fqn.find('.', dot + 1))
        if (auto a = attentionSet.find(fqn.take_front(dot));
            a != attentionSet.end())
          root = a->first();
      if (root.empty())
        if (auto a = attentionSet.find(fqn); a != attentionSet.end())
          root = a->first();
      if (!root.empty()) {
        where = {root, Place::Inside};
        break;
      }
    }
    it = attentionCache.try_emplace(stack, where).first;
  }
  if (place)
    *place = it->second.second;
  return it->second.first;
}
