"""``python -m pytools``: the pipeline's command line (see :mod:`pytools.cli`)."""

from pytools.cli import cli

if __name__ == "__main__":
    cli(prog_name="python -m pytools")
