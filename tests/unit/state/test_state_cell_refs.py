"""Cells kept in the state: stored as A1 text, read back once as typed references; older documents too."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from monitor.core.a1 import A1Range, CellRef
from monitor.engine.events import HealthChanged
from monitor.engine.health import FAIL, OK, Finding, Moment, SheetHealth
from monitor.state.schema import EVENT, HEALTH, upgraded

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def test_a_findings_cells_are_stored_as_their_a1_text_and_read_back_as_references():
    finding = Finding("low stock", "threshold", "warn", "min 3 < 5",
                      (CellRef("My tab", 7, 6), A1Range("Stock", 1, None, 1, None)), tab="My tab")
    record = SheetHealth(FAIL, findings=(finding,), moments=(Moment("fresh", NOW, CellRef("Log", 2, 5)),))
    stored = json.loads(HEALTH.encode(record))
    assert stored["findings"][0]["cells"] == ["'My tab'!F7", "Stock!1:1"]
    assert stored["moments"][0]["cell"] == "Log!E2"
    assert HEALTH.decode(HEALTH.encode(record)) == record


def test_a_health_record_of_version_7_reads_its_cells_and_the_tab_its_checks_name_gave():
    older = {"health": "fail", "findings": [
        {"check": "threshold min Stock!F2:F", "kind": "threshold", "status": "fail",
         "message": "no min: the range is empty"},
        {"check": "not_empty 'Daily log'!A2:A", "kind": "not_empty", "status": "fail", "message": "empty"},
        {"check": "low stock", "kind": "threshold", "status": "warn", "message": "min 3 < 5",
         "cells": ["Stock!F7"]},
        {"check": "freshness modified_time", "kind": "freshness", "status": "warn", "message": "old"},
    ], "moments": [{"check": "fresh", "at": "2026-03-02T12:00:00.000Z", "cell": "'Daily log'!E9"}]}
    record = HEALTH.validate(upgraded(HEALTH, older, 7))
    assert [finding.tab for finding in record.findings] == ["Stock", "Daily log", None, None]
    assert record.findings[2].cells == (CellRef("Stock", 7, 6),)
    assert record.moments[0].cell == CellRef("Daily log", 9, 5)


def test_an_event_of_version_5_reads_its_findings_tabs_from_their_checks_names():
    finding = {"check": "not_empty Stock!A2:A", "kind": "not_empty", "status": "fail", "message": "empty"}
    event = HealthChanged(at=NOW, run_id="r1", spreadsheet_id="1abc", name="Shop", previous=OK, current=FAIL)
    older = {"kind": "health_changed", **json.loads(EVENT.encode(event)), "findings": [finding]}
    [read] = EVENT.validate(upgraded(EVENT, older, 5)).findings
    assert (read.tab, read.cells) == ("Stock", ())
