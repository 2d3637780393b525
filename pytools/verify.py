"""``python -m pytools.verify``: the entry point kept for ``python -m`` (see
:mod:`pytools.publish.verify`)."""

from pytools.publish.verify import main

if __name__ == "__main__":
    main()
