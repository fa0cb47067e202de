#!/usr/bin/env python3
"""Makes the fuzz targets' seed corpora and dictionaries from the project's
examples and test files, with dmc itself (tests/fuzz/README.md).

    tests/fuzz/make-corpus.py [--build build]

Writes tests/fuzz/corpus/TARGET/ (seeds, compact JSON) and
tests/fuzz/dict/TARGET.dict (JSON tokens plus every key and string value of
the seeds). Replaces what was there; the result is committed.
"""
import argparse
import json
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
FUZZ = ROOT / "tests" / "fuzz"
TARGETS = ["model", "config", "manifest", "bundle", "safetensors", "tuningdb"]
# Small models whose bundles seed the manifest, bundle and config targets.
BUNDLE_MODELS = [
    FUZZ / "fixtures" / "config-model.json",
    ROOT / "tests" / "oracle" / "models" / "gpt-keypad.json",
    ROOT / "tests" / "oracle" / "models" / "decoder-pre.json",
    ROOT / "tests" / "lit" / "dmc" / "Inputs" / "tiny-encoder.json",
]
SEED_CUBIN = b"dmc fuzz seed: the one cubin of a bundle seed\n"


def compact(value):
    return json.dumps(value, separators=(",", ":"), sort_keys=False).encode()


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def run(cmd):
    subprocess.run([str(c) for c in cmd], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def safetensors(tensors, metadata=None):
    """A safetensors file from (name, dtype, shape, bytes) tuples."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def model_seeds(out):
    models = sorted((ROOT / "examples").glob("*.json"))
    models += sorted((ROOT / "tests" / "oracle" / "models").glob("*.json"))
    models += sorted((ROOT / "tests" / "lit" / "dmc" / "Inputs").glob("*.json"))
    models.append(FUZZ / "fixtures" / "config-model.json")
    for m in models:
        text = m.read_bytes()
        try:  # valid JSON is compacted; deliberately broken inputs stay as they are
            text = compact(json.loads(text))
        except ValueError:
            pass
        (out / f"{m.parent.name}-{m.stem}.json").write_bytes(text)


def bundle_seeds(dmc, work, outs):
    for m in BUNDLE_MODELS:
        bundle = work / (m.stem + ".dmlib")
        run([dmc, "compile", m, "-o", bundle])
        manifest = json.loads((bundle / "manifest.json").read_text())
        (outs["manifest"] / f"{m.stem}.json").write_bytes(compact(manifest))
        config = json.loads((bundle / "config.json").read_text())
        if m.stem == "config-model":  # the config target applies these to this model
            (outs["config"] / "config-model.json").write_bytes(compact(config))
            for name, flags in [("no-epilogues", ["--no-epilogues"]),
                                ("config-index-1", ["--config-index", "1"]),
                                ("config-index-3", ["--config-index", "3"])]:
                printed = subprocess.run([str(dmc), "compile", str(m), "--print-config", *flags],
                                         check=True, capture_output=True).stdout
                (outs["config"] / f"config-model-{name}.json").write_bytes(
                    compact(json.loads(printed)))
        else:
            (outs["config"] / f"{m.stem}-other-model.json").write_bytes(compact(config))
        # The bundle target's directory holds one cubin, k0.cubin.
        for k in manifest["kernels"]:
            k["cubin"] = "k0.cubin"
            if "cubin_bytes" in k:
                k["cubin_bytes"] = len(SEED_CUBIN)
                k["cubin_fnv1a64"] = "%016x" % fnv1a64(SEED_CUBIN)
        (outs["bundle"] / f"{m.stem}.bin").write_bytes(compact(manifest) + b"\0" + SEED_CUBIN)


def safetensors_seeds(dmc, work, out):
    tiny = ROOT / "tests" / "lit" / "dmc" / "Inputs" / "tiny-encoder.json"
    run([dmc, "eval", tiny, "--out", work / "eval.safetensors", "--seed", "1"])
    (out / "dmc-eval-tiny-encoder.safetensors").write_bytes((work / "eval.safetensors").read_bytes())
    one = struct.pack("<f", 1.5)
    seeds = {
        "empty": safetensors([]),
        "metadata-only": safetensors([], {"format": "pt", "dims.x": "bji"}),
        "scalar": safetensors([("s", "F32", [], one)]),
        "zero-size": safetensors([("z", "F32", [0, 4], b""), ("a", "F32", [1], one)]),
        "every-dtype": safetensors([
            ("f64", "F64", [2], struct.pack("<2d", 1.0, -2.0)),
            ("f32", "F32", [2], struct.pack("<2f", 1.0, -2.0)),
            ("f16", "F16", [2], struct.pack("<2H", 0x3C00, 0xC000)),
            ("bf16", "BF16", [2], struct.pack("<2H", 0x3F80, 0xC000)),
            ("i64", "I64", [2], struct.pack("<2q", 1, -2)),
            ("i32", "I32", [2], struct.pack("<2i", 1, -2)),
            ("u8", "U8", [2], bytes([1, 2])),
            ("bool", "BOOL", [2], bytes([0, 1]))]),
    }
    for name, data in seeds.items():
        (out / f"{name}.safetensors").write_bytes(data)


def tuningdb_seeds(dmc_db, work, out):
    for device in ["h100", "h200"]:
        lines = (ROOT / "tuning-db" / f"{device}.jsonl").read_bytes().splitlines(keepends=True)
        (out / f"{device}-head.jsonl").write_bytes(b"".join(lines[:8]))
        (out / f"{device}-torn-tail.jsonl").write_bytes(b"".join(lines[:3]) + lines[3][:40])
        db = work / f"{device}.jsonl"
        db.write_bytes(b"".join(lines[:6]))
        run([dmc_db, "export", db, "-o", work / f"{device}-export.json"])
        (out / f"{device}-export.json").write_bytes(
            compact(json.loads((work / f"{device}-export.json").read_text())))


def dictionary(seeds):
    """JSON tokens plus every key and short string value of the seeds."""
    words = {"{", "}", "[", "]", ":", ",", "null", "true", "false", "0", "-1", "1e308",
             "\"\"", "18446744073709551615", "9223372036854775807"}

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                words.add(json.dumps(k))
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str) and len(v) <= 24:
            words.add(json.dumps(v))

    for f in seeds:
        data = f.read_bytes()
        if f.suffix == ".safetensors" and len(data) >= 8:
            n = struct.unpack("<Q", data[:8])[0]
            data = data[8:8 + n]
        for chunk in data.split(b"\0")[:1] + data.splitlines():
            try:
                walk(json.loads(chunk))
            except ValueError:
                pass
    escaped = sorted(w.replace("\\", "\\\\").replace("\"", "\\\"") for w in words)
    return "".join(f"\"{w}\"\n" for w in escaped)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=str(ROOT / "build"), help="build directory with bin/dmc")
    args = ap.parse_args()
    bin_dir = pathlib.Path(args.build) / "bin"
    dmc, dmc_db = bin_dir / "dmc", bin_dir / "dmc-db"
    for tool in (dmc, dmc_db):
        if not tool.exists():
            sys.exit(f"make-corpus: {tool} does not exist; build first (.ci/build)")
    outs = {t: FUZZ / "corpus" / t for t in TARGETS}
    for d in outs.values():
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="dmc-corpus-") as tmp:
        work = pathlib.Path(tmp)
        model_seeds(outs["model"])
        bundle_seeds(dmc, work, outs)
        safetensors_seeds(dmc, work, outs["safetensors"])
        tuningdb_seeds(dmc_db, work, outs["tuningdb"])
    (FUZZ / "dict").mkdir(exist_ok=True)
    for t, d in outs.items():
        seeds = sorted(d.iterdir())
        (FUZZ / "dict" / f"{t}.dict").write_text(
            f"# {t}: made by tests/fuzz/make-corpus.py from corpus/{t}/\n" + dictionary(seeds))
        print(f"make-corpus: {t}: {len(seeds)} seeds, "
              f"{sum(f.stat().st_size for f in seeds) // 1024} KiB")


if __name__ == "__main__":
    main()
