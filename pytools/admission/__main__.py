"""``python -m pytools.admission`` (see :mod:`pytools.admission.cli`)."""

from pytools.admission.cli import main

if __name__ == "__main__":
    main()
