"""Where a generated or hand-written dataset goes: into a running sandbox, or a folder and back.

``save``/``load`` write and read a dataset as a folder (one ``<id>.json`` per spreadsheet, plus
``faults.json`` and ``manifest.json``), the format ``sheet-monitor sandbox serve --dataset DIR``
reads; ``apply`` loads one into a ``GoogleSandbox``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from .dataset_generate import GIVEN, GIVEN_PROFILE, Dataset, SheetEntry, rfc3339

FAULTS_FILE = "faults.json"
MANIFEST_FILE = "manifest.json"
EDITS_FILE = "edits.json"  # id -> a spreadsheet's payload after its first read (a later breakage)


def apply(dataset: Dataset, google) -> None:
    """Load ``dataset`` into a GoogleSandbox: payloads into its store, faults into its plan.

    Raises ValueError naming the spreadsheet (or the fault's position) the sandbox refused.
    """
    for sheet_id, payload in dataset.payloads.items():
        try:
            google.store.put_control(sheet_id, payload)
        except ValueError as exc:
            raise ValueError(f"spreadsheet {sheet_id}: {exc}") from exc
    for position, spec in enumerate(dataset.faults):
        try:
            google.faults.add(spec)
        except ValueError as exc:
            raise ValueError(f"fault {position} ({spec!r}): {exc}") from exc
    google.breakages.update({entry.id: {"title": entry.title, "kind": entry.kind, "expect": entry.expect,
                                        "note": entry.note} for entry in dataset.sheets})


def apply_edits(dataset: Dataset, google) -> None:
    """Make the edits of breakages that come after a first read (``Dataset.edits``)."""
    for sheet_id, payload in dataset.edits.items():
        google.store.put_control(sheet_id, payload)


# -- the folder format ------------------------------------------------------------------------


def save(dataset: Dataset, directory: str | os.PathLike) -> Path:
    """Write ``dataset`` as a folder that ``load`` (and ``sandbox serve --dataset``) reads."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    for sheet_id, payload in dataset.payloads.items():
        _write_json(folder / f"{sheet_id}.json", {"id": sheet_id, **payload})
    _write_json(folder / FAULTS_FILE, dataset.faults)
    _write_json(folder / EDITS_FILE, dataset.edits)
    manifest = {
        "seed": dataset.seed,
        "now": rfc3339(dataset.now) if dataset.now else None,
        "sheets": [{**asdict(entry), "tags": list(entry.tags)} for entry in dataset.sheets],
    }
    _write_json(folder / MANIFEST_FILE, manifest)
    return folder


def load(directory: str | os.PathLike) -> Dataset:
    """Read a dataset folder.

    Format: each ``*.json`` file other than ``faults.json`` and ``manifest.json`` is one
    spreadsheet's control payload (``{"title", "tabs", "modifiedTime"?, "timeZone"?, "locale"?}``)
    with an optional ``"id"`` key (default: the file name without ``.json``). ``faults.json``
    (optional) is a list of fault specs. ``manifest.json`` (optional) lists the spreadsheets to
    configure and how each is broken; without it every payload is listed, in file-name order, as
    kind "given", checked by the profile that fits any spreadsheet (``GIVEN_PROFILE``). Raises
    ValueError naming the file for anything malformed.
    """
    folder = Path(directory)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a directory")
    payloads: dict[str, dict] = {}
    for path in sorted(folder.glob("*.json")):
        if path.name in (FAULTS_FILE, MANIFEST_FILE, EDITS_FILE):
            continue
        data = _read_json(path)
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a spreadsheet file must hold a JSON object")
        payload = dict(data)
        sheet_id = payload.pop("id", path.stem)
        if not isinstance(sheet_id, str) or not sheet_id:
            raise ValueError(f'{path}: "id" must be a non-empty string')
        if sheet_id in payloads:
            raise ValueError(f"{path}: spreadsheet id {sheet_id!r} appears in two files")
        payloads[sheet_id] = payload
    faults_path = folder / FAULTS_FILE
    faults = _read_json(faults_path) if faults_path.exists() else []
    if not isinstance(faults, list):
        raise ValueError(f"{faults_path}: must hold a JSON list of fault specs")
    edits_path = folder / EDITS_FILE
    edits = _read_json(edits_path) if edits_path.exists() else {}
    if not isinstance(edits, dict):
        raise ValueError(f"{edits_path}: must hold a JSON object of id -> payload")
    manifest_path = folder / MANIFEST_FILE
    if manifest_path.exists():
        manifest = _read_json(manifest_path)
        try:
            sheets = [
                SheetEntry(**{**entry, "tags": tuple(entry.get("tags", ()))})
                for entry in manifest["sheets"]
            ]
            seed = manifest.get("seed")
            now = manifest.get("now")
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{manifest_path}: not a dataset manifest ({exc})") from exc
        now = datetime.fromisoformat(now.replace("Z", "+00:00")) if now else None
    else:
        profiles = given_profiles(payloads)
        sheets = [
            SheetEntry(sheet_id, str(payload.get("title") or sheet_id), (), GIVEN.kind, GIVEN.expect,
                       GIVEN.description, profile=profiles[sheet_id])
            for sheet_id, payload in payloads.items()
        ]
        seed, now = None, None
    return Dataset(seed=seed, now=now, sheets=sheets, payloads=payloads, faults=faults, edits=edits)


def given_profiles(payloads: dict[str, dict]) -> dict[str, str]:
    """The profile of each hand-written spreadsheet: one per name of a first tab, which its checks
    read ("basic", or "basic-1", "basic-2"... when the first tabs are named differently)."""
    firsts = {sheet_id: first_tab(payload) for sheet_id, payload in payloads.items()}
    tabs = list(dict.fromkeys(firsts.values()))
    names = {tab: GIVEN_PROFILE if len(tabs) == 1 else f"{GIVEN_PROFILE}-{n}"
             for n, tab in enumerate(tabs, start=1)}
    return {sheet_id: names[tab] for sheet_id, tab in firsts.items()}


def first_tab(payload: dict) -> str | None:
    """The name of a control payload's first tab (None when it has none: the sandbox refuses it)."""
    tabs = payload.get("tabs")
    return next(iter(tabs), None) if isinstance(tabs, dict) else None


def _write_json(path: Path, data: object) -> None:
    with path.open("w", encoding="utf-8") as handle:
        json.dump(data, handle, ensure_ascii=False, separators=(",", ":"))


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read JSON ({exc})") from exc
