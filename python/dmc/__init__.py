"""dmc: Python access to layers compiled by dmc (README.md, "Python").

dmc.torch (needs PyTorch) runs a compiled bundle as a torch.nn.Module through the C API
of libdmrt.so (ctypes; dmc._dmrt says where the library is looked for).
"""

__all__ = ["torch"]
