"""JSON Schema validation with errors that name the place by JSON pointer (RFC 6901).

The schemas are package data under ``pytools/publish/schemas/`` (Draft 2020-12):

* ``certificate.schema.json``, ``manifest.schema.json``, ``statement.schema.json`` (the
  in-toto statement a signature covers) and ``envelope.schema.json`` (its DSSE envelope);
* ``figures/<result-id>.schema.json``: one per published result, for the certificate's
  ``figures`` object. Adding a result means adding that one file; certify refuses a result
  without one, and verify reports a certificate of an unknown result as a schema violation.

Validation is done by ``jsonschema``; only the *wording* of the errors is ours, so that the
in-page verifier (``site/templates/verifier.js``), which implements the same subset of JSON
Schema, prints the very same lines: ``"<pointer>: <what is wrong>"``, one per problem, sorted,
where the pointer is the place of the problem (for a missing or unexpected property, the
pointer of that property). :data:`KEYWORDS` is the subset both sides implement; a test keeps
the schemas inside it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from importlib.abc import Traversable
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

#: The JSON Schema dialect every schema of this package declares.
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: Where per-result figure schemas live, relative to the schemas folder.
FIGURES_DIR = "figures"

#: The schema keywords this module words errors for, and the in-page verifier implements.
#: Annotation keywords (title, description, $comment, examples) only document.
KEYWORDS = (
    "$schema", "$id", "$defs", "$ref", "$comment", "title", "description", "examples",
    "type", "required", "properties", "additionalProperties", "items", "const", "enum",
    "pattern", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "minimum",
    "maximum",
)

#: The top-level documents a verifier needs (figure schemas come on top).
DOCUMENTS = ("certificate", "manifest", "statement", "envelope")


class SchemaError(ValueError):
    """A document that does not satisfy its JSON Schema; the message names the place."""


def json_pointer(path: Iterable[Any]) -> str:
    """RFC 6901 pointer of a path of keys and indices (``""`` is the whole document)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def json_type(value: Any) -> str:
    """The JSON type of a parsed value, as JSON Schema names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _where(pointer: str) -> str:
    return pointer or "(document)"


def _lines(error: ValidationError, prefix: str) -> list[str]:
    """Our wording of one jsonschema error (several lines for several missing/extra keys)."""
    at = prefix + json_pointer(error.absolute_path)
    kw, value, inst = error.validator, error.validator_value, error.instance
    if kw == "required":
        return [f"{at}/{json_pointer([k])[1:]}: required property is missing"
                for k in value if isinstance(inst, dict) and k not in inst]
    if kw == "additionalProperties":
        allowed = set(error.schema.get("properties", {}))
        return [f"{at}/{json_pointer([k])[1:]}: property not allowed here"
                for k in inst if k not in allowed]
    words = {
        "type": lambda: "expected "
        + " or ".join(value if isinstance(value, list) else [value])
        + f", found {json_type(inst)}",
        "const": lambda: f"must be {_dump(value)}",
        "enum": lambda: f"must be one of {_dump(value)}",
        "pattern": lambda: f"does not match the pattern {_dump(value)}",
        "minLength": lambda: f"shorter than {value} character(s)",
        "maxLength": lambda: f"longer than {value} character(s)",
        "minItems": lambda: f"fewer than {value} item(s)",
        "maxItems": lambda: f"more than {value} item(s)",
        "uniqueItems": lambda: "items are not unique",
        "minimum": lambda: f"less than the minimum {value}",
        "maximum": lambda: f"more than the maximum {value}",
    }
    text = words.get(kw, lambda: f"fails {kw}")()
    return [f"{_where(at)}: {text}"]


def _check_keywords(schema: Any, name: str, under_properties: bool = False) -> None:
    """Refuse a schema that uses a keyword outside :data:`KEYWORDS` (the page could not)."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if not under_properties and key not in KEYWORDS:
                raise ValueError(f"schema {name}: keyword {key!r} is outside the supported subset")
            if key in ("const", "enum", "examples"):
                continue
            _check_keywords(value, name, key in ("properties", "$defs"))
    elif isinstance(schema, list):
        for item in schema:
            _check_keywords(item, name)


