"""``python -m pytools.leak``: the entry point kept for ``python -m`` (see
:mod:`pytools.results.leak.cli`)."""

from pytools.results.leak.cli import main

if __name__ == "__main__":
    main()
