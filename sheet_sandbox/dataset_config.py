"""A monitor config that checks a dataset: the stock profile's checks and the TOML (and CSV) written.

The checks are the monitor's own models (``monitor.checks``), written back in the form an admin
would write them (``as_written``: defaults and default names left out); docs/configuration.md
describes the format.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from monitor import checks
from monitor.core.a1 import quote_sheet_name
from monitor.core.wording import counted

from .dataset_files import first_tab
from .dataset_generate import (
    CATALOGUE_TAB,
    CATALOGUE_TITLE,
    CHECKED_LAST_ROW,
    GIVEN_PROFILE,
    PRICE_CEILING,
    QUANTITY_CEILING,
    REORDER_LEVELS,
    STOCK_TAB,
    WATCHED_SUPPLIER,
    Dataset,
    SheetEntry,
)

SHEETS_CSV = "sheets.csv"
PROFILE = "stock"
CATALOGUE_PROFILE = "catalogue"
# A run's time box, under the 5-minute cron interval (the default round_interval), written out (it is
# also the default) so that the config it writes shows what its runs' cron line needs.
BUDGET = "4m30s"


def stock_profile(catalogue: bool = True) -> list[checks.Check]:
    """The checks every generated store is configured with; ``catalogue``: the dataset holds the head
    office's catalogue, which the last check compares each store's SKUs with (a config may name
    only spreadsheets it monitors, and a dataset of one spreadsheet has none)."""
    last = CHECKED_LAST_ROW
    table = f"{STOCK_TAB}!A1:H{last}"
    profile = [
        checks.FormulaErrorsCheck(range=table),
        checks.NotEmptyCheck(range=f"{STOCK_TAB}!A2:A{last}", min_rows=1),
        checks.ThresholdCheck(range=f"{STOCK_TAB}!F2:F{last}", aggregate="min", warn="< 5", fail="< 0"),
        checks.FreshnessCheck(range=f"{STOCK_TAB}!E2:E{last}", warn="> 2h", fail="> 1d"),
        # A Stock tab that outgrew the checked rows would hide its newest rows from every check.
        checks.RowCountCheck(range=f"{STOCK_TAB}!A2:A", max=last - 1),
        # One supplier's prices, filtered by the Supplier column (C), read in the same batchGet.
        checks.ThresholdCheck(range=f"{STOCK_TAB}!D2:D{last}", aggregate="avg",
                              where=f"C = '{WATCHED_SUPPLIER}'", fail=f"> {PRICE_CEILING}"),
        # Quantities in the wrong unit are worth a look, not a page: severity warn caps the failure.
        checks.ThresholdCheck(range=f"{STOCK_TAB}!F2:F{last}", aggregate="percentile", percentile=90,
                              fail=f"> {QUANTITY_CEILING}", severity="warn"),
        # By header, over the table formula_errors reads already: one range in the batchGet.
        checks.HeadersCheck(range=table, header_row=1, required=["SKU", "Supplier", "Price", "Quantity"]),
        checks.DuplicatesCheck(range=table, header_row=1, column="SKU"),
        checks.MissingCheck(range=table, header_row=1, column="Supplier", missing_values=["-", "n/a"],
                            warn="> 0", fail="> 5%"),
        checks.InvalidCheck(range=table, header_row=1, column="Price", format="number", min=0),
        checks.InvalidCheck(range=table, header_row=1, column="Reorder level", valid_values=REORDER_LEVELS),
        # Half the rows gone since the previous read: a filter, a sort or a paste gone wrong.
        checks.ChangeCheck(range=f"{STOCK_TAB}!A2:A", fail="< -40"),
        checks.HeadersChangedCheck(range=f"{STOCK_TAB}!1:1"),
    ]
    if catalogue:  # every SKU a store holds is one the head office sells
        profile.append(checks.CrossSheetCheck(range=f"{STOCK_TAB}!A2:A", other=CATALOGUE_TITLE,
                                              other_range=f"{CATALOGUE_TAB}!A2:A", match="keys"))
    return profile


def catalogue_profile() -> list[checks.Check]:
    """The checks of the head office's catalogue, the stores' cross-sheet check's other side."""
    return [checks.NotEmptyCheck(range=f"{CATALOGUE_TAB}!A2:A", min_rows=1)]


def basic_profile(tab: str) -> list[checks.Check]:
    """The checks of a hand-written spreadsheet, whose layout only its author knows: ones that fit
    any table, on its first tab ``tab``: no formula errors, and a row below the header."""
    quoted = quote_sheet_name(tab)
    return [checks.FormulaErrorsCheck(range=f"{quoted}!A1:Z"),
            checks.NotEmptyCheck(range=f"{quoted}!A2:A", min_rows=1)]


