//===- ViewWrites.cpp - In-place writes through views as values -----------===//
//
// A view link is a view op whose operand 0 shares its result's storage:
// slice / narrow / select / split / chunk / unbind (scattered back with
// slice_scatter or select_scatter), view / reshape / squeeze / unsqueeze /
// flatten (the inverse is a view to the static source shape), transpose /
// t / permute (the inverse permutation), alias / detach (identity). The
// chain of links from the written value ends at the storage's base: a graph
// argument, a fresh tensor, or the result of an earlier in-place write.
//
//===----------------------------------------------------------------------===//

#include "ViewWrites.h"
#include "Utils.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"

using namespace mlir;
using namespace mlir::joint;
using namespace mlir::joint::lowering;

namespace {

enum class ViewKind {
  Slice,
  Narrow,
  Select,
  Split,
  Unbind,
  Reshape,
  Permute,
  Identity
};

std::optional<ViewKind> getViewKind(StringRef target) {
  return llvm::StringSwitch<std::optional<ViewKind>>(target)
      .Case("aten::slice.Tensor", ViewKind::Slice)
      .Case("aten::narrow.default", ViewKind::Narrow)
      .Case("aten::select.int", ViewKind::Select)
      .Cases({"aten::split.Tensor", "aten::split_with_sizes.default",
              "aten::chunk.default"},
             ViewKind::Split)
      .Case("aten::unbind.int", ViewKind::Unbind)
      .Cases({"aten::view.default", "aten::_unsafe_view.default",
              "aten::reshape.default", "aten::_reshape_alias.default",
              "aten::view_as.default", "aten::squeeze.dim",
              "aten::squeeze.dims", "aten::squeeze.default",
              "aten::unsqueeze.default", "aten::flatten.using_ints",
              "aten::unflatten.int"},
             ViewKind::Reshape)
      .Cases({"aten::transpose.int", "aten::t.default", "aten::permute.default",
              "aten::numpy_T.default"},
             ViewKind::Permute)
      .Cases({"aten::alias.default", "aten::detach.default"},
             ViewKind::Identity)
      .Default(std::nullopt);
}

/// Result `index` of view op `op` made from its operand 0.
struct ViewLink {
  CallFunctionOp op;
  unsigned index;
  ViewKind kind;
  Value parent() const { return op->getOperand(0); }
};

/// The positional arguments of `op` (its `args`, or its operands in order).
SmallVector<Attribute> getPositionalArgs(CallFunctionOp op) {
  if (ArrayAttr args = op.getArgsAttr())
    return SmallVector<Attribute>(args.getValue());
  SmallVector<Attribute> args;
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
    args.push_back(OperandRefAttr::get(op.getContext(), i));
  return args;
}

/// `attr` with every operand reference i >= 1 shifted by `shift`.
Attribute shiftOperandRefs(Attribute attr, unsigned shift) {
  if (auto ref = dyn_cast<OperandRefAttr>(attr))
    return ref.getIndex() == 0
               ? attr
               : OperandRefAttr::get(attr.getContext(), ref.getIndex() + shift);
  if (auto array = dyn_cast<ArrayAttr>(attr))
    return ArrayAttr::get(attr.getContext(),
                          llvm::map_to_vector(array, [&](Attribute a) {
                            return shiftOperandRefs(a, shift);
                          }));
  return attr;
}

/// A constant int argument `index` of `op` (`fallback` when absent or None).
std::optional<int64_t> getIntArg(CallFunctionOp op, unsigned index,
                                 std::optional<int64_t> fallback) {
  SmallVector<Attribute> args = getPositionalArgs(op);
  Attribute attr = index < args.size() ? args[index] : Attribute();
  if (!attr || isa<UnitAttr>(attr))
    return fallback;
  if (auto i = dyn_cast<IntegerAttr>(attr); i && !isa<BoolAttr>(attr))
    return i.getInt();
  return std::nullopt;
}

class Carrier {
public:
  Carrier(CallFunctionOp writer, RewriterBase &rw) : writer(writer), rw(rw) {}

