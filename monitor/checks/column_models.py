"""The column-aware check models: headers, missing, duplicates, invalid.

Each reads its whole table (``range``) in the spreadsheet's one batchGet and names its columns by
header text (with ``header_row``) or by letter (without); see ``columns``. Everything an admin can
get wrong is refused here, at load time, with a problem and a fix: a header named without a header
row, a header row outside the range, an unknown format, a regex that does not compile, a level
written as a bare number or as "5%".

A check written without a name is named "<kind> <columns> <range>", e.g. "missing Qty Stock!A1:Z".
"""

from __future__ import annotations

import difflib
import re
from typing import Any, ClassVar, Literal

from pydantic import Field, field_serializer, field_validator, model_validator

from monitor.core.a1 import column_index
from monitor.core.invalid import InvalidValue

from . import column_explain
from .columns import is_column_letter
from .fields import A1Text, WhereField
from .formats import FORMATS
from .models import _CheckBase  # models imports this module back: see its note
from .rates import Rate, RateField, parse_rate
from .result import Status


def column_check_name(kind: object, columns: object, range_text: object) -> str:
    """The name of a column check written without one."""
    if isinstance(columns, (list, tuple)):
        columns = "+".join(str(column) for column in columns)
    return " ".join(str(part) for part in (kind, columns, range_text) if part)


def _columns_of(data: dict[str, Any]) -> object:
    return data.get("column") or data.get("columns")


def _names(value: object, key: str) -> tuple[str, ...]:
    """A list of header texts as written: non-empty strings, kept as written."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InvalidValue(f"{key} must be a list of header texts, got {value!r}",
                           f'write e.g. {key} = ["SKU", "Qty"]')
    return tuple(value)


class _TableCheck(_CheckBase):
    """A check over a table: ``range`` is read whole; ``header_row`` is the sheet row of its headers."""

    range: A1Text
    header_row: int | None = Field(default=None, ge=1)
    judges_rows: ClassVar[bool] = True  # a range holding only the header row is an error

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("name"):
            kind = data.get("kind") or cls.model_fields["kind"].default
            data = {**data, "name": column_check_name(kind, _columns_of(data), data.get("range"))}
        return data

    @model_validator(mode="after")
    def _header_row_in_range(self) -> _TableCheck:
        a1, row = self.a1, self.header_row
        if a1 is None or row is None:
            return self
        if a1.start_row is not None and row < a1.start_row:
            raise InvalidValue(f"header_row {row} is above {self.range}, which starts at row {a1.start_row}",
                               f"start the range at row {row}, or set header_row = {a1.start_row}")
        if a1.end_row is not None and row > a1.end_row:
            raise InvalidValue(f"header_row {row} is below {self.range}, which ends at row {a1.end_row}",
                               f"end the range below row {row}, or set header_row = N inside the range")
        if a1.end_row == row and self.judges_rows:
            raise InvalidValue(f"header_row {row} leaves no data rows in {self.range}",
                               "end the range below the header row, or leave its end open, e.g. Tab!A1:Z")
        return self

    def _check_column(self, name: str, key: str) -> None:
        """A column reference that cannot work with this table is refused now, not at every read."""
        if self.header_row is not None:
            return
        if not is_column_letter(name):
            raise InvalidValue(f"{key} {name!r} names a header, but the check has no header_row",
                               "add header_row = N (the sheet row holding the headers, e.g. 1), "
                               'or name the column by its letter in capitals, e.g. "F"')
        a1, col = self.a1, column_index(name.strip())
        if a1 is not None and ((a1.start_col or 1) > col or (a1.end_col is not None and col > a1.end_col)):
            raise InvalidValue(f"{key} {name.strip()} is outside {self.range}",
                               "widen the range to include that column; if it is a header's text, "
                               "add header_row = N (the sheet row holding the headers)")

    def as_written(self) -> dict[str, Any]:
        written = self.model_dump(mode="json", exclude_defaults=True, exclude={"name", "kind"})
        written = {key: value for key, value in written.items() if value != {}}  # positions unset
        if self.name != column_check_name(self.kind, _columns_of(written), self.range):
            written["name"] = self.name
        return {"kind": self.kind, **written}


class HeadersCheck(_TableCheck):
    """The header row itself: ``required`` present, ``forbidden`` absent, ``order`` kept (those
    headers left to right, others may stand between), ``positions`` (header -> column letter)."""

    kind: Literal["headers"] = "headers"
    header_row: int = Field(ge=1)
    judges_rows: ClassVar[bool] = False  # "Stock!1:1" is enough
    required: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    positions: tuple[tuple[str, str], ...] = ()

    @field_validator("required", "forbidden", "order", mode="before")
    @classmethod
    def _header_lists(cls, value: object, info: Any) -> tuple[str, ...]:
        return _names(value, info.field_name)

    @field_validator("positions", mode="before")
    @classmethod
    def _positions(cls, value: object) -> tuple[tuple[str, str], ...]:
        if isinstance(value, tuple):
            value = dict(value)
        fix = 'write e.g. positions = { SKU = "A", Qty = "F" } (header = column letter)'
        if not isinstance(value, dict) or not value:
            raise InvalidValue(f"positions must be a table of header = column letter, got {value!r}", fix)
        for header, letter in value.items():
            if not isinstance(letter, str) or not is_column_letter(letter.strip().upper()):
                raise InvalidValue(f"position of {header!r} is {letter!r}, not a column letter", fix)
        return tuple((header, letter.strip().upper()) for header, letter in value.items())

    @field_serializer("positions")
    def _positions_as_table(self, positions: tuple[tuple[str, str], ...]) -> dict[str, str]:
        return dict(positions)

    def explain(self) -> str:
        verb = "warns" if getattr(self, "severity", "fail") == "warn" else "fails"
        row = f"{self.range} row {self.header_row}"
        return f"{verb} when {row} {column_explain.header_problems(self)}"

    @model_validator(mode="after")
    def _something_to_check(self) -> HeadersCheck:
        if not (self.required or self.forbidden or self.order or self.positions):
            raise InvalidValue("headers needs something to check",
                               'add required = ["SKU", "Qty"], forbidden = [...], order = [...] '
                               'or positions = { SKU = "A" }')
        both = set(self.required) & set(self.forbidden)
        if both:
            raise InvalidValue(f"{', '.join(sorted(both))} both required and forbidden",
                               "keep each header in one of the two lists")
        return self


class _ColumnCheck(_TableCheck):
    """A count of rows over one column (or key columns) with warn/fail levels, "> 0" by default;
    ``where`` keeps it to the table's rows whose other columns match (found in the table itself)."""

    filters_in_table: ClassVar[bool] = True
    missing_values: tuple[str, ...] = ()
    warn: RateField | None = None
    fail: RateField | None = None
    where: WhereField | None = None

    @model_validator(mode="after")
    def _filter_columns(self) -> _ColumnCheck:
        """The filter's columns are found in the table as the check's own are: refused now, not at
        every read, when they cannot be (a header without a header row, a letter outside the range)."""
        for name in self.where.columns if self.where is not None else ():
            self._check_column(name, "where")
        return self

    @field_validator("missing_values", mode="before")
    @classmethod
    def _missing_values(cls, value: object) -> tuple[str, ...]:
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise InvalidValue(f"missing_values must be a list of texts, got {value!r}",
                               'write e.g. missing_values = ["-", "n/a"] (blank cells are always missing)')
        return tuple(value)

    @property
    def levels(self) -> tuple[tuple[Status, Rate], ...]:
        """(status, rate) to test in order, fail first; with neither written, any row fails."""
        if self.warn is None and self.fail is None:
            return (("fail", parse_rate("> 0")),)
        return tuple((status, rate) for status, rate in (("fail", self.fail), ("warn", self.warn))
                     if rate is not None)

    @property
    def missing_texts(self) -> frozenset[str]:
        return frozenset(" ".join(text.split()).casefold() for text in self.missing_values)


