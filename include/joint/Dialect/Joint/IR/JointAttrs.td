//===- JointAttrs.td - Attributes of the joint dialect -----*- tablegen -*-===//
//
// Enums mirroring torch (CheckpointPolicy, ScalarType, layout, memory format),
// per-value tensor facts, SymInt expressions, module-stack frames and
// operator-schema argument descriptions.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_IR_JOINTATTRS_TD
#define JOINT_DIALECT_JOINT_IR_JOINTATTRS_TD

include "joint/Dialect/Joint/IR/JointDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class Joint_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Joint_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

// Same names and numbering as torch.utils.checkpoint.CheckpointPolicy.
def Joint_CheckpointPolicy : I32EnumAttr<"CheckpointPolicy",
    "torch.utils.checkpoint.CheckpointPolicy", [
      I32EnumAttrCase<"must_save", 0>,
      I32EnumAttrCase<"prefer_save", 1>,
      I32EnumAttrCase<"must_recompute", 2>,
      I32EnumAttrCase<"prefer_recompute", 3>,
      I32EnumAttrCase<"must_cpu_offload", 4>,
      I32EnumAttrCase<"prefer_cpu_offload", 5>]> {
  let cppNamespace = "::mlir::joint";
  let genSpecializedAttr = 0;
}
def Joint_CheckpointPolicyAttr
    : EnumAttr<Joint_Dialect, Joint_CheckpointPolicy, "policy"> {
  let assemblyFormat = "`<` $value `>`";
}

def Joint_Phase : I32EnumAttr<"Phase", "forward or backward half of the step", [
      I32EnumAttrCase<"forward", 0>,
      I32EnumAttrCase<"backward", 1>]> {
  let cppNamespace = "::mlir::joint";
  let genSpecializedAttr = 0;
}
def Joint_PhaseAttr : EnumAttr<Joint_Dialect, Joint_Phase, "phase"> {
  let assemblyFormat = "`<` $value `>`";
}

// Roles of graph arguments (param, buffer, input) and results (loss, grad,
// loss_dict, output).
def Joint_Role : I32EnumAttr<"Role", "role of a graph argument or result", [
      I32EnumAttrCase<"param", 0>,
      I32EnumAttrCase<"buffer", 1>,
      I32EnumAttrCase<"input", 2>,
      I32EnumAttrCase<"loss", 3>,
      I32EnumAttrCase<"grad", 4>,
      I32EnumAttrCase<"loss_dict", 5>,
      I32EnumAttrCase<"output", 6>]> {
  let cppNamespace = "::mlir::joint";
  let genSpecializedAttr = 0;
}
def Joint_RoleAttr : EnumAttr<Joint_Dialect, Joint_Role, "role"> {
  let assemblyFormat = "`<` $value `>`";
}

// torch.dtype, numbered as c10::ScalarType.
def Joint_ScalarType : I32EnumAttr<"ScalarType", "torch dtype", [
      I32EnumAttrCase<"uint8", 0>,
      I32EnumAttrCase<"int8", 1>,
      I32EnumAttrCase<"int16", 2>,
      I32EnumAttrCase<"int32", 3>,
      I32EnumAttrCase<"int64", 4>,
      I32EnumAttrCase<"float16", 5>,
      I32EnumAttrCase<"float32", 6>,
      I32EnumAttrCase<"float64", 7>,
      I32EnumAttrCase<"complex32", 8>,
      I32EnumAttrCase<"complex64", 9>,
      I32EnumAttrCase<"complex128", 10>,
      I32EnumAttrCase<"bool_", 11, "bool">,
      I32EnumAttrCase<"bfloat16", 15>,
      I32EnumAttrCase<"float8_e5m2", 23>,
      I32EnumAttrCase<"float8_e4m3fn", 24>,
      I32EnumAttrCase<"float8_e5m2fnuz", 25>,
      I32EnumAttrCase<"float8_e4m3fnuz", 26>,
      I32EnumAttrCase<"uint16", 27>,
      I32EnumAttrCase<"uint32", 28>,
      I32EnumAttrCase<"uint64", 29>]> {
  let cppNamespace = "::mlir::joint";
  let genSpecializedAttr = 0;
}
def Joint_DtypeAttr : EnumAttr<Joint_Dialect, Joint_ScalarType, "dtype"> {
  let assemblyFormat = "`<` $value `>`";
}

def Joint_Layout : I32EnumAttr<"Layout", "torch.layout", [
      I32EnumAttrCase<"strided", 0>,
      I32EnumAttrCase<"sparse_coo", 1>,
      I32EnumAttrCase<"sparse_csr", 2>,
      I32EnumAttrCase<"sparse_csc", 3>,
      I32EnumAttrCase<"sparse_bsr", 4>,
      I32EnumAttrCase<"sparse_bsc", 5>,
      I32EnumAttrCase<"mkldnn", 6>,
      I32EnumAttrCase<"jagged", 7>]> {
  let cppNamespace = "::mlir::joint";
  let genSpecializedAttr = 0;
}
def Joint_LayoutAttr : EnumAttr<Joint_Dialect, Joint_Layout, "layout"> {
  let assemblyFormat = "`<` $value `>`";
}

