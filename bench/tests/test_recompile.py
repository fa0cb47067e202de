#!/usr/bin/env python3
"""bench/recompile_kernels.py on a tiny bundle: the copy opens (`dmc-run --dry-run`
checks every cubin's size and FNV-1a 64 against the manifest), a shadowed header is
the one compiled, and bad arguments and failed compiles say what went wrong.
Usage: test_recompile.py --dmc DMC --dmc-run DMC_RUN (skipped, 77, without them)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import fixtures  # noqa: F401 (import path)

import recompile_kernels

TOOLS = {}
MODEL = {"name": "tiny_recompile", "kind": "encoder", "batch": 2, "seq": 64, "hidden": 128,
         "heads": 2, "ffn": 256, "activation": "gelu", "norm": "post", "dropout": 0.1,
         "dtype": "bf16"}
GRAD_KV = "codegen/attention/device/GradKV.h"


def run(*cmd):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True)


class Recompile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="recompile-")
        model = os.path.join(cls.dir, "tiny.json")
        with open(model, "w") as f:
            json.dump(MODEL, f)
        cls.src = os.path.join(cls.dir, "tiny.dmlib")
        r = run(TOOLS["dmc"], "compile", model, "-o", cls.src)
        if r.returncode:
            raise RuntimeError(f"dmc compile failed:\n{r.stderr}")
        with open(os.path.join(cls.src, "manifest.json")) as f:
            kernels = json.load(f)["kernels"]
        cls.grad_kv = [k["id"] for k in kernels if k["name"] == "attention_grad_kv"][0]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def opens(self, bundle):
        out = os.path.join(self.dir, "args.safetensors")
        return run(TOOLS["dmc_run"], bundle, "--dry-run", "--out", out)

    def recompile(self, dst, *args):
        return recompile_kernels.main([self.src, os.path.join(self.dir, dst)] + list(args))

    def test_copy_opens_and_planted_byte_is_caught(self):
        self.assertEqual(self.recompile("a.dmlib", "--kernels", str(self.grad_kv)), 0)
        dst = os.path.join(self.dir, "a.dmlib")
        r = self.opens(dst)
        self.assertEqual(r.returncode, 0, r.stderr)
        # The check the rewrite satisfies can fail: one byte more and it does.
        with open(os.path.join(dst, "kernels", f"k{self.grad_kv}.cubin"), "ab") as f:
            f.write(b"x")
        r = self.opens(dst)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(f"kernels[{self.grad_kv}].cubin", r.stdout + r.stderr)

    def test_shadowed_header_is_compiled(self):
        shadow = os.path.join(self.dir, "shadow")
        os.makedirs(os.path.join(shadow, os.path.dirname(GRAD_KV)))
        with open(os.path.join(recompile_kernels.REPO, GRAD_KV)) as f:
            text = f.read()
        with open(os.path.join(shadow, GRAD_KV), "w") as f:
            f.write(text.replace("namespace dmcattn {", "namespace dmcattn {\nnot C++;", 1))
        code = self.recompile("b.dmlib", "--kernels", str(self.grad_kv), "--include", shadow)
        self.assertEqual(code, 1)  # the broken shadow was compiled, not the repository's

    def test_min_blocks_rewrites_launch_bounds(self):
        self.assertEqual(self.recompile("c.dmlib", "--kernels", str(self.grad_kv),
                                        "--min-blocks", "2"), 0)
        with open(os.path.join(self.dir, "c.dmlib", "kernels", f"k{self.grad_kv}.cu")) as f:
            self.assertIn("__launch_bounds__(128, 2)", f.read())
        self.assertEqual(self.opens(os.path.join(self.dir, "c.dmlib")).returncode, 0)

    def test_bad_arguments(self):
        self.assertEqual(self.recompile("d.dmlib", "--kernels", "99"), 2)
        self.assertEqual(self.recompile("d.dmlib", "--kernels", "x"), 2)
        self.assertEqual(self.recompile("d.dmlib", "--kernels", "0", "--include",
                                        os.path.join(self.dir, "none")), 2)
        self.assertEqual(recompile_kernels.main([os.path.join(self.dir, "no.dmlib"),
                                                 os.path.join(self.dir, "e.dmlib"),
                                                 "--kernels", "0"]), 2)
        self.assertEqual(recompile_kernels.main([self.src, self.src, "--kernels", "0"]), 2)


if __name__ == "__main__":
    args = sys.argv[1:]
    for flag, key in (("--dmc", "dmc"), ("--dmc-run", "dmc_run")):
        if flag in args:
            i = args.index(flag)
            TOOLS[key] = args[i + 1]
            del args[i:i + 2]
    if set(TOOLS) != {"dmc", "dmc_run"}:
        print("test_recompile: needs --dmc and --dmc-run (the compiler build): skipped")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0]] + args)
