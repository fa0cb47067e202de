"""Edits a config.json for the rejection tests: edit-config.py IN OUT CODE.

CODE is Python run with `c` (the configuration as a dict) and helpers:
  tensor(dims)       the first tensor entry with that layout
  contraction(name)  the contraction entry named so
  kernel(prefix)     the first kernel entry whose name starts with prefix
"""
import json
import sys

c = json.load(open(sys.argv[1]))


def tensor(dims):
    return next(t for t in c["tensors"] if t["dims"] == dims)


def contraction(name):
    return next(k for k in c["contractions"] if k["name"] == name)


def kernel(prefix):
    return next(k for k in c["kernels"] if k["name"].startswith(prefix))


exec(sys.argv[3])
json.dump(c, open(sys.argv[2], "w"), indent=1)
