//===- DmDialect.td - the dm dialect -----------------------*- tablegen -*-===//
//
// The `dm` (data movement) dialect: tensors with named dimensions and the
// operators of transformer layers, forward and backward.
//
//===----------------------------------------------------------------------===//
#ifndef DM_DIALECT_TD
#define DM_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Dm_Dialect : Dialect {
  let name = "dm";
  let cppNamespace = "::dmc::dm";
  let summary = "Dataflow graphs of transformer layers over named-dimension tensors";
  let description = [{
    Every tensor names its dimensions with einsum letters (b batch, j query
    position, k key position, m memory position, i hidden, h heads, p head
    dim, u FFN). The order of the names in a type is the physical layout.
    Ops state their iteration space through DmIterationSpaceOpInterface and
    their backward rule through DmGradientOpInterface.
  }];
  let useDefaultTypePrinterParser = 1;
}

class Dm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dm_Dialect, mnemonic, traits>;

#endif // DM_DIALECT_TD
