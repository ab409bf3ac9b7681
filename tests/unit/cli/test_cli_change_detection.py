"""What `status` and `sheets` tell of change detection, on states left by real runs on the sandbox.

Runs go through ``run_once`` on a manual clock with real gspread clients against the sandbox (whose
Drive change feed tells every edit made through its control API, at its spreadsheet's next moment);
the commands through the real CLI. The commands' own clock is the system's, so assertions use the
absolute times they print.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_fixtures import A, B, C, invoke, json_of, saved_state, write_config
from sandbox_fixtures import drive_caught_up

from monitor.app.run import run_once
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.core.timefmt import format_utc
from monitor.engine.heartbeat import RunOutcome
from sheet_sandbox.server import running_sandbox

NEXT_ROUND = 6 * 60  # seconds: past write_config's round_interval (5m), so a run starts a new round


def stock(quantity: int = 10) -> dict:
    return {"title": "Store", "tabs": {"Stock": [["SKU", "Product", "Quantity"], ["A-1", "Tea", quantity]]}}


@dataclass
class Site:
    sandbox: object
    clock: ManualClock
    path: Path

    def run(self) -> datetime:
        """One run on the manual clock; returns when it started (its round's start, if it built one)."""
        started = self.clock.now()
        result = run_once(load_config(self.path, {}), clock=self.clock, messages_to=io.StringIO())
        assert result.report.outcome is RunOutcome.OK
        return started


@contextmanager
def sandbox_site(folder: Path, run: tuple[str, ...] = ()) -> Iterator[Site]:
    # google-auth stamps its JWTs with the real time, so the manual clock starts at the real time (in
    # whole seconds: stored times keep milliseconds, and the tests compare them with the clock's).
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        for sid in (A, B, C):
            sandbox.google.store.put_control(sid, stock())
        path = write_config(folder, credentials=sandbox.write_credentials(folder / "keys", 1),
                            endpoint=sandbox.base_url, run=run)
        yield Site(sandbox, clock, path)


@pytest.fixture
def site(tmp_path) -> Iterator[tuple[Site, datetime, datetime]]:
    """A first round read A, B and C; then B was edited, and the second round read only B.
    Yields the site and the two rounds' starts."""
    with sandbox_site(tmp_path / "site") as site:
        first = site.run()
        site.clock.advance(NEXT_ROUND)
        site.sandbox.google.store.put_control(B, stock(quantity=3))
        drive_caught_up(site.sandbox.google)  # Drive's change feed tells the edit at B's moment
        second = site.run()
        yield site, first, second


def line_of(output: str, spreadsheet_id: str) -> str:
    """The spreadsheet's row of the table (its findings, listed below the table, name it again)."""
    return next(line for line in output.splitlines() if spreadsheet_id in line)


def minute(moment: datetime) -> str:
    return f"{moment:%m-%d %H:%M}Z"  # how the tables print a time


def second(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%S}Z"  # how `status` prints one


# -- sheets


def test_sheets_says_which_spreadsheets_the_round_judged_unchanged_since_their_last_read(site):
    site, first, second_round = site
    rows = {row["id"]: row for row in json_of(invoke(site.path, "sheets", "--json"))["sheets"]}
    for unchanged in (A, C):
        assert rows[unchanged]["unchanged"] is True
        assert rows[unchanged]["read_at"] == format_utc(first)
        assert rows[unchanged]["shown"] == "ok"
    assert rows[B]["unchanged"] is False  # edited: read again, and found low on stock
    assert rows[B]["read_at"] == format_utc(second_round) and rows[B]["shown"] == "warn"

    human = invoke(site.path, "sheets")
    assert human.exit_code == 0
    for unchanged in (A, C):
        assert f"ok (unchanged since {minute(first)})" in line_of(human.stdout, unchanged)
    assert "unchanged" not in line_of(human.stdout, B)


def test_sheets_after_a_round_that_read_everything_shows_nothing_unchanged(tmp_path):
    with sandbox_site(tmp_path / "site") as site:
        site.run()  # the feed had no position yet: every spreadsheet is read
        rows = json_of(invoke(site.path, "sheets", "--json"))["sheets"]
        assert [row["unchanged"] for row in rows] == [False] * 3
        assert all(row["read_at"] for row in rows)
        assert "unchanged" not in invoke(site.path, "sheets").stdout


# -- status


def test_status_counts_the_rounds_reads_and_unchanged_spreadsheets_and_shows_the_feed(site):
    site, _, second_round = site
    data = json_of(invoke(site.path, "status", "--json"))
    assert data["current_round"]["total"] == 1 and data["current_round"]["unread"] == 2
    assert data["current_round"]["complete"] is True
    feed = data["change_feed"]
    assert feed["state"] == "ok" and feed["position_known"] is True
    assert feed["asked_at"] == format_utc(second_round)
    assert feed["failing_since"] is None and feed["last_error"] is None

    human = invoke(site.path, "status")
    assert human.exit_code == 0
    assert re.search(r"spreadsheets\s+1 read, 2 judged unchanged from their last read", human.stdout)
    assert re.search(rf"Drive change feed\s+ok, last asked {second(second_round)}", human.stdout)


def test_status_while_drive_cannot_answer_says_every_spreadsheet_is_read(site):
    site, _, _ = site
    site.clock.advance(NEXT_ROUND)
    # The next round's first request to Google is its question to Drive: a passing fault answers it.
    site.sandbox.google.faults.add({"spreadsheet": "*", "statuses": [503], "times": 1})
    third = site.run()
    assert saved_state(site.path).feed.failing_since == third

    data = json_of(invoke(site.path, "status", "--json"))
    assert data["current_round"]["total"] == 3 and data["current_round"]["unread"] == 0
    feed = data["change_feed"]
    assert feed["state"] == "failing" and feed["failing_since"] == format_utc(third)
    assert feed["position_known"] is True and feed["last_error"]  # a passing fault keeps the position
    human = invoke(site.path, "status").stdout
    failing = rf"Drive change feed\s+failing since {second(third)} \(.*\), every spreadsheet is read: \w"
    assert re.search(failing, human)
    assert re.search(r"spreadsheets\s+3 read, 0 judged unchanged", human)
    rows = json_of(invoke(site.path, "sheets", "--json"))["sheets"]
    assert [row["unchanged"] for row in rows] == [False] * 3


def test_status_with_change_detection_off_says_so_and_counts_nothing_unchanged(tmp_path):
    with sandbox_site(tmp_path / "site", run=("change_detection = false",)) as site:
        site.run()
        site.clock.advance(NEXT_ROUND)
        site.run()
        data = json_of(invoke(site.path, "status", "--json"))
        assert data["change_feed"]["state"] == "off" and data["change_feed"]["position_known"] is False
        assert data["current_round"]["total"] == 3 and data["current_round"]["unread"] == 0
        human = invoke(site.path, "status").stdout
        assert re.search(r"Drive change feed\s+off \(change_detection = false\)", human)
        rows = json_of(invoke(site.path, "sheets", "--json"))["sheets"]
        assert [row["unchanged"] for row in rows] == [False] * 3


def test_status_before_any_run_has_a_feed_not_asked_yet(tmp_path):
    path = write_config(tmp_path / "site")
    feed = json_of(invoke(path, "status", "--json"))["change_feed"]
    assert feed == {"state": "no_position", "position_known": False, "source": None, "asked_at": None,
                    "failing_since": None, "last_error": None}
