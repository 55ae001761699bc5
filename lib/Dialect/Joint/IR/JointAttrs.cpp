//===- JointAttrs.cpp - Attributes of the joint dialect -------------------===//
//
// Printing and parsing of SymInt values and tensor facts, and the tensor-fact
// verifier (strides rank, non-negative static sizes, hints).
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/IR/JointOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::joint;

#include "joint/Dialect/Joint/IR/JointEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "joint/Dialect/Joint/IR/JointAttrs.cpp.inc"

void JointDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "joint/Dialect/Joint/IR/JointAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// SymInt
//===----------------------------------------------------------------------===//

AsmPrinter &mlir::joint::operator<<(AsmPrinter &printer, const SymInt &value) {
  if (value.isStatic())
    return printer << value.hint;
  printer << "sym(\"";
  llvm::printEscapedString(value.expr.getValue(), printer.getStream());
  printer << "\"";
  if (value.hasHint())
    printer << ", " << value.hint;
  return printer << ")";
}

FailureOr<SymInt> FieldParser<SymInt>::parse(AsmParser &parser) {
  SymInt result;
  if (succeeded(parser.parseOptionalKeyword("sym"))) {
    std::string expr;
    if (parser.parseLParen() || parser.parseString(&expr))
      return failure();
    if (expr.empty())
      return parser.emitError(parser.getCurrentLocation(),
                              "symbolic expression must not be empty");
    result.expr = parser.getBuilder().getStringAttr(expr);
    result.hint = SymInt::kNoHint;
    if (succeeded(parser.parseOptionalComma()) &&
        parser.parseInteger(result.hint))
      return failure();
    if (parser.parseRParen())
      return failure();
    return result;
  }
  if (parser.parseInteger(result.hint))
    return failure();
  return result;
}

//===----------------------------------------------------------------------===//
// TensorMetaAttr
//===----------------------------------------------------------------------===//

static ParseResult parseSymIntList(AsmParser &parser,
                                   SmallVectorImpl<SymInt> &values) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        FailureOr<SymInt> v = FieldParser<SymInt>::parse(parser);
        if (failed(v))
          return failure();
        values.push_back(*v);
        return success();
      });
}

static void printSymIntList(AsmPrinter &printer, ArrayRef<SymInt> values) {
  printer << "[";
  llvm::interleaveComma(values, printer,
                        [&](const SymInt &v) { printer << v; });
  printer << "]";
}

// #joint.tensor<[sizes], strides = [...], offset = N, device = "cpu",
//               storage = N>
Attribute TensorMetaAttr::parse(AsmParser &parser, Type) {
  SmallVector<SymInt> sizes, strides;
  std::string device;
  int64_t storage = 0;
  if (parser.parseLess() || parseSymIntList(parser, sizes) ||
      parser.parseComma() || parser.parseKeyword("strides") ||
      parser.parseEqual() || parseSymIntList(parser, strides) ||
      parser.parseComma() || parser.parseKeyword("offset") ||
      parser.parseEqual())
    return {};
  FailureOr<SymInt> offset = FieldParser<SymInt>::parse(parser);
  if (failed(offset) || parser.parseComma() || parser.parseKeyword("device") ||
      parser.parseEqual() || parser.parseString(&device) ||
      parser.parseComma() || parser.parseKeyword("storage") ||
      parser.parseEqual() || parser.parseInteger(storage) ||
      parser.parseGreater())
    return {};
  return TensorMetaAttr::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), sizes, strides, *offset, device, storage);
}

void TensorMetaAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printSymIntList(printer, getSizes());
  printer << ", strides = ";
  printSymIntList(printer, getStrides());
  printer << ", offset = " << getOffset() << ", device = \"";
  llvm::printEscapedString(getDevice(), printer.getStream());
  printer << "\", storage = " << getStorage() << ">";
}

LogicalResult
TensorMetaAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       ArrayRef<SymInt> sizes, ArrayRef<SymInt> strides,
                       SymInt offset, StringRef device, int64_t storage) {
  if (sizes.size() != strides.size())
    return emitError() << "tensor facts have " << sizes.size() << " sizes but "
                       << strides.size() << " strides";
  for (auto [i, s] : llvm::enumerate(sizes))
    if (s.hasHint() && s.hint < 0)
      return emitError() << "tensor facts: size " << i << " is negative ("
                         << s.hint << ")";
  if (offset.hasHint() && offset.hint < 0)
    return emitError() << "tensor facts: storage offset is negative";
  if (device.empty())
    return emitError() << "tensor facts: device must not be empty";
  if (storage < 0)
    return emitError() << "tensor facts: storage id must be >= 0";
  return success();
}

std::optional<int64_t> TensorMetaAttr::getNumElementsHint() const {
  int64_t n = 1;
  for (const SymInt &s : getSizes()) {
    if (!s.hasHint())
      return std::nullopt;
    if (llvm::MulOverflow(n, s.hint, n))
      return std::nullopt;
  }
  return n;
}

bool TensorMetaAttr::isContiguous() const {
  int64_t expected = 1;
  ArrayRef<SymInt> sizes = getSizes(), strides = getStrides();
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    if (!sizes[i].hasHint() || !strides[i].hasHint())
      return false;
    if (sizes[i].hint == 1)
      continue;
    if (strides[i].hint != expected)
      return false;
    expected *= sizes[i].hint;
  }
  return true;
}

bool TensorMetaAttr::isSymbolic() const {
  auto symbolic = [](const SymInt &s) { return !s.isStatic(); };
  return llvm::any_of(getSizes(), symbolic) ||
         llvm::any_of(getStrides(), symbolic) || !getOffset().isStatic();
}
