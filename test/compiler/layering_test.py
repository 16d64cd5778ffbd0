#!/usr/bin/env python3
"""The compiler's layers reach only downward (compiler/CMakeLists.txt).

usage: layering_test.py SOURCE_ROOT

Every #include "compiler/..." and "dialect/..." of a file under dialect/,
compiler/ and the compiler's tools must name its own folder or a layer below
it; of the runtime, only the kernel ABI (fa/KernelAbi.h, a header of
constants) may be included below the Driver, which links fa::runtime for the
manifest writer. Static libraries would link an upward reach without
complaint, so this test is what keeps the layers layers.
"""
import os
import re
import sys

ANALYSIS = ["dialect", "compiler/Analysis"]
# folder -> the folders (other than itself) its files may include from.
ALLOWED = {
    "dialect": [],
    "compiler/Testing": [],
    "compiler/Analysis": ["dialect"],
    "compiler/Transforms": ANALYSIS + ["compiler/Testing"],
    "compiler/Lowering": ANALYSIS + ["compiler/Testing"],
    "compiler/Targets": ANALYSIS,
    "compiler/Targets/Gfx906": ANALYSIS + ["compiler/Targets"],
    "compiler/Targets/Nvptx": ANALYSIS + ["compiler/Targets"],
    "compiler/Targets/Host": ANALYSIS + ["compiler/Targets", "compiler/Lowering"],
    "compiler/Driver": None,  # the top: anything below it
    "tools/fac": ["compiler/Driver", "compiler/Testing"],
    "tools/fa-opt": ["compiler/Driver"],
}
RUNTIME_OK_BELOW_DRIVER = {"fa/KernelAbi.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def main():
    root = sys.argv[1]
    failures = []
    for folder, allowed in ALLOWED.items():
        path = os.path.join(root, folder)
        if not os.path.isdir(path):
            failures.append(f"{folder}: no such folder (update this test)")
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith((".cpp", ".h", ".c")):
                continue
            rel = f"{folder}/{name}"
            with open(os.path.join(path, name), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    header = m.group(1)
                    if header.startswith("fa/"):
                        if (allowed is not None
                                and header not in RUNTIME_OK_BELOW_DRIVER):
                            failures.append(f"{rel}:{number}: {header} (only "
                                            "the Driver uses the runtime)")
                        continue
                    if not header.startswith(("compiler/", "dialect/")):
                        continue
                    target = os.path.dirname(header)
                    if target == folder or allowed is None:
                        continue
                    if target not in allowed:
                        failures.append(f"{rel}:{number}: includes {header}, "
                                        f"but {folder} may reach only "
                                        f"{', '.join(allowed) or 'nothing'}")
    for f in failures:
        print("layering:", f)
    if not failures:
        print(f"layering: ok ({len(ALLOWED)} folders)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
