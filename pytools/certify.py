"""``python -m pytools.certify``: CI's entry point, kept working; the same command as
``pytools certify`` (see :mod:`pytools.publish.cli`)."""

from pytools.publish.cli import certify

if __name__ == "__main__":
    certify(prog_name="python -m pytools.certify")
