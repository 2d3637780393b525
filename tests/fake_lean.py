#!/usr/bin/env python3
"""A stand-in for a native `lean` used by the fast tests.

`--version` prints a native version line, `--print-libdir` a library folder, and
`FILE -o OUT` "compiles": it writes OUT from the source's bytes and the imports' outputs,
appends the module to $FAKE_LEAN_LOG, and reports `error_here` markers as Lean JSON errors.
"""

import hashlib
import json
import os
import sys
from pathlib import Path

args = sys.argv[1:]
if args == ["--version"]:
    print("Lean (version 4.28.0, x86_64-unknown-linux-gnu, commit "
          "0123456789abcdef0123456789abcdef01234567, Release)")
    sys.exit(0)
if args == ["--print-libdir"]:
    print(os.environ.get("FAKE_LEAN_LIBDIR", str(Path(__file__).parent)))
    sys.exit(0)
source = Path(next(a for a in args if a.endswith(".lean")))
out = Path(args[args.index("-o") + 1])
text = source.read_text()
if log := os.environ.get("FAKE_LEAN_LOG"):
    with open(log, "a") as handle:
        handle.write(source.name + "\n")
for number, line in enumerate(text.splitlines(), 1):
    if "error_here" in line:
        print(json.dumps({"fileName": str(source), "pos": {"line": number, "column": 4},
                          "severity": "error", "data": "planted error"}))
        sys.exit(1)
out.parent.mkdir(parents=True, exist_ok=True)
out.write_bytes(hashlib.sha256(text.encode()).digest())
sys.exit(0)
