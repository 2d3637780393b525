"""``python -m pytools.traces``: the entry point kept for ``python -m`` (see
:mod:`pytools.results.ceiling.cli`)."""

from pytools.results.ceiling.cli import main

if __name__ == "__main__":
    main()