  /// A new `target` call after the insertion point: operands `inputs`,
  /// positional `args`, result type `type`; attributes of the writer.
  Value create(StringRef target, ValueRange inputs, ArrayRef<Attribute> args,
               Type type, const Twine &name) {
    OperationState state(writer.getLoc(), CallFunctionOp::getOperationName());
    state.addOperands(inputs);
    state.addTypes(type);
    state.addAttribute("target", rw.getStringAttr(target));
    state.addAttribute("args", rw.getArrayAttr(args));
    state.addAttribute("name", rw.getStringAttr(name));
    state.addAttribute("phase", writer.getPhaseAttr());
    if (ArrayAttr stack = writer.getModuleStackAttr())
      state.addAttribute("module_stack", stack);
    if (IntegerAttr seq = writer.getSeqNrAttr())
      state.addAttribute("seq_nr", seq);
    return rw.create(state)->getResult(0);
  }

  /// `value`, the new contents of `link`'s result, scattered into
  /// `parent` (the current value of the link's source); failure with the
  /// reason when the link cannot be inverted.
  FailureOr<Value> scatterBack(const ViewLink &link, Value parent, Value value,
                               std::string &why) {
    CallFunctionOp view = link.op;
    auto parentType = cast<RankedTensorType>(parent.getType());
    int64_t rank = parentType.getRank();
    std::string name = (writer.getName() + "_into_" + view.getName()).str();
    Attribute self = OperandRefAttr::get(rw.getContext(), 0);
    Attribute src = OperandRefAttr::get(rw.getContext(), 1);
    SmallVector<Attribute> args = getPositionalArgs(view);
    auto dimOf = [&](unsigned index,
                     int64_t fallback) -> std::optional<int64_t> {
      std::optional<int64_t> d = getIntArg(view, index, fallback);
      if (d && *d < 0)
        *d += rank;
      if (d && (*d < 0 || *d >= rank))
        return std::nullopt;
      return d;
    };
    auto sliceScatter = [&](int64_t dim, int64_t start, int64_t end) {
      return create("aten::slice_scatter.default", {parent, value},
                    {self, src, rw.getI64IntegerAttr(dim),
                     rw.getI64IntegerAttr(start), rw.getI64IntegerAttr(end),
                     rw.getI64IntegerAttr(1)},
                    parentType, name);
    };
    switch (link.kind) {
    case ViewKind::Identity:
      return value;
    case ViewKind::Slice:
    case ViewKind::Select: {
      // slice_scatter(self, src, dim, start, end, step) /
      // select_scatter(self, src, dim, index): the view's own arguments
      // after `self`, SymInt operands shifted past `src`.
      SmallVector<Value> inputs = {parent, value};
      llvm::append_range(inputs, view->getOperands().drop_front());
      SmallVector<Attribute> scatterArgs = {self, src};
      for (Attribute a : ArrayRef(args).drop_front())
        scatterArgs.push_back(shiftOperandRefs(a, 1));
      if (view.getKwargsAttr() && !view.getKwargsAttr().empty()) {
        why = "its arguments are passed by keyword";
        return failure();
      }
      return create(link.kind == ViewKind::Slice
                        ? "aten::slice_scatter.default"
                        : "aten::select_scatter.default",
                    inputs, scatterArgs, parentType, name);
    }
    case ViewKind::Narrow: {
      std::optional<int64_t> dim = dimOf(1, 0);
      std::optional<int64_t> start = getIntArg(view, 2, std::nullopt);
      std::optional<int64_t> length = getIntArg(view, 3, std::nullopt);
      if (!dim || !start || !length) {
        why = "its dim, start and length are not constants";
        return failure();
      }
      if (*start < 0 && !parentType.isDynamicDim(*dim))
        *start += parentType.getDimSize(*dim);
      return sliceScatter(*dim, *start, *start + *length);
    }
    case ViewKind::Unbind: {
      std::optional<int64_t> dim = dimOf(1, 0);
      if (!dim) {
        why = "its dim is not a constant";
        return failure();
      }
      return create("aten::select_scatter.default", {parent, value},
                    {self, src, rw.getI64IntegerAttr(*dim),
                     rw.getI64IntegerAttr(link.index)},
                    parentType, name);
    }
    case ViewKind::Split: {
      bool chunk = view.getTarget() == "aten::chunk.default";
      std::optional<int64_t> dim = dimOf(2, 0);
      // Each piece starts where the pieces before it end (static sizes).
      int64_t start = 0;
      for (unsigned i = 0; dim && i < link.index; ++i) {
        auto piece = dyn_cast<RankedTensorType>(view->getResult(i).getType());
        if (!piece || piece.isDynamicDim(*dim)) {
          dim = std::nullopt;
          break;
        }
        start += piece.getDimSize(*dim);
      }
      auto mine = cast<RankedTensorType>(value.getType());
      if (!dim || mine.isDynamicDim(*dim)) {
        why = Twine("its pieces are not static along ")
                  .concat(chunk ? "the chunked dim" : "the split dim")
                  .str();
        return failure();
      }
      return sliceScatter(*dim, start, start + mine.getDimSize(*dim));
    }
    case ViewKind::Reshape: {
      if (!parentType.hasStaticShape()) {
        why = "the viewed tensor has dynamic sizes";
        return failure();
      }
      SmallVector<Attribute> sizes = llvm::map_to_vector(
          parentType.getShape(),
          [&](int64_t s) -> Attribute { return rw.getI64IntegerAttr(s); });
      return create("aten::view.default", {value},
                    {self, rw.getArrayAttr(sizes)}, parentType, name);
    }
    case ViewKind::Permute: {
      StringRef target = view.getTarget();
      if (target == "aten::permute.default") {
        auto dims = args.size() > 1 ? dyn_cast<ArrayAttr>(args[1]) : nullptr;
        SmallVector<int64_t> inverse(rank, -1);
        for (auto [i, a] :
             llvm::enumerate(dims ? dims.getValue() : ArrayRef<Attribute>())) {
          auto d = dyn_cast<IntegerAttr>(a);
          int64_t v = d ? d.getInt() : -1;
          if (v < 0 && d)
            v += rank;
          if (v < 0 || v >= rank)
            break;
          inverse[v] = i;
        }
        if (!dims || llvm::is_contained(inverse, -1)) {
          why = "its dims are not a constant permutation";
          return failure();
        }
        SmallVector<Attribute> inv =
            llvm::map_to_vector(inverse, [&](int64_t d) -> Attribute {
              return rw.getI64IntegerAttr(d);
            });
        return create(target, {value}, {self, rw.getArrayAttr(inv)}, parentType,
                      name);
      }
      // transpose(d0, d1), t and numpy_T are their own inverses.
      SmallVector<Attribute> same = {self};
      for (Attribute a : ArrayRef(args).drop_front()) {
        if (isa<OperandRefAttr>(a)) {
          why = "its dims are not constants";
          return failure();
        }
        same.push_back(a);
      }
      return create(target, {value}, same, parentType, name);
    }
    }
    llvm_unreachable("view kinds are covered");
  }

