//===- OpSets.cpp - Operator policy sets for activation checkpointing -----===//
//
// The data behind OpSets.h. Each entry names its source; docs/passes.md
// ("Activation checkpointing") lists the same sets. Entries without an
// overload match every overload of the operator.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/IR/OpSets.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::joint;

namespace {

constexpr llvm::StringLiteral kTitan = "torchtitan _op_sac_save_list";
constexpr llvm::StringLiteral kHP =
    "hyper_parallel _SELECTIVE_AC_MUST_SAVE_OPS";
constexpr llvm::StringLiteral kHPComm =
    "hyper_parallel _SELECTIVE_AC_COMM_OP_NAMES";
constexpr llvm::StringLiteral kEPComm =
    "DeepEP/HybridEP expert-parallel all-to-all";
constexpr llvm::StringLiteral kFSDP =
    "FSDP forward all-gather (functional collectives)";
constexpr llvm::StringLiteral kWait =
    "functional collectives: wait_tensor completes its input";

const OpSetEntry kComputeIntensive[] = {
    {"aten::mm", kTitan},
    {"aten::addmm", kHP},
    {"aten::bmm", kHP},
    {"aten::matmul", kHP},
    {"aten::linear", kHP},
    {"aten::_scaled_mm", kHP},
    {"aten::_grouped_mm", kHP},
    {"aten::_scaled_grouped_mm", kHP},
    {"aten::convolution", kHP},
    {"aten::convolution_backward", kHP},
    {"aten::scaled_dot_product_attention", kHP},
    {"aten::_scaled_dot_product_flash_attention", kTitan},
    {"aten::_scaled_dot_product_efficient_attention", kTitan},
    {"aten::_scaled_dot_product_cudnn_attention", kHP},
    {"aten::_scaled_dot_product_attention_math", kHP},
    {"aten::_scaled_dot_product_fused_attention_overrideable", kHP},
    {"aten::_scaled_dot_product_flash_attention_for_cpu", kHP},
    {"aten::_flash_attention_forward", kHP},
    {"aten::_efficient_attention_forward", kHP},
    {"aten::upsample_bilinear2d", kHP},
    {"higher_order::flex_attention", kTitan},
    {"aten::max.default", kTitan},
};

const OpSetEntry kForceRecompute[] = {
    {"aten::topk", "hyper_parallel _SELECTIVE_AC_FORCE_RECOMPUTE_OPS"},
};

const OpSetEntry kCommunication[] = {
    {"_c10d_functional::reduce_scatter_tensor", kHPComm},
    {"_c10d_functional::all_to_all_single", kHPComm},
    {"aten::reduce_scatter_tensor", kHPComm},
    {"aten::all_to_all_single", kHPComm},
    {"c10d::allreduce_", kHPComm},
    {"deepep::dispatch", kEPComm},
    {"deepep::combine", kEPComm},
    {"hybridep::dispatch", kEPComm},
    {"hybridep::combine", kEPComm},
};

const OpSetEntry kForwardAllGather[] = {
    {"aten::all_gather_into_tensor", kFSDP},
    {"_c10d_functional::all_gather_into_tensor", kFSDP},
};

const OpSetEntry kTransparent[] = {
    {"_c10d_functional::wait_tensor", kWait},
};

const OpSetEntry kSizeQuery[] = {
    {"aten::sym_size", "torch SymInt size queries"},
    {"aten::sym_stride", "torch SymInt size queries"},
    {"aten::sym_numel", "torch SymInt size queries"},
    {"aten::sym_storage_offset", "torch SymInt size queries"},
};

struct Sets {
  llvm::StringSet<> names[6];
  Sets() {
    for (OpSet s :
         {OpSet::ComputeIntensive, OpSet::ForceRecompute, OpSet::Communication,
          OpSet::ForwardAllGather, OpSet::Transparent, OpSet::SizeQuery})
      for (const OpSetEntry &e : getOpSetEntries(s))
        names[static_cast<unsigned>(s)].insert(e.name);
  }
};

} // namespace

llvm::ArrayRef<OpSetEntry> mlir::joint::getOpSetEntries(OpSet set) {
  // In OpSet's order.
  static const llvm::ArrayRef<OpSetEntry> kSets[] = {
      kComputeIntensive, kForceRecompute, kCommunication,
      kForwardAllGather, kTransparent,    kSizeQuery};
  return kSets[static_cast<size_t>(set)];
}

/// Whether `target` is an entry of `set`'s table (overload or packet).
static bool isListed(OpSet set, llvm::StringRef target) {
  static const Sets sets;
  const llvm::StringSet<> &names = sets.names[static_cast<unsigned>(set)];
  if (names.contains(target))
    return true;
  // `ns::op.overload` -> `ns::op`; the namespace never contains a dot.
  size_t ns = target.find("::");
  size_t dot = target.find('.', ns == llvm::StringRef::npos ? 0 : ns + 2);
  return dot != llvm::StringRef::npos && names.contains(target.take_front(dot));
}

/// The namespaces of torch's process-group operators: functional
/// collectives (and their autograd variants and the legacy name) and the
/// in-place `c10d` ops.
static bool isCollectiveNamespace(llvm::StringRef target) {
  auto [ns, op] = target.split("::");
  if (op.empty())
    return false;
  return ns == "_c10d_functional" || ns == "_c10d_functional_autograd" ||
         ns == "c10d_functional" || ns == "c10d";
}

bool mlir::joint::isCollective(llvm::StringRef target) {
  return isCollectiveNamespace(target) ||
         isListed(OpSet::Communication, target) ||
         isListed(OpSet::ForwardAllGather, target) ||
         isListed(OpSet::Transparent, target);
}

bool mlir::joint::isInOpSet(OpSet set, llvm::StringRef target) {
  if (isListed(set, target))
    return true;
  // Every other collective is communication: saved in every mode. Forward
  // all-gathers and waits have rules of their own.
  return set == OpSet::Communication && isCollectiveNamespace(target) &&
         !isListed(OpSet::ForwardAllGather, target) &&
         !isListed(OpSet::Transparent, target);
}

bool OpSetCache::contains(OpSet set, mlir::StringAttr target) {
  unsigned i = static_cast<unsigned>(set);
  unsigned &b = bits[target];
  if (!(b & (1u << (2 * i)))) {
    b |= 1u << (2 * i);
    if (isInOpSet(set, target.getValue()))
      b |= 1u << (2 * i + 1);
  }
  return b & (1u << (2 * i + 1));
}
