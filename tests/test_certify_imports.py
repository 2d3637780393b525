"""Certify re-checks committed records; it never imports the code that made them.

A result whose figures come from a record made once (a served run, the engines' own cache code,
a long CP-SAT ladder) keeps the code that makes the record apart from the code that turns it
into figures (``*_record.py``). Checked two ways: the modules ``import pytools.publish.certify``
loads in a fresh interpreter, and the static import graph from it (function-level imports
included, so an import made only when certify runs a result's evidence counts too).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_layout import PACKAGE, import_graph

ROOT = PACKAGE.parent

#: Modules that run an experiment whose committed record certify only re-checks, each with why
#: certify must not load it.
EXPERIMENT_MODULES: dict[str, str] = {
    "pytools.results.leak.served_run": "starts vLLM's OpenAI server and the admission proxy and "
    "drives them over HTTP (`pytools leak serve`)",
    "pytools.results.leak.served": "starts, times and stops the served engine's processes",
    "pytools.results.leak.served_partition": "serves vLLM stock and partitioned behind the proxy "
    "(`pytools leak serve-partition`)",
    "pytools.results.leak.probe_engines": "drives vLLM's, SGLang's and LMCache's own cache code "
    "(`pytools leak probe-engines`)",
    "pytools.results.leak.engines": "loads the engines' cache classes, or an engine over HTTP",
    "pytools.results.leak.lmcache_pool": "drives LMCache's store",
    "pytools.results.placement.windows": "solves the CP-SAT ladder over windows of the trace "
    "(`pytools placement windows`), minutes of solving",
    "pytools.results.ceiling.prefix_optima": "solves the CP-SAT prefix-cache ladders and runs "
    "kvcache-simulator (`pytools ceiling prefix-optima`), minutes of solving",
    "pytools.admission.bench": "starts the proxy's server and a stand-in upstream",
}

#: What a fresh interpreter imports, then prints: every module loaded, as JSON.
_PROBE = ("import json, sys\nimport pytools\nimport pytools.publish.certify\n"
          "print(json.dumps({'pytools': pytools.__file__, 'modules': sorted(sys.modules)}))\n")


def loaded_by_certify(pythonpath: Path) -> tuple[str, set[str]]:
    """``pytools``' file and every module ``import pytools.publish.certify`` loads, in a fresh
    interpreter that finds ``pytools`` under ``pythonpath``."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    proc = subprocess.run([sys.executable, "-c", _PROBE], cwd=pythonpath, env=env,
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return out["pytools"], set(out["modules"])


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or not (function-level imports included)."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


@pytest.mark.parametrize("module", sorted(EXPERIMENT_MODULES))
def test_every_listed_module_exists(module: str) -> None:
    """A renamed module would make its entry vacuous: each one must still be found."""
    assert importlib.util.find_spec(module) is not None, f"{module}: gone, update the list"


def test_certify_loads_no_experiment_module() -> None:
    where, loaded = loaded_by_certify(ROOT)
    assert Path(where).resolve() == (PACKAGE / "__init__.py").resolve()
    assert "pytools.results.registry" in loaded  # the results' figures are imported
    found = sorted(set(EXPERIMENT_MODULES) & loaded)
    assert found == [], "certify loads: " + "; ".join(f"{m} ({EXPERIMENT_MODULES[m]})"
                                                      for m in found)


def test_certify_reaches_no_experiment_module_through_any_import() -> None:
    reached = reachable(import_graph(), "pytools.publish.certify")
    assert "pytools.results.leak.served_record" in reached
    assert sorted(set(EXPERIMENT_MODULES) & reached) == []


def test_a_planted_import_of_the_served_run_is_caught(tmp_path: Path) -> None:
    """Planted defect: the leak result imports the served run again (as it did before the
    split), in a copy of the package: the fresh interpreter shows it loaded."""
    shutil.copytree(PACKAGE, tmp_path / "pytools",
                    ignore=shutil.ignore_patterns("__pycache__"))
    result = tmp_path / "pytools" / "results" / "leak" / "result.py"
    planted = "\nfrom . import served_run  # planted\n"
    result.write_text(result.read_text(encoding="utf-8") + planted, encoding="utf-8")
    where, loaded = loaded_by_certify(tmp_path)
    assert Path(where).resolve() == (tmp_path / "pytools" / "__init__.py").resolve()
    assert set(EXPERIMENT_MODULES) & loaded >= {"pytools.results.leak.served_run",
                                                 "pytools.results.leak.served",
                                                 "pytools.admission.bench"}


def test_a_planted_function_level_import_is_caught(tmp_path: Path) -> None:
    """Planted defect: the placement record's evidence imports the CP-SAT ladder inside a
    function (loaded only when certify runs it): the import graph sees it."""
    shutil.copytree(PACKAGE, tmp_path / "pytools",
                    ignore=shutil.ignore_patterns("__pycache__"))
    record = tmp_path / "pytools" / "results" / "placement" / "windows_record.py"
    record.write_text(record.read_text(encoding="utf-8")
                      + "\n\ndef planted() -> None:\n    from .windows import run_ladder  # noqa\n",
                      encoding="utf-8")
    reached = reachable(import_graph(tmp_path / "pytools"), "pytools.publish.certify")
    assert set(EXPERIMENT_MODULES) & reached == {"pytools.results.placement.windows"}