  CallFunctionOp writer;
  RewriterBase &rw;
};

} // namespace

ViewWrites::ViewWrites(Block &body, SymbolTableCollection &tables)
    : tables(tables) {
  for (Value arg : body.getArguments())
    if (std::optional<int64_t> id = getStorageId(arg))
      members[*id].push_back(arg);
  for (Operation &op : body)
    for (Value result : op.getResults())
      if (std::optional<int64_t> id = getStorageId(result))
        members[*id].push_back(result);
}

std::optional<int64_t> ViewWrites::storageOf(Value v) const {
  if (auto it = created.find(v); it != created.end())
    return it->second;
  return getStorageId(v);
}

/// The view link that makes `v`, if `v` is a view of a value of its own
/// storage made by an op this file inverts.
static std::optional<ViewLink>
getLink(Value v, function_ref<std::optional<int64_t>(Value)> storageOf) {
  auto op = v.getDefiningOp<CallFunctionOp>();
  if (!op || op->getNumOperands() == 0)
    return std::nullopt;
  std::optional<ViewKind> kind = getViewKind(op.getTarget());
  std::optional<int64_t> id = storageOf(v);
  if (!kind || !id || storageOf(op->getOperand(0)) != id)
    return std::nullopt;
  return ViewLink{op, cast<OpResult>(v).getResultNumber(), *kind};
}

