# lit configuration: pass tests (one file per pass), dialect tests and CLI tests.
import os

import lit.formats

config.name = "dmc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dmc_tools_dir, "..", "tests", "lit-out")

config.environment["PATH"] = os.pathsep.join(
    [config.dmc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
)
config.substitutions.append(("%examples", os.path.join(config.dmc_source_dir, "examples")))
config.substitutions.append(("%python", config.python))
# Python helpers (a safetensors reader) shared with the PyTorch oracle.
config.substitutions.append(("%oracle_dir", os.path.join(config.dmc_source_dir, "tests", "oracle")))
