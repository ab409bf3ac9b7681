"""Datasets for the sandbox: generated store-stock spreadsheets, broken in known ways.

The import path of the dataset's public API; the work is split by concern:

* ``dataset_generate``: ``generate(n, seed, now)`` -> ``Dataset`` (payloads, faults, manifest), and
  ``filed(dataset, folders)``: the same spreadsheets in Drive folders;
* ``dataset_files``: ``apply`` (into a running sandbox), ``save``/``load`` (a folder, the format
  ``sheet-monitor sandbox serve --dataset DIR`` reads);
* ``dataset_config``: ``stock_profile()`` (the checks, as the monitor's check models) and
  ``write_config`` (a monitor config that checks a dataset, see docs/configuration.md).
"""

from .dataset_config import (
    CATALOGUE_PROFILE,
    PROFILE,
    SHEETS_CSV,
    catalogue_profile,
    stock_profile,
    write_config,
)
from .dataset_files import EDITS_FILE, FAULTS_FILE, MANIFEST_FILE, apply, apply_edits, load, save
from .dataset_generate import (
    AFTER_FIRST_READ,
    BREAKAGES,
    BROKEN_SHARE,
    CATALOGUE_TAB,
    CATALOGUE_TITLE,
    CHECKED_LAST_ROW,
    FOLDER_NAME,
    HEALTHY,
    MAX_STOCK_ROWS,
    MIN_STOCK_ROWS,
    RENAMED_STOCK_TAB,
    REORDER_LEVELS,
    SALES_HEADER,
    STOCK_HEADER,
    STOCK_TAB,
    Breakage,
    Dataset,
    SheetEntry,
    broken_copy,
    filed,
    generate,
)

__all__ = [
    "AFTER_FIRST_READ",
    "CATALOGUE_PROFILE",
    "CATALOGUE_TAB",
    "CATALOGUE_TITLE",
    "catalogue_profile",
    "BREAKAGES",
    "BROKEN_SHARE",
    "CHECKED_LAST_ROW",
    "FAULTS_FILE",
    "FOLDER_NAME",
    "HEALTHY",
    "MANIFEST_FILE",
    "MAX_STOCK_ROWS",
    "MIN_STOCK_ROWS",
    "PROFILE",
    "RENAMED_STOCK_TAB",
    "REORDER_LEVELS",
    "SALES_HEADER",
    "SHEETS_CSV",
    "STOCK_HEADER",
    "STOCK_TAB",
    "Breakage",
    "Dataset",
    "SheetEntry",
    "EDITS_FILE",
    "apply",
    "apply_edits",
    "broken_copy",
    "filed",
    "generate",
    "load",
    "save",
    "stock_profile",
    "write_config",
]
