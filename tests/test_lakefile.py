"""The lakefile (the elan world's build): it gives Lean's threads the stack the generated
data modules need (``moreLeanArgs``, ``--tstack``, measured in docs/toolchain.md), and the
``kernel-option`` rule, which reads it, passes it as it is and catches a kernel-skipping
option planted in it, in each spelling Lean's command line and Lake accept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytools.lean.audit import rules
from pytools.lean.audit.library_facts import LibraryFacts

ROOT = Path(__file__).resolve().parents[1]
LAKEFILE = ROOT / "lakefile.lean"
#: The smallest worker stack (MiB) the generated modules compiled with under the registry
#: Lean (docs/toolchain.md, "The elan world's thread stack"); the lakefile must give at least
#: this much.
MEASURED_NEED_MIB = 64


def _facts(text: str) -> LibraryFacts:
    return LibraryFacts(modules=(), declared_in={}, reached={}, core_names=frozenset(),
                        sources=(("lakefile.lean", text),))


def test_lakefile_gives_the_measured_thread_stack() -> None:
    text = LAKEFILE.read_text(encoding="utf-8")
    args = re.search(r"moreLeanArgs\s*:=\s*#\[([^\]]*)\]", text)
    assert args, "lakefile.lean: no moreLeanArgs"
    (kib,) = re.findall(r'"--tstack=(\d+)"', args.group(1))
    assert int(kib) >= MEASURED_NEED_MIB * 1024


def test_the_lakefile_passes_the_kernel_option_rule() -> None:
    assert list(rules.rule_kernel_option(_facts(LAKEFILE.read_text(encoding="utf-8")))) == []


@pytest.mark.parametrize("planted", [
    '"-Ddebug.skipKernelTC=true"',
    '"-D", "debug.skipKernelTC=true"',
    '"-D debug.skipKernelTC=true"',
    '"-Dweak.debug.skipKernelTC=true"',
    '"-Ddebug.proofAsSorry=true"',
])
def test_a_kernel_option_planted_in_more_lean_args_is_caught(planted: str) -> None:
    text = LAKEFILE.read_text(encoding="utf-8")
    edited = re.sub(r"moreLeanArgs\s*:=\s*#\[", lambda m: m.group(0) + planted + ", ", text,
                    count=1)
    assert edited != text
    (finding,) = rules.rule_kernel_option(_facts(edited))
    assert finding.rule == "kernel-option" and finding.module == "lakefile.lean"


def test_names_that_only_contain_the_option_are_not_caught() -> None:
    text = 'moreLeanArgs := #["-Dmydebug.skipKernelTC=true", "-Dx.debug.skipKernelTCs=1"]\n'
    assert list(rules.rule_kernel_option(_facts(text))) == []
