"""``python -m pytools.certify``: the entry point kept for ``python -m`` (see
:mod:`pytools.publish.certify`)."""

from pytools.publish.certify import main

if __name__ == "__main__":
    main()