FailureOr<std::pair<Value, Value>> ViewWrites::carry(CallFunctionOp writer,
                                                     Value target, Value result,
                                                     RewriterBase &rw) {
  auto storage = [&](Value v) { return storageOf(v); };
  std::optional<int64_t> id = storageOf(target);
  auto isLater = [&](OpOperand &use) {
    return writer->isBeforeInBlock(use.getOwner());
  };
  if (!id) {
    rw.replaceUsesWithIf(target, result, isLater);
    return std::make_pair(target, result);
  }

  // The chain from the written value up to the storage's base.
  SmallVector<ViewLink> chain;
  Value base = target;
  while (std::optional<ViewLink> link = getLink(base, storage)) {
    chain.push_back(*link);
    base = link->parent();
  }
  // A base made from a value of the same storage by an op that is neither
  // an inverted view nor an in-place write of it (expand, as_strided,
  // diagonal, unfold, ...) cannot be written back.
  auto opaqueView = [&](Value v) -> CallFunctionOp {
    auto op = v.getDefiningOp<CallFunctionOp>();
    if (!op || op == writer || created.count(v))
      return {}; // an argument, this write, or a base written back earlier
    std::optional<SmallVector<unsigned>> written =
        op.getWrittenOperands(op.lookupSchema(&tables));
    for (OpOperand &operand : op->getOpOperands())
      if (storageOf(operand.get()) == storageOf(v) &&
          !(written &&
            llvm::is_contained(*written, operand.getOperandNumber())))
        return op;
    return {};
  };
  if (CallFunctionOp view = opaqueView(base))
    return emitNodeError(writer)
               << "in-place write of " << describeOp(writer)
               << " goes through the view " << describeOp(view)
               << ", which the lowering cannot write back into its base",
           failure();

  // Every read after the writer of a value of this storage made at or before
  // it, gathered before any op is inserted.
  SmallVector<std::pair<Value, SmallVector<OpOperand *>>> later;
  for (Value member : members[*id]) {
    Operation *def = member.getDefiningOp();
    if (def && def != writer && writer->isBeforeInBlock(def))
      continue; // made after the write: reads current values already
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : member.getUses())
      if (isLater(use))
        uses.push_back(&use);
    if (!uses.empty())
      later.push_back({member, std::move(uses)});
  }

  Carrier carrier(writer, rw);
  OpBuilder::InsertionGuard guard(rw);
  rw.setInsertionPointAfter(writer);
  Value newBase = result;
  for (const ViewLink &link : chain) {
    std::string why;
    FailureOr<Value> up =
        carrier.scatterBack(link, link.parent(), newBase, why);
    if (failed(up))
      return emitNodeError(writer)
                 << "in-place write of " << describeOp(writer)
                 << " through the view " << describeOp(link.op)
                 << " cannot be written back into its base: " << why,
             failure();
    newBase = *up;
  }

  // Each value read later, regenerated from the new base.
  llvm::DenseMap<Value, Value> regenerated{{base, newBase}};
  std::function<FailureOr<Value>(Value)> regenerate =
      [&](Value v) -> FailureOr<Value> {
    if (auto it = regenerated.find(v); it != regenerated.end())
      return it->second;
    if (v == result)
      return regenerate(target);
    std::optional<ViewLink> link = getLink(v, storage);
    if (!link) {
      CallFunctionOp owner = v.getDefiningOp<CallFunctionOp>();
      InFlightDiagnostic diag = emitNodeError(writer);
      diag << "in-place write of " << describeOp(writer)
           << " changes a storage that ";
      if (owner)
        diag << describeOp(owner);
      else
        diag << "graph argument " << cast<BlockArgument>(v).getArgNumber();
      diag << " also holds, in a way the lowering cannot follow";
      return failure();
    }
    FailureOr<Value> parent = regenerate(link->parent());
    if (failed(parent))
      return failure();
    IRMapping mapping;
    mapping.map(link->parent(), *parent);
    Operation *clone = rw.clone(*link->op, mapping);
    clone->setAttr("name", rw.getStringAttr(link->op.getName() + "_after_" +
                                            writer.getName()));
    for (Value r : clone->getResults())
      created[r] = *id;
    llvm::append_range(members[*id], clone->getResults());
    for (auto [old, fresh] :
         llvm::zip(link->op->getResults(), clone->getResults()))
      regenerated[old] = fresh;
    return regenerated.lookup(v);
  };
  for (auto &[member, uses] : later) {
    FailureOr<Value> fresh = regenerate(member);
    if (failed(fresh))
      return failure();
    for (OpOperand *use : uses)
      use->set(*fresh);
  }
  if (newBase != result) {
    created[newBase] = *id;
    members[*id].push_back(newBase);
  }
  return std::make_pair(base, newBase);
}
