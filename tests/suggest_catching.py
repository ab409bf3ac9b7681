"""Suggested profiles on generated stores: reads without a socket, and every breakage injected.

``Shelf``: the sandbox's own answers (a whole spreadsheet with grid data as `suggest` asks it, the
values a check's batchGet asks), taken from its store and rendered by the code that serves them over
HTTP, then turned into what the monitor's reader returns. ``catch_breakages``: a profile suggested
from healthy stores, judged on them and on a copy of each with each breakage the dataset generator
knows. Shared by tests/unit/suggest and bench/suggest_catch.py; no asserts but a read's own.
"""

from __future__ import annotations

import zlib
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from monitor.checks import health_of
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.core.zones import zone_named
from monitor.engine.history import past_for, recorded
from monitor.engine.inspect import SheetData, SheetPlan, judge
from monitor.google.reader import READ_PARAMS
from monitor.google.workbook import FIELDS, workbook_of
from monitor.suggest import Workbook, propose_all, render_toml, survey, templates
from sheet_sandbox import dataset, values
from sheet_sandbox.fieldmask import apply_mask, parse_mask
from sheet_sandbox.sheets_api import _cell_fields, spreadsheet_json
from sheet_sandbox.store import SpreadsheetStore

_MASK = parse_mask(FIELDS)


class Shelf:
    """A sandbox store of spreadsheets put by payload, read as Google answers."""

    def __init__(self, now: datetime) -> None:
        self.store = SpreadsheetStore(ManualClock(start=now.astimezone(UTC)))

    def put(self, sheet_id: str, payload: dict) -> None:
        self.store.put_control(sheet_id, payload)

    def workbook(self, sheet_id: str) -> Workbook:
        spreadsheet = self.store.get(sheet_id)
        body = spreadsheet_json(spreadsheet, True, [], _cell_fields(_MASK))
        return workbook_of(apply_mask(body, _MASK))

    def time_zone(self, sheet_id: str) -> str:
        return self.store.get(sheet_id).properties["timeZone"]

    def read(self, sheet_id: str, plan: SheetPlan) -> SheetData | str:
        """The values ``plan``'s batchGet reads, or the refusal's message when Google would refuse it
        (a range naming a tab that is gone)."""
        spreadsheet = self.store.get(sheet_id)
        try:
            ranges = {text: values.read(spreadsheet, text, READ_PARAMS["valueRenderOption"],
                                        READ_PARAMS["dateTimeRenderOption"], "ROWS", self.store.rendered)
                      for text in plan.ranges}
        except values.RequestError as exc:
            return str(exc)
        return SheetData(ranges, time_zone=spreadsheet.properties["timeZone"])


# -- suggested profiles against every breakage the generator knows

HARMLESS = frozenset({"columns_moved"})  # checks by header still find moved columns: no finding
# Faults of the sandbox, not of the data: the read fails (or is retried) whatever the checks.
FAULTS = frozenset({"missing", "access_removed", "flaky", "server_error", "slow", "hang"})
# What a config needs beside a proposal; the key file is never opened (require_secrets=False).
BASE_CONFIG = '[google]\ncredentials = ["key.json"]\n\n'


@dataclass
class Caught:
    """What a suggested profile made of the healthy stores and of a broken copy of each."""

    toml: str
    checks: int
    suggested_from: int
    healthy: int
    false_alarms: list[str] = field(default_factory=list)  # healthy stores with a finding
    caught: Counter = field(default_factory=Counter)  # by breakage kind
    missed: Counter = field(default_factory=Counter)
    missed_where: dict[str, list[str]] = field(default_factory=dict)

    @property
    def breakages(self) -> int:
        return sum(self.caught[k] + self.missed[k] for k in self.caught.keys() | self.missed.keys()
                   if k not in HARMLESS)

    @property
    def caught_count(self) -> int:
        return sum(n for k, n in self.caught.items() if k not in HARMLESS)


