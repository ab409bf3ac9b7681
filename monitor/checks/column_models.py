"""What the column-aware check models share (headers, missing, duplicates, invalid: their kinds are
in ``monitor.checks.kinds``): a table read whole, and a count of its rows against warn/fail levels.

Each reads its whole table (``range``) in the spreadsheet's one batchGet and names its columns by
header text (with ``header_row``) or by letter (without); see ``columns``. Everything an admin can
get wrong is refused at load time, with a problem and a fix: a header named without a header row, a
header row outside the range, a level written as a bare number or as "5%"; each kind refuses its own
(an unknown format, a regex that does not compile).

A check written without a name is named "<kind> <columns> <range>", e.g. "missing Qty Stock!A1:Z".
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, field_validator, model_validator

from monitor.core.a1 import column_index
from monitor.core.invalid_value import InvalidValue

from .base import CheckBase
from .columns import is_column_letter
from .fields import A1Text, WhereField
from .rates import Rate, RateField, parse_rate
from .result import Status


def column_check_name(kind: object, columns: object, range_text: object) -> str:
    """The name of a column check written without one."""
    if isinstance(columns, (list, tuple)):
        columns = "+".join(str(column) for column in columns)
    return " ".join(str(part) for part in (kind, columns, range_text) if part)


def _columns_of(data: dict[str, Any]) -> object:
    return data.get("column") or data.get("columns")


def header_names(value: object, key: str) -> tuple[str, ...]:
    """A list of header texts as written: non-empty strings, kept as written."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InvalidValue(f"{key} must be a list of header texts, got {value!r}",
                           f'write e.g. {key} = ["SKU", "Qty"]')
    return tuple(value)


class TableCheck(CheckBase):
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
    def _header_row_in_range(self) -> TableCheck:
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


class ColumnCheck(TableCheck):
    """A count of rows over one column (or key columns) with warn/fail levels, "> 0" by default;
    ``where`` keeps it to the table's rows whose other columns match (found in the table itself)."""

    filters_in_table: ClassVar[bool] = True
    missing_values: tuple[str, ...] = ()
    warn: RateField | None = None
    fail: RateField | None = None
    where: WhereField | None = None

    @model_validator(mode="after")
    def _filter_columns(self) -> ColumnCheck:
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
