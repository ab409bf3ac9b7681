"""The config file's JSON Schema, generated from the models that validate it, for editors (taplo,
Even Better TOML) to flag an unknown key, a misspelt check kind or a value of the wrong form while
the file is written.

It describes the file as written: each section's model but the fields the loader fills itself (the
bot token, each key's project), the tables of profiles, spreadsheets and maintenance windows, and
each check kind's model, told apart by ``kind`` (which a written check must name; its ``name`` has a
default). What needs more than one value at a time (a profile that exists, a key file that loads, a
route's chat) is left to the loader: the schema may accept a file that ``check-config`` refuses,
saying why. It holds each value to its documented type, so of the files the loader takes it flags
only values written as another type that pydantic converts (``listen = "yes"``).
``docs/monitor.schema.json`` is this schema, printed by ``sheet-monitor config-schema``.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, models_json_schema
from pydantic_core import core_schema

from monitor.checks import CHECK_KINDS

from .folders import FolderTable
from .maintenance import MaintenanceTable
from .sections import SECTIONS
from .sheets import ProfileTable, SheetTable

DIALECT = "https://json-schema.org/draft/2020-12/schema"
_DEFS = "#/$defs/"


class _WrittenSchema(GenerateJsonSchema):
    """Pydantic's generator, in validation mode, without the fields marked ``exclude``: those the
    loader fills (``config.reworded.filled_by_loader``), which the file never holds."""

    def field_is_present(self, field: core_schema.ModelField) -> bool:  # type: ignore[override]
        return not field.get("serialization_exclude") and super().field_is_present(field)


def config_schema() -> dict[str, Any]:
    """The JSON Schema of a ``monitor.toml``."""
    tables: list[type[BaseModel]] = [*SECTIONS.values(), ProfileTable, SheetTable, FolderTable,
                                     MaintenanceTable, *CHECK_KINDS.values()]
    refs, top = models_json_schema([(model, "validation") for model in tables],
                                   schema_generator=_WrittenSchema, ref_template=_DEFS + "{model}")
    defs = top["$defs"]
    ref = {model: refs[(model, "validation")]["$ref"] for model in tables}

    for model in CHECK_KINDS.values():
        written = defs[_name(ref[model])]
        # The loader asks a check for its kind first ("check has no kind"); a name is optional.
        written["required"] = ["kind", *(key for key in written.get("required", ()) if key not in
                                         ("kind", "name"))]
    # Its kind first, then the kind's model: an editor tells "'treshold' is not one of ..." or
    # "'colour' was unexpected" rather than that a check matches none of twelve models.
    defs["Check"] = {
        "description": "One check; its kind says which keys it takes (docs/configuration.md, \"Checks\").",
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": list(CHECK_KINDS)}},
        "allOf": [{"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
                   "then": {"$ref": ref[model]}} for kind, model in CHECK_KINDS.items()],
    }
    checks = {"type": "array", "items": {"$ref": _DEFS + "Check"},
              "description": 'the checks, each with its kind: { kind = "not_empty", range = "Tab!A2:A" }'}
    for table in (ProfileTable, SheetTable):
        defs[_name(ref[table])]["properties"]["checks"] = checks

    return {
        "$schema": DIALECT,
        "title": "sheet-monitor config (monitor.toml)",
        "description": "Generated from the config's models by `sheet-monitor config-schema`; every key is "
                       "in docs/configuration.md.",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            **{name: {"$ref": ref[model]} for name, model in SECTIONS.items()},
            "profiles": {"type": "object", "additionalProperties": {"$ref": ref[ProfileTable]},
                         "description": "[profiles.NAME]: the checks of the spreadsheets that name it"},
            "sheets": {"type": "array", "items": {"$ref": ref[SheetTable]},
                       "description": "[[sheets]]: one table per spreadsheet"},
            "sheets_file": {"type": "string",
                            "description": "a CSV of spreadsheets (id,name,profile,tags), beside this file"},
            "folders": {"type": "array", "items": {"$ref": ref[FolderTable]},
                        "description": "[[folders]]: Drive folders whose every spreadsheet is monitored"},
            "maintenance": {"type": "array", "items": {"$ref": ref[MaintenanceTable]},
                            "description": "[[maintenance]]: windows in which alerts are held"},
        },
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    """The schema as committed in docs/monitor.schema.json: indented, keys in a stable order."""
    return json.dumps(config_schema(), indent=2, ensure_ascii=False) + "\n"


def _name(ref: str) -> str:
    return ref.removeprefix(_DEFS)
