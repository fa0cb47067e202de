//===- DmTypes.td - named-dimension tensor type -------------*- tablegen -*-===//
#ifndef DM_TYPES_TD
#define DM_TYPES_TD

include "ir/DmDialect.td"

def Dm_TensorType : TypeDef<Dm_Dialect, "Tensor"> {
  let mnemonic = "tensor";
  let summary = "a tensor whose dimensions are named by letters";
  let description = [{
    `!dm.tensor<[b=8, j=512, i=1024], bf16>`: dimension `b` of size 8 is the
    outermost, `i` the innermost (contiguous) one. A name appears at most once.
  }];
  let parameters = (ins StringRefParameter<"one letter per dimension">:$names,
                        ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    unsigned getRank() const { return getNames().size(); }
    bool hasDim(char name) const { return getNames().find(name) != llvm::StringRef::npos; }
    /// Position of `name` in the layout, or -1.
    int indexOf(char name) const;
    /// Size of dimension `name`; the dimension must exist.
    int64_t getSize(char name) const;
    int64_t getNumElements() const;
    /// Bytes of storage (elements times the element type's bytes).
    int64_t getSizeInBytes() const;
    /// The same element type with other dimensions.
    TensorType withDims(llvm::StringRef names, llvm::ArrayRef<int64_t> shape) const;
    /// The dimensions of this type restricted (and ordered) to `names`.
    TensorType restrictedTo(llvm::StringRef names) const;
    /// The dimensions of this type, reordered as `names` (a permutation).
    TensorType permutedTo(llvm::StringRef names) const { return restrictedTo(names); }
  }];
}

/// A dm tensor of floats: every op's data operands and results.
def Dm_FloatTensor : Type<
    And<[Dm_TensorType.predicate,
         CPred<"::llvm::isa<::mlir::FloatType>(::llvm::cast<::dmc::dm::TensorType>($_self).getElementType())">]>,
    "dm tensor of floats", "::dmc::dm::TensorType">;

/// A dm tensor of 32-bit integers (sequence lengths).
def Dm_I32Tensor : Type<
    And<[Dm_TensorType.predicate,
         CPred<"::llvm::cast<::dmc::dm::TensorType>($_self).getElementType().isInteger(32)">]>,
    "dm tensor of i32", "::dmc::dm::TensorType">;

#endif // DM_TYPES_TD
