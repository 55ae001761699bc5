//===- JointOps.td - Operations of the joint dialect -------*- tablegen -*-===//
//
// joint.graph (the training step), joint.output (its terminator), joint.call_function
// (one aten-level FX node) and joint.schema (one operator-table entry).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_IR_JOINTOPS_TD
#define JOINT_DIALECT_JOINT_IR_JOINTOPS_TD

include "joint/Dialect/Joint/IR/JointDialect.td"
include "joint/Dialect/Joint/IR/JointAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

def Joint_GraphOp : Joint_Op<"graph", [
    FunctionOpInterface, IsolatedFromAbove, SingleBlockImplicitTerminator<"OutputOp">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "a joint forward+backward training step";
  let description = [{
    Arguments are the FX placeholders in order, each with `joint.role`
    (`param`, `buffer` or `input`) and `joint.fqn` (state FQN) or `joint.path`
    (user-input path); tensor arguments may carry `joint.meta`. Results carry
    `joint.role`: `loss`, `grad` (with the parameter's `joint.fqn`),
    `loss_dict` (with `joint.key`) or `output`.

    ```mlir
    joint.graph @step(%w: tensor<4x4xf32> {joint.role = #joint.role<param>, joint.fqn = "w"})
        -> (tensor<f32> {joint.role = #joint.role<loss>}) { ... }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ArrayRef<Type> getArgumentTypes() { return getFunctionType().getInputs(); }
    ArrayRef<Type> getResultTypes() { return getFunctionType().getResults(); }
    bool isDeclaration() { return false; }

    /// Role of argument `i` / result `i` (verified to be present).
    Role getArgRole(unsigned i);
    Role getResultRole(unsigned i);
    /// `joint.fqn` of argument/result `i`, or "" when absent.
    StringRef getArgFQN(unsigned i);
    StringRef getResultFQN(unsigned i);
    /// The terminator.
    OutputOp getOutputOp();
  }];
}

def Joint_OutputOp : Joint_Op<"output", [Pure, Terminator, ReturnLike,
                                         HasParent<"GraphOp">]> {
  let summary = "the graph's outputs: loss, gradients, loss_dict values";
  let description = [{
    ```mlir
    joint.output %loss, %grad_w : tensor<f32>, tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

def Joint_CallFunctionOp : Joint_Op<"call_function", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "one aten-level FX call_function node";
  let description = [{
    `target` is the operator with its overload (`aten::mm.default`). Tensor
    and SymInt arguments are SSA operands; `args` (positional) and `kwargs`
    (by schema name) hold every argument in FX order, with `#joint.operand<i>`
    standing for operand `i` and typed attributes for the rest (i64, f64,
    bool, string, `#joint.dtype`, `#joint.device`, `#joint.layout`,
    `#joint.memory_format`, arrays, `unit` for None). When both are absent the
    operands are the positional arguments in order. Every FX `getitem` of a
    multi-output node is a result (its node name in `result_names`).

    Memory effects come from the operator table: a read of every tensor
    operand; a write of every operand the op writes in place (schema
    `Tensor(a!)`, or the hidden-write table for kernels such as training batch
    norm); a read and write of the RNG state for `nondeterministic_seeded`
    operators; a write of the process group for collectives. Fresh results
    are tensors with value semantics, so no allocation effect is declared
    (the memory model counts allocations) and upstream CSE may merge two
    equal reads with no writer between them.

    ```mlir
    %0 = joint.call_function "aten::mm.default"(%a, %b) {name = "mm"}
        : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins
    StrAttr:$target,
    Variadic<AnyType>:$inputs,
    OptionalAttr<ArrayAttr>:$args,
    OptionalAttr<DictionaryAttr>:$kwargs,
    StrAttr:$name,
    DefaultValuedAttr<Joint_PhaseAttr, "::mlir::joint::Phase::forward">:$phase,
    OptionalAttr<TypedArrayAttrBase<Joint_ModuleFrameAttr, "module stack">>:$module_stack,
    OptionalAttr<I64Attr>:$seq_nr,
    OptionalAttr<Joint_CheckpointPolicyAttr>:$policy,
    OptionalAttr<StrAttr>:$recomputed_from,
    OptionalAttr<ArrayAttr>:$result_meta,
    OptionalAttr<StrArrayAttr>:$result_names,
    OptionalAttr<StrAttr>:$stack_trace);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $target `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isForward() { return getPhase() == Phase::forward; }
    bool isBackward() { return getPhase() == Phase::backward; }
    /// Facts of result `i`: a TensorMetaAttr for tensors, a SymExprAttr for
    /// SymInt/SymBool results, null when not recorded.
    Attribute getResultMetaAt(unsigned i);
    /// The operator-table entry for this op's target, or null.
    SchemaOp lookupSchema(SymbolTableCollection *tables = nullptr);
    /// Operand indices referenced by schema argument `argIndex` of `entry`
    /// (positional index first, then kwarg by name). Empty when the argument
    /// is not passed or holds no operand. Returns failure when the argument
    /// cannot be resolved (no table entry, index out of range).
    LogicalResult getOperandsOfSchemaArg(SchemaOp entry, unsigned argIndex,
                                         SmallVectorImpl<unsigned> &operands);
    /// Operand indices this op writes in place, given its table `entry`
    /// (may be null): schema `Tensor(a!)` arguments plus the hidden-write
    /// table (torch kernels that write unmarked arguments). std::nullopt
    /// when the written operands cannot be resolved (mutable schema without
    /// a resolvable mark, no schema but an in-place name or a hidden write):
    /// then every tensor operand may be written.
    std::optional<SmallVector<unsigned>> getWrittenOperands(SchemaOp entry);
  }];
}

def Joint_SchemaOp : Joint_Op<"schema", [Symbol, HasParent<"ModuleOp">]> {
  let summary = "one operator-table entry: the schema facts of a target";
  let description = [{
    Stored once per operator at module level and looked up by `joint.call_function`
    through its target. `arguments`/`returns` list the schema with alias sets
    and write marks; `tags` are torch.Tag names such as
    `nondeterministic_seeded`. `python_module` names the Python module whose
    import registers an operator from outside torch (a `torch.library` op).

    ```mlir
    joint.schema @"aten::add_.Tensor" {schema = "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
      arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, ...],
      returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], is_mutable}
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    StrAttr:$schema,
    TypedArrayAttrBase<Joint_SchemaArgAttr, "schema arguments">:$arguments,
    TypedArrayAttrBase<Joint_SchemaArgAttr, "schema returns">:$returns,
    UnitAttr:$is_mutable,
    DefaultValuedAttr<StrArrayAttr, "{}">:$tags,
    OptionalAttr<StrAttr>:$python_module);
  let assemblyFormat = "$sym_name attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool hasTag(StringRef tag);
    /// True for ops whose results depend on the RNG state (torch.Tag
    /// nondeterministic_seeded).
    bool isRandom() { return hasTag("nondeterministic_seeded"); }
    /// Schema indices of arguments annotated `Tensor(a!)`.
    SmallVector<unsigned> getWrittenArgs();
    /// True when the schema returns one `Tensor[]` (one result per element).
    bool returnsTensorList();
    /// Number of arguments that may be passed positionally.
    unsigned getNumPositional();
    /// Schema index of the argument named `name`, or std::nullopt.
    std::optional<unsigned> getArgIndex(StringRef name);
  }];
}

#endif // JOINT_DIALECT_JOINT_IR_JOINTOPS_TD
