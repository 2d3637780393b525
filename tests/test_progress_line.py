"""Progress lines (issue 42): commands that work for seconds with nothing to count say so on
stderr, on a terminal only (a pty here), and print nothing extra when stderr is a pipe."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytools.results.cli import regenerate
from pytools.traces import progress
from pytools.traces.progress import progress_line

ROOT = Path(__file__).resolve().parent.parent


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_on_a_terminal_redraws_and_closes() -> None:
    out = _Tty()
    with progress_line("working", stream=out, delay=0.05, tick=0.05) as step:
        time.sleep(0.3)
        step("working harder")
        time.sleep(0.2)
    text = out.getvalue()
    assert "\r\x1b[Kworking …  0 s" in text
    assert "\r\x1b[Kworking harder …  " in text
    assert text.endswith("\n") and "working harder …  done in 0." in text.splitlines()[-1]


def test_progress_line_says_stopped_when_the_step_fails() -> None:
    out = _Tty()
    try:
        with progress_line("working", stream=out, delay=0.0, tick=0.05):
            time.sleep(0.1)
            raise ValueError("boom")
    except ValueError:
        pass
    assert "working …  stopped after 0." in out.getvalue().splitlines()[-1]


def test_progress_line_stays_silent_on_a_short_step_and_off_a_terminal() -> None:
    short = _Tty()
    with progress_line("quick", stream=short, delay=5.0):
        pass
    assert short.getvalue() == ""
    piped = io.StringIO()  # not a terminal
    with progress_line("slow", stream=piped, delay=0.0, tick=0.01):
        time.sleep(0.1)
    assert piped.getvalue() == ""


def _run_on_pty(args: list[str]) -> tuple[int, str, str]:
    """Run ``python -m pytools ARGS`` with stderr on a pty; its stdout and stderr."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "pytools", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    err = bytearray()
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the pty closed with the child
                break
            if not chunk:
                break
            err += chunk
        elif proc.poll() is not None:
            break
    out = proc.stdout.read() if proc.stdout else b""
    code = proc.wait()
    os.close(master)
    return code, out.decode(), err.decode()


@pytest.mark.slow
def test_kernel_summary_shows_a_progress_line_on_a_terminal() -> None:
    code, out, err = _run_on_pty(["kernel", "summary"])  # 5 s idle, more under load
    assert code == 0, err
    assert "kernel summary: playing the workflows …  " in err
    assert err.rstrip().endswith("s") and "done in" in err
    assert out.lstrip().startswith("{")


def test_a_command_prints_no_progress_line_when_stderr_is_not_a_terminal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "PROGRESS_DELAY_S", 0.0)  # it would show at once on a tty
    monkeypatch.setattr(progress, "PROGRESS_TICK_S", 0.01)
    result = CliRunner().invoke(regenerate, ["--check", "tenant-leak"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout.endswith(" generated file(s) up to date\n")