@dataclass(frozen=True, eq=False)
class SchemaSet:
    """Named JSON Schemas (``certificate``, ``manifest``, ``figures/<result-id>``, ...)."""

    documents: Mapping[str, Mapping[str, Any]]
    _validators: dict[str, Draft202012Validator] = field(
        default_factory=dict, compare=False, repr=False, hash=False
    )

    def get(self, name: str) -> Mapping[str, Any]:
        try:
            return self.documents[name]
        except KeyError:
            raise KeyError(f"no schema named {name!r}") from None

    def _validator(self, name: str) -> Draft202012Validator:
        if name not in self._validators:
            self._validators[name] = Draft202012Validator(dict(self.get(name)))
        return self._validators[name]

    def figures_schema(self, result: str) -> str | None:
        """The name of the figures schema of ``result``, or None when there is none."""
        name = f"{FIGURES_DIR}/{result}"
        return name if name in self.documents else None

    def figure_results(self) -> tuple[str, ...]:
        """Every result id with a figures schema."""
        prefix = FIGURES_DIR + "/"
        return tuple(sorted(n[len(prefix):] for n in self.documents if n.startswith(prefix)))

    def errors(self, obj: Any, name: str, prefix: str = "") -> list[str]:
        """Every violation, as sorted ``"<pointer>: <problem>"`` lines (none: valid)."""
        lines: set[str] = set()
        for error in self._validator(name).iter_errors(obj):
            lines.update(_lines(error, prefix))
        return sorted(lines)

    def certificate_errors(self, cert: Any) -> list[str]:
        """The certificate schema, then the figures schema of the certificate's result."""
        errors = self.errors(cert, "certificate")
        if not isinstance(cert, dict) or not isinstance(cert.get("result"), str):
            return errors
        figures_name = self.figures_schema(cert["result"])
        if figures_name is None:
            known = ", ".join(self.figure_results()) or "none"
            errors.append(f"/result: no figures schema for result {_dump(cert['result'])} "
                          f"(known: {known})")
        elif "figures" in cert:
            errors += self.errors(cert["figures"], figures_name, "/figures")
        return sorted(set(errors))

    def validate(self, obj: Any, name: str) -> None:
        """Raise :class:`SchemaError` naming the first violation."""
        errors = self.certificate_errors(obj) if name == "certificate" else self.errors(obj, name)
        if errors:
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise SchemaError(f"{name} schema: {errors[0]}{more}")

    def with_documents(self, extra: Mapping[str, Mapping[str, Any]]) -> SchemaSet:
        """A copy with ``extra`` schemas added or replaced (each checked)."""
        for name, schema in extra.items():
            _check(schema, name)
        return SchemaSet({**self.documents, **extra})

    def for_page(self) -> dict[str, Any]:
        """Every schema, for the in-page verifier."""
        return {name: self.documents[name] for name in sorted(self.documents)}


def _check(schema: Mapping[str, Any], name: str) -> None:
    if schema.get("$schema") != SCHEMA_DIALECT:
        raise ValueError(f"schema {name}: $schema must be {SCHEMA_DIALECT}")
    Draft202012Validator.check_schema(dict(schema))
    _check_keywords(schema, name)


def _read(folder: Traversable, name: str) -> dict[str, Any]:
    path = folder.joinpath(f"{name}.schema.json")
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"schema {path}: unreadable: {exc}") from None
    _check(schema, name)
    return schema


@functools.cache
def package_schemas() -> SchemaSet:
    """Every schema shipped in ``pytools/publish/schemas`` (figures schemas included)."""
    folder = resources.files("pytools.publish").joinpath("schemas")
    docs = {name: _read(folder, name) for name in DOCUMENTS}
    figures = folder.joinpath(FIGURES_DIR)
    for entry in sorted(figures.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".schema.json"):
            rid = entry.name[: -len(".schema.json")]
            docs[f"{FIGURES_DIR}/{rid}"] = _read(figures, rid)
    return SchemaSet(docs)


def load_schema(name: str) -> dict[str, Any]:
    """The package schema ``name`` (e.g. ``"certificate"``, ``"figures/isolation-floor"``)."""
    return dict(package_schemas().get(name))


def schema_errors(obj: Any, schema_name: str) -> list[str]:
    """Every violation of package schema ``schema_name`` by ``obj`` (see :class:`SchemaSet`)."""
    schemas = package_schemas()
    if schema_name == "certificate":
        return schemas.certificate_errors(obj)
    return schemas.errors(obj, schema_name)


def validate(obj: Any, schema_name: str) -> None:
    """Raise :class:`SchemaError` if ``obj`` violates package schema ``schema_name``."""
    package_schemas().validate(obj, schema_name)