def profiles_for(dataset: Dataset) -> dict[str, list[checks.Check]]:
    """The profiles the dataset's spreadsheets name, each with its checks: the stores' and the
    catalogue's, and a basic profile per first tab of hand-written spreadsheets (``dataset_files``).
    Raises ValueError for a profile no spreadsheet of a dataset can have."""
    used = dict.fromkeys(entry.profile for entry in dataset.sheets)
    profiles = {}
    for name in used:
        if name == PROFILE:
            profiles[name] = stock_profile(catalogue=CATALOGUE_PROFILE in used)
        elif name == CATALOGUE_PROFILE:
            profiles[name] = catalogue_profile()
        elif name == GIVEN_PROFILE or name.startswith(f"{GIVEN_PROFILE}-"):
            entry = next(entry for entry in dataset.sheets if entry.profile == name)
            tab = first_tab(dataset.payloads.get(entry.id, {}))
            if tab is None:
                raise ValueError(f"spreadsheet {entry.id} has no tab to check")
            profiles[name] = basic_profile(tab)
        else:
            raise ValueError(f"spreadsheet profile {name!r} is not one a dataset has: {PROFILE}, "
                             f"{CATALOGUE_PROFILE} or {GIVEN_PROFILE}")
    return profiles


def write_config(
    dataset: Dataset,
    path: str | os.PathLike,
    *,
    credentials: Sequence[str | os.PathLike],
    endpoint: str,
    telegram_api_base: str | None = None,
    telegram_chat_id: str | None = None,
    telegram_listen: bool = True,
    read_per_user: int = 60,
    read_per_project: int = 300,
    request_timeout: str | None = None,
    state_dir: str = "state",
    sheets_file_over: int = 100,
    run: Mapping[str, str] | None = None,
) -> Path:
    """Write a monitor config for ``dataset`` to ``path``; returns the path.

    Paths inside (credentials, state_dir, sheets file) are written relative to the config's folder.
    More than ``sheets_file_over`` spreadsheets go to ``sheets.csv`` next to the config
    (columns id,name,profile,tags; one tag each) instead of ``[[sheets]]`` tables.
    The Telegram token is not written: the monitor reads it from TELEGRAM_BOT_TOKEN. ``run``: more
    keys of the ``[run]`` table (durations as text), over its ``budget`` of BUDGET.
    """
    config_path = Path(path)
    folder = config_path.parent.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    use_csv = len(dataset.sheets) > sheets_file_over
    origin = "a hand-written dataset" if dataset.seed is None else f"a generated dataset, seed {dataset.seed}"
    count = counted(len(dataset.sheets), "spreadsheet")
    lines = [f"# A monitor config for the sandbox: {count} of {origin}.", ""]
    if use_csv:  # a top-level key: it must come before the first table
        _write_sheets_csv(folder / SHEETS_CSV, dataset.sheets)
        lines += [f"sheets_file = {_toml(SHEETS_CSV)}", ""]
    lines += [
        "[run]",
        f"state_dir = {_toml(state_dir)}",
        "# budget: under round_interval (5m by default), the cron interval; see crontab.example",
        *(f"{key} = {_toml(value)}" for key, value in {"budget": BUDGET, **(run or {})}.items()),
        "",
        "[google]",
        f"credentials = {_toml([_relative(c, folder) for c in credentials])}",
        f"read_requests_per_minute = {int(read_per_user)}",
        f"project_read_requests_per_minute = {int(read_per_project)}",
    ]
    if request_timeout:
        lines.append(f"request_timeout = {_toml(request_timeout)}")
    lines += [f"api_endpoint = {_toml(endpoint)}", ""]
    lines += _telegram_table(telegram_chat_id, telegram_api_base, telegram_listen)
    for name, profile in profiles_for(dataset).items():
        lines += [f"[profiles.{name}]", "checks = ["]
        lines += [f"  {_toml_inline(check.as_written())}," for check in profile]
        lines += ["]", ""]
    if not use_csv:
        lines += _sheet_tables(dataset.sheets)
    config_path.write_text("\n".join(lines), encoding="utf-8")
    return config_path


def _telegram_table(chat_id: str | None, api_base: str | None, listen: bool = True) -> list[str]:
    """The ``[telegram]`` table's lines ([] without a chat: messages then go to stdout); ``listen``
    False: the runs only send (they do not stay to answer the chat)."""
    if chat_id is None:
        return []
    lines = ["[telegram]", f"chat_id = {_toml(str(chat_id))}"]
    if api_base:
        lines.append(f"api_base = {_toml(api_base)}")
    if not listen:
        lines.append("listen = false")
    return [*lines, ""]


def _sheet_tables(sheets: Iterable[SheetEntry]) -> list[str]:
    lines = []
    for entry in sheets:
        lines += [
            "[[sheets]]",
            f"id = {_toml(entry.id)}",
            f"name = {_toml(entry.title)}",
            f"profile = {_toml(entry.profile)}",
            f"tags = {_toml(list(entry.tags))}",
            "",
        ]
    return lines


def _write_sheets_csv(path: Path, sheets: Iterable[SheetEntry]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "name", "profile", "tags"])
        for entry in sheets:
            writer.writerow([entry.id, entry.title, entry.profile, ";".join(entry.tags)])


def _relative(path: str | os.PathLike, folder: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), folder)).as_posix()


def _toml(value: object) -> str:
    """A TOML literal for a string, number or list of them (JSON's string escapes are TOML's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _toml_inline(table: dict) -> str:
    return "{ " + ", ".join(f"{key} = {_toml(value)}" for key, value in table.items()) + " }"
