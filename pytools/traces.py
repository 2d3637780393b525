"""``python -m pytools.traces``: kept working as the old name of ``pytools ceiling`` (see
:mod:`pytools.results.ceiling.cli`; ``pytools traces`` is its hidden alias)."""

from pytools.results.ceiling.cli import main

if __name__ == "__main__":
    main()
