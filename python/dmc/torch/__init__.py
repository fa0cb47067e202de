"""dmc.torch: compiled dmc layers as PyTorch modules.

  Layer(bundle_path)        nn.Module running a bundle (forward + backward) on the GPU
  Stack(bundle_path)        the same for a bundle compiled with "layers" > 1
  reference_layer(json)     plain-PyTorch layer of a model description (same names)
  hf                        Hugging Face BertLayer / GPT2Block weights in dmc names
"""

from . import hf
from .._dmrt import DmrtError, LibraryNotFound
from .layer import Layer, Stack, draw_seed
from .reference import ReferenceLayer, reference_layer

__all__ = ["Layer", "Stack", "reference_layer", "ReferenceLayer", "hf", "DmrtError",
           "LibraryNotFound", "draw_seed"]
