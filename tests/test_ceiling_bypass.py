"""The ceiling certificate's bypass table (pytools.results.ceiling.bypass_table): its rows and
figures, and the rows the theorems it rests on refuse."""

from __future__ import annotations

import pytest

from pytools.results.ceiling.bypass_table import (
    BYPASS_THEOREMS,
    BypassRow,
    bypass_figures,
    bypass_rows,
    check_row,
)
from pytools.results.ceiling.result import THEOREMS
from pytools.traces.policies import simulate


def test_rows_and_figures() -> None:
    stream = [0, 1, 0, 2, 0, 3, 0]
    rows = bypass_rows(stream, [(1, simulate(stream, 1, "belady")),
                                (4, simulate(stream, 4, "belady"))])
    assert rows == [BypassRow(1, 0, 3), BypassRow(4, 3, 3)]
    f = bypass_figures(rows, len(stream))
    assert [r["gain_hits"] for r in f["rows"]] == [3, 0]
    assert f["rows"][0]["belady_bypass_percent"] == "42.8571"
    assert f["theorems"] == list(BYPASS_THEOREMS)
    assert set(BYPASS_THEOREMS) <= set(THEOREMS)


def test_planted_rows_are_refused() -> None:
    with pytest.raises(ValueError, match="belady_hits_le_beladyBypass_bhits"):
        check_row(BypassRow(4, 10, 9), 100)
    with pytest.raises(ValueError, match="bhits_add_distinct_le_length"):
        check_row(BypassRow(4, 10, 101), 100)
    # a planted Belady figure above what bypass reaches on the stream
    with pytest.raises(ValueError, match="belady_hits_le_beladyBypass_bhits"):
        bypass_rows([0, 1, 0, 2, 0, 3, 0], [(1, 4)])
    check_row(BypassRow(4, 10, 10), 10)
