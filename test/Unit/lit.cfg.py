# -*- Python -*-
# Runs the gtest binaries under lit, as CIRCT does.

import os

import lit.formats

config.name = "DT-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.dt_obj_root, "test", "Unit")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
# The machine's choice of OpenBLAS kernels, as test/lit.cfg.py passes it.
for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
