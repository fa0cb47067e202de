#!/usr/bin/python3
"""dmc.torch without a GPU: bundles opened validate-only (names, shapes, parameters,
state_dict, errors). Usage: layer_cpu_test.py --dmc BUILD/bin/dmc [unittest args]

Compiles small bundles with the given dmc into a temporary folder: the tiny encoder of
tests/lit/dmc/Inputs (key padding), the same with dropout, and a two-layer decoder stack.
libdmrt.so is found as dmc._dmrt says (ctest sets DMC_LIBDMRT).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import dmc.torch as dt  # noqa: E402
from dmc import _dmrt  # noqa: E402
from dmc.torch import tensors as T  # noqa: E402
from dmc.torch.config import ModelConfig  # noqa: E402

TINY = os.path.join(ROOT, "tests", "lit", "dmc", "Inputs", "tiny-encoder.json")
DMC = None
WORK = None


def compile_model(name, model):
    path = os.path.join(WORK, name + ".json")
    with open(path, "w") as f:
        json.dump(model, f)
    out = os.path.join(WORK, name + ".dmlib")
    subprocess.run([DMC, "compile", path, "-o", out], check=True, stdout=subprocess.DEVNULL)
    return path, out


def setUpModule():
    global WORK, MODELS
    WORK = tempfile.mkdtemp(prefix="dmc-py-")
    with open(TINY) as f:
        tiny = json.load(f)
    MODELS = {
        "tiny": compile_model("tiny", tiny),
        "tiny-drop": compile_model("tiny-drop", dict(tiny, dropout=0.1)),
        "stack": compile_model("stack", {"kind": "decoder", "batch": 2, "seq": 3,
                                         "memory_seq": 4, "hidden": 8, "heads": 2, "ffn": 6,
                                         "layers": 2, "dtype": "bf16"}),
    }


def tearDownModule():
    shutil.rmtree(WORK, ignore_errors=True)


class Names(unittest.TestCase):
    def test_names_and_shapes_follow_the_model(self):
        for key in ("tiny", "stack"):
            model, bundle = MODELS[key]
            layer = dt.Stack(bundle) if key == "stack" else dt.Layer(bundle)
            want = ModelConfig.load(model).parameter_shapes()
            got = {n: tuple(t.shape) for n, t in layer.state_dict().items()}
            self.assertEqual(got, want)
            self.assertEqual({n for n, _ in layer.named_parameters()}, set(want))
        self.assertEqual(dt.Layer(MODELS["tiny"][1]).input_names, ["x", "lengths"])
        stack = dt.Stack(MODELS["stack"][1])
        self.assertEqual(stack.input_names, ["x", "memory"])
        self.assertEqual(stack.num_layers, 2)
        self.assertIn("cross.wk", stack.layer_names(1))
        self.assertEqual(stack.dtype, torch.bfloat16)
        self.assertTrue(all(p.dtype == torch.bfloat16 for p in stack.parameters()))

    def test_stack_refuses_a_single_layer(self):
        with self.assertRaisesRegex(ValueError, "not a stack .*layer<n>"):
            dt.Stack(MODELS["tiny"][1])

    def test_stacked_parameters_share_one_allocation(self):
        layer = dt.Layer(MODELS["tiny"][1])
        sd = layer.state_dict()
        size = sd["attn.wq"].element_size()
        self.assertEqual(sd["attn.wk"].data_ptr() - sd["attn.wq"].data_ptr(),
                         sd["attn.wq"].numel() * size)
        # moved out of its buffer: copied back in (same values) before a run
        wk = layer.attn.wk.detach().clone()
        layer.attn.wk.data = wk.clone()
        params = dict(zip([d.name for d in layer.param_descs], layer._parameters_for_run()))
        self.assertEqual(params["attn.wk"].data_ptr() - params["attn.wq"].data_ptr(),
                         wk.numel() * size)
        self.assertTrue(torch.equal(params["attn.wk"], wk))


class Parameters(unittest.TestCase):
    def test_init_matches_the_reference_layer_and_nn_linear_ranges(self):
        model, bundle = MODELS["tiny"]
        torch.manual_seed(3)
        layer = dt.Layer(bundle)
        torch.manual_seed(3)
        ref = dt.reference_layer(model)
        for name, value in layer.state_dict().items():
            self.assertTrue(torch.equal(value, ref.state_dict()[name]), name)
        sd = layer.state_dict()
        self.assertTrue(torch.all(sd["ln1.gamma"] == 1) and torch.all(sd["ln2.beta"] == 0))
        for name, fan_in in (("attn.wq", 8), ("attn.bq", 8), ("attn.wo", 8), ("ffn.w2", 6),
                             ("ffn.b2", 6), ("ffn.w1", 8)):
            bound = fan_in ** -0.5
            self.assertLessEqual(sd[name].abs().max().item(), bound, name)
            self.assertGreater(sd[name].abs().max().item(), 0.5 * bound, name)
        torch.manual_seed(4)
        other = dt.Layer(bundle)
        self.assertFalse(torch.equal(other.attn.wq, layer.attn.wq))

    def test_state_dict_round_trip(self):
        model, bundle = MODELS["tiny"]
        a, b = dt.Layer(bundle), dt.Layer(bundle)
        b.load_state_dict(a.state_dict())
        for name, value in a.state_dict().items():
            self.assertTrue(torch.equal(b.state_dict()[name], value), name)
        ref = dt.reference_layer(model)
        b.load_state_dict(ref.state_dict())  # the reference layer's names and shapes
        self.assertTrue(torch.equal(b.attn.wv, ref.attn.wv))
        wq = b.attn.wq.data_ptr()
        b.load_state_dict(a.state_dict())  # in place: stacked buffers stay put
        self.assertEqual(b.attn.wq.data_ptr(), wq)
        bad = dict(a.state_dict(), **{"attn.wq": torch.zeros(8, 2, 4)})
        with self.assertRaisesRegex(RuntimeError, "attn.wq"):
            b.load_state_dict(bad)


class Errors(unittest.TestCase):
    def test_missing_bundle(self):
        with self.assertRaisesRegex(FileNotFoundError, "no-such.dmlib.*no such directory"):
            dt.Layer(os.path.join(WORK, "no-such.dmlib"))

    def test_truncated_and_missing_manifest(self):
        broken = os.path.join(WORK, "broken.dmlib")
        shutil.copytree(MODELS["tiny"][1], broken)
        manifest = os.path.join(broken, "manifest.json")
        with open(manifest) as f:
            text = f.read()
        with open(manifest, "w") as f:
            f.write(text[: len(text) // 2])
        with self.assertRaises(dt.DmrtError) as e:
            dt.Layer(broken)
        self.assertEqual(e.exception.status, "DMRT_ERROR_BUNDLE")
        self.assertIn("manifest.json", str(e.exception))
        os.remove(manifest)
        with self.assertRaisesRegex(dt.DmrtError, "DMRT_ERROR_BUNDLE.*manifest"):
            dt.Layer(broken)

    def test_inputs(self):
        layer = dt.Layer(MODELS["tiny"][1])
        x, lengths = torch.zeros(2, 3, 8), torch.tensor([3, 1], dtype=torch.int32)
        with self.assertRaisesRegex(ValueError, "input 'lengths' is missing.*'x', 'lengths'"):
            layer(x)
        with self.assertRaisesRegex(ValueError, "'memory' is not an input"):
            layer(x, lengths=lengths, memory=x)
        with self.assertRaisesRegex(ValueError, r"'x': shape \(2, 3, 7\), the bundle needs "
                                                r"\(2, 3, 8\) \[b, j, i\]"):
            layer(torch.zeros(2, 3, 7), lengths=lengths)
        with self.assertRaisesRegex(TypeError, "'x': dtype torch.float64, the bundle needs "
                                               "torch.float32"):
            layer(x.double(), lengths=lengths)
        with self.assertRaisesRegex(TypeError, "'lengths': dtype torch.float32.*integer"):
            layer(x, lengths=lengths.float())
        with self.assertRaisesRegex(TypeError, "'x': expected a torch.Tensor, got list"):
            layer([1.0], lengths=lengths)
        with self.assertRaisesRegex(RuntimeError, "opened without a CUDA device"):
            layer(x, lengths=lengths)

    def test_cpu_tensor_noncontiguous_and_int64_lengths(self):
        desc = {d.name: d for d in dt.Layer(MODELS["tiny"][1]).input_descs}
        cuda = torch.device("cuda", 0)
        with self.assertRaisesRegex(ValueError, "input 'x' is on the CPU; the layer runs on "
                                                "cuda:0"):
            T.check_input(desc["x"], torch.zeros(2, 3, 8), cuda)
        cpu = torch.device("cpu")
        t = torch.arange(48.0).view(2, 8, 3).transpose(1, 2)
        got = T.check_input(desc["x"], t, cpu)
        self.assertTrue(got.is_contiguous() and torch.equal(got, t))
        lengths = T.check_input(desc["lengths"], torch.tensor([3, 1]), cpu)
        self.assertEqual(lengths.dtype, torch.int32)

    def test_eval_needs_a_bundle_without_dropout(self):
        model, bundle = MODELS["tiny-drop"]
        layer = dt.Layer(bundle).eval()
        self.assertTrue(layer.has_dropout and not dt.Layer(MODELS["tiny"][1]).has_dropout)
        x, lengths = torch.zeros(2, 3, 8), torch.tensor([3, 1], dtype=torch.int32)
        with self.assertRaisesRegex(RuntimeError, "eval\\(\\) needs dropout off.*eval_bundle"):
            layer(x, lengths=lengths)
        paired = dt.Layer(bundle, eval_bundle=MODELS["tiny"][1]).eval()
        with self.assertRaisesRegex(RuntimeError, "opened without a CUDA device"):
            paired(x, lengths=lengths)  # got past the dropout check
        with self.assertRaisesRegex(ValueError, "eval_bundle .*has dropout kernels"):
            dt.Layer(bundle, eval_bundle=bundle)
        with self.assertRaisesRegex(ValueError, "eval_bundle .*differ"):
            dt.Layer(bundle, eval_bundle=MODELS["stack"][1])

    def test_library_not_found(self):
        code = "import dmc.torch as d; d.Layer(%r)" % MODELS["tiny"][1]
        env = dict(os.environ, DMC_LIBDMRT=os.path.join(WORK, "nowhere", "libdmrt.so"),
                   PYTHONPATH=os.path.join(ROOT, "python"))
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("LibraryNotFound: cannot load libdmrt.so from", r.stderr)
        self.assertIn("nowhere/libdmrt.so (DMC_LIBDMRT)", r.stderr)


class FakeHandle:
    """The runtime's binding rule for stacked buffers (runtime/LayerBindings.cpp): a
    slice may only be bound where the bound slices of its buffer put it."""

    def __init__(self, descs):
        self.descs = {d.name: d for d in descs}
        self.ptr, self.bound, self.calls = {}, {}, []

    def bind(self, desc, ptr, nbytes):
        for other, p in self.ptr.items():
            o = self.descs[other]
            if o.buffer == desc.buffer and other != desc.name and \
                    p - o.buffer_offset != ptr - desc.buffer_offset:
                raise dt.DmrtError("dmrt_bind", "DMRT_ERROR_BINDING", desc.name)
        if self.bound_at(desc.name, ptr, nbytes):  # as _dmrt.Handle.bind
            return
        self.ptr[desc.name] = ptr
        self.bound[desc.name] = (ptr, nbytes)
        self.calls.append(("bind", desc.name))

    bound_at = _dmrt.Handle.bound_at  # the real rule

    def unbind(self, name):
        self.ptr.pop(name, None)
        self.bound.pop(name, None)
        self.calls.append(("unbind", name))


class StackedRebind(unittest.TestCase):
    """A stacked buffer (QKV slices of one allocation) moved between steps: new gradient
    buffers each backward, parameters re-placed. Binding slice by slice is refused; the
    module unbinds the buffer as a whole first (found on the GPU: train.py's 2nd step)."""

    def setUp(self):
        layer = dt.Layer(MODELS["stack"][1])
        self.grads = [d for d in layer.grad_descs]
        self.params = layer.param_descs
        self.pool = layer._pool
        self.stacked = [g for g in T.group_by_buffer(self.grads) if len(g) > 1]
        self.assertTrue(self.stacked, "the stack bundle has no stacked gradient buffer")

    def test_moved_gradient_buffer(self):
        h = FakeHandle(self.grads)
        first = []  # kept alive: a freed buffer's address could come back as `moved`'s
        for group in T.group_by_buffer(self.grads):
            first.append(T.allocate_group(group, "cpu"))
            T.bind_group(h, group, first[-1])
        group = self.stacked[0]
        moved = T.allocate_group(group, "cpu")
        with self.assertRaises(dt.DmrtError):  # slice by slice: what the rule refuses
            for d in group:
                T.bind(h, d, moved[d.name])
        T.bind_group(h, group, moved)  # as a whole
        for d in group:
            self.assertEqual(h.ptr[d.name], moved[d.name].data_ptr())

    def test_parameters_rebound_only_when_moved(self):
        h = FakeHandle(self.params)
        params = {}
        for group in T.group_by_buffer(self.params):
            params.update(T.allocate_group(group, "cpu"))
        ordered = [params[d.name] for d in self.params]
        self.pool.bind_parameters(h, self.params, ordered)
        self.assertEqual(len([c for c in h.calls if c[0] == "bind"]), len(self.params))
        h.calls.clear()
        self.pool.bind_parameters(h, self.params, ordered)
        self.assertEqual(h.calls, [])  # nothing moved: nothing bound again
        group = [g for g in T.group_by_buffer(self.params) if len(g) > 1][0]
        params.update(T.allocate_group(group, "cpu"))
        self.pool.bind_parameters(h, self.params, [params[d.name] for d in self.params])
        self.assertEqual(sorted(n for c, n in h.calls if c == "bind"),
                         sorted(d.name for d in group))

    def test_gradients_at_the_same_addresses_not_bound_again(self):
        # PyTorch's caching allocator mostly hands a step the addresses of the step
        # before: nothing is bound, unbound or bound again, so the runtime's bindings
        # keep their version and its CUDA graphs replay as captured
        h = FakeHandle(self.grads)
        grads = {}
        for group in T.group_by_buffer(self.grads):
            grads.update(T.allocate_group(group, "cpu"))
            T.bind_group(h, group, grads)
        h.calls.clear()
        for group in T.group_by_buffer(self.grads):
            T.bind_group(h, group, grads)
        self.assertEqual(h.calls, [])
        group = self.stacked[0]  # one slice moved: the buffer as a whole again
        moved = dict(grads, **{group[0].name: grads[group[0].name].clone()})
        with self.assertRaises(dt.DmrtError):
            T.bind_group(h, group, moved)  # its siblings stay: refused, as by the runtime

    def test_gradient_layout_one_allocation(self):
        groups = T.group_by_buffer(self.grads)
        layout = T.GradientLayout(groups)
        self.assertIsNotNone(layout.dtype)
        grads = layout.allocate("cpu")
        self.assertEqual(sorted(grads), sorted(d.name for d in self.grads))
        base = min(t.data_ptr() for t in grads.values())
        spans = []
        for group in groups:
            self.assertTrue(T.placed_as_group(group, grads))  # slices at their offsets
            start = grads[group[0].name].data_ptr() - group[0].buffer_offset
            self.assertEqual((start - base) % 256, 0, group[0].name)
            spans.append((start, start + group[0].buffer_bytes))
            for d in group:
                self.assertEqual(tuple(grads[d.name].shape), d.shape)
                self.assertEqual(grads[d.name].numel() * grads[d.name].element_size(), d.bytes)
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:]):
            self.assertLessEqual(end, start)  # buffers do not overlap
        h = FakeHandle(self.grads)  # the runtime's rule accepts every buffer as placed
        for group in groups:
            T.bind_group(h, group, grads)
        self.assertEqual(len([c for c in h.calls if c[0] == "bind"]), len(self.grads))


