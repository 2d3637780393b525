"""Read Lean 4 ``.olean`` files (compacted regions) in pure Python, without running Lean.

:mod:`.region` maps the file(s) of one module and gives raw access to its runtime objects;
:mod:`.terms` holds the decoded records (levels, expressions, constants); :mod:`.module`
decodes Lean data (``ModuleData``, names, terms, constants, extension entries) on top;
:mod:`.names` is Lean's ``Name`` (string and number components) and how it prints.
"""

from .module import Module, load
from .names import Name, dotted, name_bytes, name_text
from .region import PART_SUFFIXES, OleanError, OleanHeader, read_header
from .terms import BINDER_INFOS, CONSTANT_KINDS, ConstantInfo, Expr, ImportRecord, Level

__all__ = [
    "BINDER_INFOS", "CONSTANT_KINDS", "PART_SUFFIXES", "ConstantInfo", "Expr", "ImportRecord",
    "Level",
    "Module", "Name", "OleanError", "OleanHeader", "dotted", "load", "name_bytes", "name_text",
    "read_header",
]
