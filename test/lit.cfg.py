# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "fa"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "LdsBudgetTest.cpp"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fa_obj_root, "test")

config.substitutions.append(("%fa_src", config.fa_src_root))
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.fa_tools_dir, append_path=True)
tools = ["fa-opt", "fac", "fa-run", "FileCheck", "not", "split-file"]
llvm_config.add_tool_substitutions(tools, [config.fa_tools_dir, config.llvm_tools_dir])

# ptxas (the CUDA toolkit's assembler) makes fac write cubins for sm_90.
import shutil
if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")