class HandleBind(unittest.TestCase):
    """_dmrt.Handle.bind calls dmrt_bind once per (pointer, bytes), with its arguments
    built once per tensor description."""

    def test_repeat_skipped(self):
        calls = []

        class Lib:
            def dmrt_bind(self, ptr, name, address, nbytes, dtype, rank, shape):
                calls.append((name, address, nbytes, rank, tuple(shape[:rank])))
                return 0

        layer = dt.Layer(MODELS["tiny"][1])
        desc = layer.input_descs[0]
        h = object.__new__(_dmrt.Handle)
        h.ptr, h.lib, h.bound = None, Lib(), {}
        h.bind(desc, 4096, desc.bytes)
        h.bind(desc, 4096, desc.bytes)
        self.assertEqual(calls, [(desc.name.encode(), 4096, desc.bytes, len(desc.shape),
                                  desc.shape)])
        h.bind(desc, 8192, desc.bytes)  # moved
        h.bind(desc, 8192, desc.bytes + 256)  # more bytes: checked again by the runtime
        self.assertEqual([c[1:3] for c in calls[1:]], [(8192, desc.bytes),
                                                       (8192, desc.bytes + 256)])
        h.bound.pop(desc.name)  # as unbind does
        h.bind(desc, 8192, desc.bytes + 256)
        self.assertEqual(len(calls), 4)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "--dmc":
        sys.exit("usage: layer_cpu_test.py --dmc PATH/TO/dmc [unittest args]")
    DMC = sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