class MissingCheck(_ColumnCheck):
    kind: Literal["missing"] = "missing"
    column: str

    def explain(self) -> str:
        subject = f"{self.column} of {self.range} is {column_explain.missing_words(self)}"
        return column_explain.sentence(self, subject)

    @model_validator(mode="after")
    def _column_usable(self) -> MissingCheck:
        self._check_column(self.column, "column")
        return self


class DuplicatesCheck(_ColumnCheck):
    """Rows whose key (one column, or several together) repeats an earlier row's key."""

    kind: Literal["duplicates"] = "duplicates"
    column: str | None = None
    columns: tuple[str, ...] = ()

    @field_validator("columns", mode="before")
    @classmethod
    def _key_columns(cls, value: object) -> tuple[str, ...]:
        return _names(value, "columns")

    @model_validator(mode="after")
    def _one_key(self) -> DuplicatesCheck:
        if (self.column is None) == (not self.columns):
            raise InvalidValue("duplicates needs its key: column or columns, not both",
                               'write column = "SKU", or columns = ["SKU", "Warehouse"] for a key of several')
        for name in self.key_columns:
            self._check_column(name, "column")
        return self

    @property
    def key_columns(self) -> tuple[str, ...]:
        return (self.column,) if self.column is not None else self.columns

    def explain(self) -> str:
        key = " + ".join(self.key_columns)
        return column_explain.sentence(self, f"{key} of {self.range} repeats an earlier row's")


class InvalidCheck(_ColumnCheck):
    """Values that break a rule: a list of valid values, a regex the whole value matches, a format,
    min/max (numbers), min_length/max_length (characters). Missing values are not judged here."""

    kind: Literal["invalid"] = "invalid"
    column: str
    valid_values: tuple[str | int | float, ...] = ()
    regex: str | None = None
    format: str | None = None
    min: int | float | None = None
    max: int | float | None = None
    min_length: int | None = Field(default=None, ge=0)
    max_length: int | None = Field(default=None, ge=1)

    def explain(self) -> str:
        rules = column_explain.invalid_rules(self)
        return column_explain.sentence(self, f"{self.column} of {self.range} {rules}")

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise InvalidValue(f"regex {value!r} does not compile: {exc}",
                                   "write a Python regular expression the whole value must match, "
                                   r'e.g. regex = "SKU-\\d{4}" (in TOML, double the backslashes)'
                                   ) from None
        return value

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str | None) -> str | None:
        if value is not None and value not in FORMATS:
            close = difflib.get_close_matches(str(value), FORMATS, n=1)
            hint = f'did you mean "{close[0]}"? ' if close else ""
            raise InvalidValue(f"unknown format {value!r}",
                               f"{hint}write one of: {', '.join(FORMATS)}")
        return value

    @model_validator(mode="after")
    def _some_rule(self) -> InvalidCheck:
        self._check_column(self.column, "column")
        rules = (self.valid_values, self.regex, self.format, self.min, self.max, self.min_length,
                 self.max_length)
        if not any(rule not in (None, ()) for rule in rules):
            raise InvalidValue("invalid needs a rule", 'add valid_values = [...], regex = "...", '
                               'format = "email", min/max or min_length/max_length')
        for low, high in (("min", "max"), ("min_length", "max_length")):
            if getattr(self, low) is not None and getattr(self, high) is not None \
                    and getattr(self, low) > getattr(self, high):
                raise InvalidValue(f"{low} ({getattr(self, low)}) is greater than {high} "
                                   f"({getattr(self, high)})", "swap them")
        return self
