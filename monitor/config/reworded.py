"""Pydantic's validation errors, reworded for an admin editing TOML: a key path, a problem, a fix.

A validator that knows better raises ``InvalidValue``; its problem and fix are used as they are.
Everything else (unknown keys, missing keys, wrong types, values out of range) is explained here.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from monitor.core.invalid_value import InvalidValue

from .issues import Loc
from .sections import TOP_KEYS

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")  # written without quotes in a key path


def key_path(loc: Loc) -> str:
    """('profiles', 'stock', 'checks', 2, 'range') -> "profiles.stock.checks[2].range"."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = part if _BARE_KEY.fullmatch(part) else json.dumps(part)
            out += f".{text}" if out else text
    return out


def choices_fix(given: str, choices: Sequence[str], what: str = "key") -> str:
    """'did you mean ...? allowed keys: ...': the closest choice first, then all of them."""
    if not choices:
        return f"no {what}s are defined yet"
    close = difflib.get_close_matches(given, choices, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"{hint}allowed {what}s: {', '.join(choices)}"


def filled_by_loader(model: type[BaseModel]) -> set[str]:
    """Fields the loader fills (the bot token, each credential's project), marked ``exclude``: they
    are never written in the file."""
    return {name for name, field in model.model_fields.items() if field.exclude}


def written_keys(model: type[BaseModel]) -> tuple[str, ...]:
    """The keys an admin may write in the model's table, in declaration order."""
    return tuple(f.alias or n for n, f in model.model_fields.items() if not f.exclude)


def explain(model: type[BaseModel], error: Mapping[str, Any]) -> tuple[str, str]:
    """A pydantic error -> (problem, fix) worded for an admin editing TOML."""
    kind = error["type"]
    name = str(error["loc"][-1]) if error["loc"] else ""
    original = (error.get("ctx") or {}).get("error")
    if isinstance(original, InvalidValue):
        return original.problem, original.fix
    allowed = written_keys(model)
    if kind == "extra_forbidden":
        if name in TOP_KEYS and len(error["loc"]) == 1:
            return (f"{name!r} ended up inside this section",
                    f"move {name} to the top of the file, before the first [section]")
        return f"unknown key {name!r}", choices_fix(name, allowed)
    if kind == "missing":
        field = model.model_fields.get(name)
        hint = f" ({field.description})" if field is not None and field.description else ""
        return f"missing required key {name!r}", f"add {name} = ...{hint}"
    if kind == "literal_error":
        return (f"{error.get('input')!r} is not allowed",
                f"use one of: {error['ctx']['expected']}")
    value = error.get("input")
    return f"{error['msg'][0].lower()}{error['msg'][1:]} (got {value!r})", _type_fix(kind, error)


def _type_fix(kind: str, error: Mapping[str, Any]) -> str:
    ctx = error.get("ctx") or {}
    if kind in ("greater_than", "greater_than_equal"):
        least = ctx["gt"] + 1 if "gt" in ctx else ctx.get("ge")
        return f"write a whole number of at least {least}"
    if kind in ("less_than", "less_than_equal"):
        most = ctx["lt"] - 1 if "lt" in ctx else ctx.get("le")
        return f"write a whole number of at most {most}"
    if kind.startswith("int"):
        return "write a whole number without quotes, e.g. 60"
    if kind.startswith("bool"):
        return "write true or false, without quotes"
    if kind.startswith("string"):
        return 'write a string in double quotes, e.g. "Store 014"'
    if kind.startswith(("tuple", "list")):
        return 'write a list, e.g. ["a", "b"]'
    return "see docs/configuration.md for the accepted values"
