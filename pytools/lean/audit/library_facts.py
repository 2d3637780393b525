"""The facts the audit's rules judge (:mod:`.rules`): records filled by the reader side of the
package from the compiled library, and read by the rules alone."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .facts import ModuleFacts
from .instance_args import InstanceUse
from .names import StatementAtoms


@dataclass(frozen=True)
class AxiomFacts:
    """Where an axiom that some declaration reaches comes from. ``in_core``: read from the
    toolchain's verified core library; ``in_project``: declared by an audited module."""

    name: str
    module: str
    in_core: bool
    in_project: bool
    type_sha256: str


@dataclass(frozen=True)
class InstanceFacts:
    """A library declaration that is an instance, registered (``instance``) or not (``local
    instance``, a definition whose type is a class): its class, whether its type mentions
    any constant of the library, and ``keyed_core``: whether the key Lean files it under (its
    discrimination-tree path) names only core constants, a core class among them."""

    declaration: str
    module: str
    class_name: str
    mentions_library: bool
    registered: bool
    keyed_core: bool = False


#: A declaration of the library: (module, name). Names alone are not identities: two modules
#: can declare the same name (rule ``duplicate-name``), and each copy is judged.
Key = tuple[str, str]


@dataclass(frozen=True)
class LibraryFacts:
    """Everything the rules read. ``declared_in``: library name -> the modules declaring it;
    ``reached``: library declaration -> the axioms it depends on, each with where it was
    read from (two axioms of one name are two axioms); ``core_names``: every name of
    the core library, None when no core library was given; ``root_closure``: modules the root
    imports transitively (itself included); ``sources``: (file, text) of the library's
    sources and build files; ``uses``: library declaration -> the names of the library
    declarations it depends on, transitively (through types, values and proofs);
    ``instance_uses``: instance arguments of core classes at core types, in the library's
    statements and definitions, that are not core's (:mod:`.instance_args`);
    ``statement_text``: user-facing theorem -> why Lean does not elaborate its printed
    statement back to its type (:mod:`.text`), None when that check did not run; ``atoms``:
    the binder names and string literals of every library declaration's type (:mod:`.names`).
    Names are :class:`~pytools.lean.olean.Name` or their printed text: two are the same
    name exactly when their texts are equal."""

    modules: tuple[ModuleFacts, ...]
    declared_in: Mapping[str, tuple[str, ...]]
    reached: Mapping[Key, frozenset[AxiomFacts]]
    core_names: frozenset[str] | None
    root: str | None = None
    root_closure: frozenset[str] = frozenset()
    instances: tuple[InstanceFacts, ...] = ()
    sources: tuple[tuple[str, str], ...] = ()
    uses: Mapping[Key, frozenset[str]] = field(default_factory=dict)
    instance_uses: tuple[InstanceUse, ...] = ()
    statement_text: Mapping[Key, str] | None = None
    atoms: tuple[StatementAtoms, ...] = ()