def Joint_MemoryFormat : I32EnumAttr<"MemoryFormat", "torch.memory_format", [
      I32EnumAttrCase<"contiguous_format", 0>,
      I32EnumAttrCase<"preserve_format", 1>,
      I32EnumAttrCase<"channels_last", 2>,
      I32EnumAttrCase<"channels_last_3d", 3>]> {
  let cppNamespace = "::mlir::joint";
  let genSpecializedAttr = 0;
}
def Joint_MemoryFormatAttr
    : EnumAttr<Joint_Dialect, Joint_MemoryFormat, "memory_format"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Values inside argument lists
//===----------------------------------------------------------------------===//

def Joint_DeviceAttr : Joint_Attr<"Device", "device"> {
  let summary = "a torch.device such as \"cpu\" or \"cuda:0\"";
  let parameters = (ins StringRefParameter<"device string">:$name);
  let assemblyFormat = "`<` $name `>`";
}

def Joint_OperandRefAttr : Joint_Attr<"OperandRef", "operand"> {
  let summary = "an argument that is the op's N-th SSA operand";
  let description = [{
    Inside a `joint.call_function`'s `args`/`kwargs`, `#joint.operand<1>` stands for the
    op's operand 1 (a tensor or a SymInt value).
  }];
  let parameters = (ins "unsigned":$index);
  let assemblyFormat = "`<` $index `>`";
}

//===----------------------------------------------------------------------===//
// SymInt, tensor facts
//===----------------------------------------------------------------------===//

def SymIntParameter : AttrParameter<"::mlir::joint::SymInt",
                                    "static int or symbolic expression">;

def Joint_SymExprAttr : Joint_Attr<"SymExpr", "sym"> {
  let summary = "the value of a SymInt/SymBool: expression and trace-time hint";
  let description = [{
    `#joint.sym<sym("s0*2", 16)>` is the SymInt `s0*2` whose value was 16 at
    trace time; `#joint.sym<8>` is a SymInt that traced as the constant 8;
    `#joint.sym<sym("u0")>` is data-dependent (unbacked, no hint).
  }];
  let parameters = (ins SymIntParameter:$value);
  let assemblyFormat = "`<` $value `>`";
}

def Joint_TensorMetaAttr : Joint_Attr<"TensorMeta", "tensor"> {
  let summary = "facts of one tensor value: sizes, strides, offset, device, storage";
  let description = [{
    Sizes and strides are static integers or `sym("expr", hint)`; the element
    type and rank come from the value's ranked tensor type. Two values with the
    same `storage` id share one allocation (views, in-place results).

    ```mlir
    #joint.tensor<[sym("s0", 8), 64], strides = [64, 1], offset = 0,
                  device = "cpu", storage = 3>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"::mlir::joint::SymInt", "sizes">:$sizes,
    ArrayRefParameter<"::mlir::joint::SymInt", "strides">:$strides,
    SymIntParameter:$offset,
    StringRefParameter<"device">:$device,
    "int64_t":$storage);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Elements by trace-time hints; std::nullopt when a size has no hint.
    std::optional<int64_t> getNumElementsHint() const;
    /// True when strides are the row-major strides of sizes (size-1 dims
    /// ignored), compared by hints.
    bool isContiguous() const;
    /// True when any size, stride or the offset is symbolic.
    bool isSymbolic() const;
  }];
}

def Joint_ModuleFrameAttr : Joint_Attr<"ModuleFrame", "module"> {
  let summary = "one nn_module_stack entry: module FQN and class name";
  let parameters = (ins StringRefParameter<"FQN">:$fqn,
                        StringRefParameter<"class">:$cls);
  let assemblyFormat = "`<` $fqn `,` $cls `>`";
}

def Joint_SchemaArgAttr : Joint_Attr<"SchemaArg", "arg"> {
  let summary = "one argument or return of an operator schema";
  let description = [{
    `alias` is the alias set before the call (`a`, `*`, `a|b`; empty for
    none), `alias_after` the members added after it (`Tensor(a -> *)`), and
    `write` marks `Tensor(a!)`. `default_value` is the schema default as
    torchgen prints it, if any.
  }];
  let parameters = (ins
    StringRefParameter<"name", "\"\"">:$name,
    StringRefParameter<"type">:$type,
    DefaultValuedParameter<"bool", "false">:$kwarg_only,
    StringRefParameter<"alias set", "\"\"">:$alias,
    StringRefParameter<"alias set after", "\"\"">:$alias_after,
    DefaultValuedParameter<"bool", "false">:$write,
    OptionalParameter<"::mlir::StringAttr">:$default_value);
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    /// A call must pass this argument: it has no default and is not
    /// optional (`T?`, None when omitted), as torch's schema matching needs.
    bool isRequired() const {
      return !getDefaultValue() && !getType().ends_with("?");
    }
  }];
}

#endif // JOINT_DIALECT_JOINT_IR_JOINTATTRS_TD
