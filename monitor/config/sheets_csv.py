"""``sheets_file``: spreadsheets listed in a CSV next to the config, one per row.

The header row names the columns (``id`` and ``profile`` required; ``name``, ``tags`` and ``owner`` optional);
blank lines and lines starting with ``#`` are skipped. Problems are reported at the CSV's own line.
CSV rows have no inline checks: a profile gives each its checks.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable
from pathlib import Path

from monitor.core.invalid_value import InvalidValue

from .fields import spreadsheet_id
from .issues import ConfigIssue, Loc
from .reworded import choices_fix
from .sheets import Entry

CSV_TAG_SEPARATOR = ";"  # ',' separates CSV columns; ';' is what spreadsheet exports use in a cell
_CSV_COLUMNS = ("id", "name", "profile", "tags", "owner")


def read_sheets_csv(raw: object, base_dir: Path, config_shown: str,
                    add: Callable[[Loc, str, str], None], issues: list[ConfigIssue]) -> list[Entry]:
    """The entries of the file ``sheets_file = raw`` names (relative to ``base_dir``).

    A bad value or an unreadable file is reported through ``add`` (at the key in the config file);
    problems inside the CSV go to ``issues`` with the CSV's path as the config shows it.
    """
    loc: Loc = ("sheets_file",)
    if not isinstance(raw, str) or not raw.strip():
        add(loc, "sheets_file must be a file path", 'write sheets_file = "sheets.csv"')
        return []
    csv_path = base_dir / raw
    shown = os.path.normpath(os.path.join(os.path.dirname(config_shown), raw))
    try:
        text = csv_path.read_text(encoding="utf-8-sig")  # Excel writes a BOM
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8, or a NUL in the path
        reason = "not found" if isinstance(exc, FileNotFoundError) else f"unreadable ({exc})"
        add(loc, f"sheets file {str(csv_path)!r} is {reason}",
            "check the path (relative to the config file's folder) and that it is UTF-8")
        return []
    return _CsvSheets(issues, shown).parse(text)


class _CsvSheets:
    def __init__(self, issues: list[ConfigIssue], shown: str) -> None:
        self.issues = issues
        self.shown = shown

    def issue(self, line: int, column: str, problem: str, fix: str) -> None:
        self.issues.append(ConfigIssue(f"{self.shown}:{line}", column, problem, fix))

    def parse(self, text: str) -> list[Entry]:
        reader = csv.reader(io.StringIO(text))
        header: list[str] | None = None
        columns: dict[str, int] = {}
        entries: list[Entry] = []
        for row in reader:
            line = reader.line_num
            if not "".join(row).strip() or row[0].lstrip().startswith("#"):
                continue  # blank lines and comment lines are allowed
            if header is None:
                header = [cell.strip().lower() for cell in row]
                if not self.header_ok(header, line):
                    return []
                columns = {column: index for index, column in enumerate(header)}  # the last one wins
                continue
            entry = self.row(row, columns, len(row) > len(header), line)
            if entry is not None:
                entries.append(entry)
        return entries

    def header_ok(self, header: list[str], line: int) -> bool:
        ok = True
        for column in header:
            if column not in _CSV_COLUMNS:
                self.issue(line, column, f"unknown column {column!r}",
                           choices_fix(column, _CSV_COLUMNS, what="column"))
                ok = False
        for column in ("id", "profile"):
            if column not in header:
                self.issue(line, column, f"the header row has no {column!r} column",
                           "start the file with the header row: id,name,profile,tags")
                ok = False
        return ok

    def row(self, row: list[str], columns: dict[str, int], too_long: bool, line: int) -> Entry | None:
        if too_long:
            self.issue(line, "", "more cells than header columns",
                       f"quote names that contain commas, and separate tags with "
                       f"'{CSV_TAG_SEPARATOR}'")
            return None

        def cell(column: str) -> str:  # a short row leaves its last columns empty
            index = columns.get(column)
            return row[index].strip() if index is not None and index < len(row) else ""

        try:
            sheet_id = spreadsheet_id(cell("id"))
        except InvalidValue as exc:
            self.issue(line, "id", exc.problem, exc.fix)
            return None
        profile = cell("profile")
        if not profile:
            self.issue(line, "profile", "empty profile", "name the profile of checks to apply")
            return None
        tags = tuple(t.strip() for t in cell("tags").split(CSV_TAG_SEPARATOR) if t.strip())
        where = f"{self.shown}:{line}"
        owner = cell("owner") or None
        if owner is not None and len(owner) > 64:
            self.issue(line, "owner", f"owner {owner[:20]!r}... is longer than 64 characters",
                       "write a name or a Telegram @username")
            return None
        return Entry(sheet_id, cell("name") or None, profile, tags, (), lambda column: (where, column), owner)
