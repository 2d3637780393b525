"""Build, audit, certify and verify the `Proofs` Lean library.

Pipeline stages, one module each: :mod:`pytools.toolchain` (find a Lean),
:mod:`pytools.build` (compile the library), :mod:`pytools.audit` (enumerate and audit every
declaration from the compiled `.olean` files), :mod:`pytools.certify` (emit hashed
certificates and a manifest) and :mod:`pytools.verify` (check a certificate offline).
"""

__version__ = "0.1.0"