def catch_breakages(data: dataset.Dataset, now: datetime, sample: int | None, later: timedelta,
                    folder: Path) -> Caught:
    """Suggest a profile from the first ``sample`` healthy stores of ``data`` (None: all) and its
    catalogue, load it as a config is loaded, and judge ``later`` every healthy store and a copy of
    each with each breakage of the data injected (``broken_copy``): a breakage is caught when the
    verdict is not ok (for a harmless one, when it is); those that come after a first read are judged
    against the history the healthy copy's read left, as a run judges them."""
    healthy = data.healthy()
    [catalogue] = data.of_kind("catalogue")
    shelf = Shelf(now)
    for entry in [*healthy, catalogue]:
        shelf.put(entry.id, data.payloads[entry.id])
    chosen = [*healthy[:sample], catalogue]
    surveys = [survey(workbook, now, zone_named(workbook.time_zone))
               for workbook in (shelf.workbook(entry.id) for entry in chosen)]
    text = render_toml(propose_all(templates(surveys), "suggested"), "suggested")
    path = folder / "monitor.toml"
    path.write_text(BASE_CONFIG + text, encoding="utf-8")
    config = load_config(path, {}, require_secrets=False)
    store_plan = SheetPlan.of(config.sheets_by_id[healthy[0].id], config)
    at = now + later
    _, lent = judged(shelf, SheetPlan.of(config.sheets_by_id[catalogue.id], config), at, None, {})
    kept = {catalogue.id: lent}
    found = Caught(text, len(store_plan.checks), len(chosen) - 1, len(healthy))
    for entry in healthy:
        plan = replace(store_plan, id=entry.id, name=entry.title)
        results, history = judged(shelf, plan, at, None, kept)
        if health_of(results) != "ok":
            found.false_alarms.append(f"{entry.title}: {findings_text(results)}")
        for kind in (b.kind for b in dataset.BREAKAGES if b.kind not in FAULTS):
            served, edited, _ = dataset.broken_copy(data.payloads[entry.id], kind, entry.id, now,
                                                    seed=zlib.crc32(f"{entry.id}:{kind}".encode()))
            shelf.put(entry.id, edited or served)
            verdict, results = verdict_of(shelf, plan, at + timedelta(minutes=5), history if edited else None,
                                          kept)
            shelf.put(entry.id, data.payloads[entry.id])
            if (verdict == "ok") == (kind in HARMLESS):
                found.caught[kind] += 1
            else:
                found.missed[kind] += 1
                found.missed_where.setdefault(kind, []).append(
                    f"{entry.title}: {verdict} {findings_text(results)}")
    return found


def judged(shelf: Shelf, plan: SheetPlan, now: datetime, history, kept):
    """A read of ``plan``'s spreadsheet judged against its ``history`` and the others' ``kept``
    (what their reads lent): the results, and the history the read leaves."""
    data = shelf.read(plan.id, plan)
    assert not isinstance(data, str), data
    results = judge(plan, data, now, zone_named(data.time_zone), last_try=True,
                    past=_past(plan, history, kept))
    return results, recorded(plan.checks, plan.links, history, results, data.value_ranges, now)


def verdict_of(shelf: Shelf, plan: SheetPlan, now: datetime, history, kept) -> tuple[str, list]:
    data = shelf.read(plan.id, plan)
    if isinstance(data, str):  # Google refuses the read (a tab gone): told as unreadable
        return "error", []
    results = judge(plan, data, now, zone_named(data.time_zone), last_try=True,
                    past=_past(plan, history, kept))
    return health_of(results), results


def _past(plan: SheetPlan, history, kept):
    histories = {**kept, plan.id: history} if history is not None else kept
    return past_for(plan.checks, plan.links, histories, plan.id, {}, {})


def findings_text(results) -> str:
    return "; ".join(f"{r.check_name}: {r.message}" for r in results if r.status != "ok")[:300]
