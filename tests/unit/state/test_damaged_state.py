"""A damaged entry must not take the monitor down.

Valid JSON of the wrong shape in one entry (a breaker that is a string, a mute until "tomorrow", a task
without its target...) used to end every following run, and most operator commands, in a traceback.
Each shape here is written into a real state file (the store opened as every process opens it,
``FileLocation(state_dir).open()``, one key updated), then:

- a real run (``run_once`` against the sandbox over HTTP) completes and checks every spreadsheet, sets
  the entry aside under ``damaged/<key>`` with its raw text, records exactly one ``StateEntryDamaged``
  naming it, and the message people get names it;
- the operator commands exit with their usual codes and no traceback: readers skip the entry and
  change nothing; a writer sets it aside (one event), after which ``status`` lists it under
  ``set_aside``; ``sheet-watchdog`` keeps watching.

Last, the state of the first release (tests/fixtures/first_release) under ``status --json`` and
``sheet-watchdog``.
"""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_fixtures import A, B, C, invoke, json_of, saved_state, seed, state_dir, write_config
from paths import FIXTURES

from monitor.app.run import run_once
from monitor.cli.watchdog import run_watchdog
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.engine.events import StateEntryDamaged
from monitor.engine.heartbeat import RunOutcome
from monitor.state import read_state
from monitor.state.schema import DAMAGED_PREFIX
from monitor.storage import FileLocation
from sheet_sandbox.server import running_sandbox

FIRST_RELEASE = FIXTURES / "first_release"

Shape = Callable[[dict[str, str]], tuple[str, str]]  # the stored properties -> (key, damaged raw text)


def _first_task(properties: dict[str, str]) -> str:
    return min(key for key in properties if key.startswith("task/"))


def _edited(properties: dict[str, str], key: str, drop: str | None = None, **extra) -> tuple[str, str]:
    """The stored document at ``key`` with a field dropped or extra ones added: valid JSON, wrong shape."""
    document = json.loads(properties[key])
    if drop:
        del document[drop]
    return key, json.dumps({**document, **extra})


SHAPES: dict[str, Shape] = {
    # The shapes the issue tried ("9 of 12 ended in a traceback").
    "a breaker that is a string": lambda p: (f"breaker/{C}", '"open"'),
    "a mute that is a string": lambda p: (f"mute/{B}", '"until tomorrow"'),
    "a mute until tomorrow": lambda p: (f"mute/{B}", '{"until": "tomorrow", "reason": "stock count"}'),
    "a task missing its target": lambda p: _edited(p, _first_task(p), drop="target"),
    "a task with an extra key": lambda p: _edited(p, _first_task(p), priority=1),
    "a health record with an extra key": lambda p: _edited(p, f"health/{A}", colour="red"),
    "a DLQ entry missing fields": lambda p: (f"dlq/{A}", json.dumps({"id": A, "name": "Store 1"})),
    "a heartbeat that is a string": lambda p: ("heartbeat", '"running"'),
    "a property that is not JSON": lambda p: (f"health/{B}", "{health: ok"),
    "an event of an unknown kind": lambda p: (
        "event/000000000777", '{"kind": "config_problem", "at": "2026-11-30T03:00:00Z", "run_id": "r"}'),
    # Each single document too: a fresh one takes its place.
    "an outbox that is a list": lambda p: ("outbox", "[1, 2]"),
    "an alert memory that is a string": lambda p: ("alerts", '"alerted"'),
    "a run history that is a string": lambda p: ("runs", '"ok, ok"'),
    "an API state that is a number": lambda p: ("api", "3"),
    "a quota log of the wrong shape": lambda p: ("quota", '{"sent": "all of it"}'),
    "a retry-first list of the wrong shape": lambda p: ("retry_first", '{"ids": ["x"]}'),
    "the round's own document that is a string": lambda p: ("round", '"r1"'),
    "a key no release writes": lambda p: ("flags", '{"behind_round": "r1"}'),
}
# A metric history is read when the run first uses it (when it judges its spreadsheet), not when the
# state opens: found by a run, not by a command that never looks at it (tests/unit/state/
# test_unread_documents.py).
RUN_SHAPES: dict[str, Shape] = {
    **SHAPES,
    "a metric history with an extra key": lambda p: (f"history/{B}", '{"read_at": "2026-11-30T03:00:00Z", '
                                                                      '"colour": "red"}'),
}


def damage(folder: Path, shape: str) -> tuple[str, str]:
    """Write ``shape`` into the state in ``folder`` (holding the run lock, as any writer must)."""
    location = FileLocation(folder)
    with location.lock(), location.open() as store:
        key, raw = RUN_SHAPES[shape](store.get_properties())
        store.update({key: raw})
    return key, raw


def stored(folder: Path) -> dict[str, str]:
    with FileLocation(folder).open(read_only=True) as store:
        return store.get_properties()


def damage_events(events) -> list[StateEntryDamaged]:
    return [event for event in events if isinstance(event, StateEntryDamaged)]


# -- a real run --------------------------------------------------------------------------------------


def stock() -> dict:
    return {"title": "Store", "tabs": {"Stock": [["SKU", "Product", "Quantity"], ["A-1", "Tea", 10]]}}


@pytest.fixture
def site(tmp_path):
    """A first run has checked A (403: dead-lettered), B and C (ok) on the sandbox."""
    # google-auth stamps its JWTs with the real time, so the manual clock starts at the real time (in
    # whole seconds: stored times keep milliseconds, and the test compares them with the clock's).
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        for sid in (A, B, C):
            sandbox.google.store.put_control(sid, stock())
        sandbox.google.faults.add({"spreadsheet": A, "statuses": [403], "repeat": True})
        # Every round reads every spreadsheet: what a damaged entry must not stop.
        path = write_config(tmp_path / "site", credentials=sandbox.write_credentials(tmp_path / "keys", 1),
                            endpoint=sandbox.base_url, run=("change_detection = false",))
        config = load_config(path, {})
        run_once(config, clock=clock, messages_to=io.StringIO())
        yield config, clock


@pytest.mark.parametrize("shape", RUN_SHAPES)
def test_a_run_sets_the_damaged_entry_aside_tells_it_once_and_checks_every_spreadsheet(site, shape):
    config, clock = site
    folder = config.run.state_dir
    key, raw = damage(folder, shape)
    clock.advance(6 * 60)  # the next round is due: every spreadsheet is read again
    started = clock.now()
    told = io.StringIO()

    result = run_once(config, clock=clock, messages_to=told)

    assert result.report.outcome is RunOutcome.OK
    [event] = damage_events(result.new_events)
    assert event.key == key and event.set_aside_as == DAMAGED_PREFIX + key and event.problem
    kept = json.loads(stored(folder)[DAMAGED_PREFIX + key])
    assert kept["value"] == raw and kept["problem"] == event.problem
    assert key in told.getvalue() and "could not be read and was set aside" in told.getvalue()

    state = read_state(folder)
    assert state.damaged == [] and state.set_aside == [key]
    assert all(state.health[sid].last_checked_at >= started for sid in (B, C))  # the rest carried on
    assert A in state.dlq and state.heartbeat.outcome is RunOutcome.OK

    clock.advance(6 * 60)
    assert damage_events(run_once(config, clock=clock, messages_to=io.StringIO()).new_events) == []


# -- the operator commands ---------------------------------------------------------------------------

READERS = [("status",), ("status", "--json"), ("sheets",), ("sheets", "--json"), ("dlq", "list"),
           ("dlq", "show", A), ("breakers",), ("breakers", "list", "--json"), ("check-config", "--offline"),
           ("watchdog",)]


@pytest.fixture
def config(tmp_path):
    path = write_config(tmp_path / "site")
    seed(path)
    return path


def state_files(config: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(state_dir(config).glob("properties.json*"))}


def run_readers(config: Path, damaged_key: str) -> None:
    """Every reading command exits as it would on a sound state: the entry is simply not there."""
    for args in READERS:
        result = invoke(config, *args)  # an exception escaping the command fails the test here
        lost_entry = args == ("dlq", "show", A) and damaged_key == f"dlq/{A}"  # no longer in the DLQ
        # The seeded outbox is halted (Telegram refuses the chat): the watchdog says so by exiting 1,
        # unless that outbox is what was lost, or a lost heartbeat makes the runs look silent first.
        halted = args == ("watchdog",) and damaged_key not in ("outbox", "heartbeat")
        assert result.exit_code == (1 if lost_entry or halted else 0), (args, result.output)
        assert "Traceback" not in result.output


@pytest.mark.parametrize("shape", SHAPES)
def test_the_operator_commands_on_a_damaged_state_exit_as_usual(config, shape):
    key, raw = damage(state_dir(config), shape)
    before = state_files(config)
    run_readers(config, key)
    assert state_files(config) == before  # readers skip the entry and change nothing
    assert json_of(invoke(config, "status", "--json"))["set_aside"] == []

    assert invoke(config, "mute", B, "--for", "1h", "--reason", "stock count").exit_code == 0
    assert invoke(config, "unmute", B).exit_code == 0
    state = saved_state(config)
    [event] = damage_events(state.events)  # told once, by the first writer
    assert event.key == key and event.run_id == "admin-mute"
    assert json.loads(stored(state_dir(config))[DAMAGED_PREFIX + key])["value"] == raw
    assert json_of(invoke(config, "status", "--json"))["set_aside"] == [key]
    assert f"damaged/{key}" in invoke(config, "status").output  # the table names it too
    run_readers(config, key)


def test_a_read_only_command_shows_what_loaded_and_leaves_out_the_damaged_entry(config):
    damage(state_dir(config), "a health record with an extra key")  # A's: it was "error"
    rows = {row["id"]: row["shown"] for row in json_of(invoke(config, "sheets", "--json"))["sheets"]}
    assert rows == {A: "unknown", B: "ok", C: "skipped"}
    damage(state_dir(config), "a breaker that is a string")  # C's: it was open
    assert json_of(invoke(config, "breakers", "--json"))["breakers"] == []
    assert json_of(invoke(config, "status", "--json"))["open_breakers"] == []


# -- the first release's state -----------------------------------------------------------------------


@pytest.fixture
def first_release(tmp_path):
    # The spreadsheets that state knows, configured (the views count only those the config lists).
    path = write_config(tmp_path / "site", ids=tuple(sorted(first_release_document("sheets"))))
    state_dir(path).mkdir()
    for name in ("properties.json", "watchdog.json"):
        shutil.copy(FIRST_RELEASE / name, state_dir(path) / name)
    return path


def first_release_document(name: str) -> dict:
    document = json.loads((FIRST_RELEASE / "properties.json").read_text())
    return json.loads(document["properties"]["1"][name])


def test_status_json_reads_the_first_releases_state_without_rewriting_it(first_release):
    before = state_files(first_release)
    result = invoke(first_release, "status", "--json")
    assert result.exit_code == 0
    data = json_of(result)
    assert data["has_run"] is True and data["set_aside"] == []
    assert data["last_run"]["run_id"] == first_release_document("heartbeat")["run_id"]
    assert data["dlq_size"] == len(first_release_document("dlq"))
    assert data["open_breakers"] == sorted(first_release_document("breakers"))
    assert data["outbox_size"] == 1 and data["outbox_halted"]["description"] == "Forbidden: bot was kicked"
    assert data["current_round"]["id"] == first_release_document("round")["id"]
    assert data["queue"]["processing"] == 1 and data["api_degraded"] is True
    assert state_files(first_release) == before  # a reader does not migrate the layout


def test_sheet_watchdog_watches_the_first_releases_state_and_carries_over_its_memory(first_release):
    before = state_files(first_release)
    printed = io.StringIO()
    an_hour_after_its_last_run = ManualClock(datetime(2026, 11, 30, 5, 50, tzinfo=UTC))
    assert run_watchdog(first_release, printed, clock=an_hour_after_its_last_run) == 0
    # Its pending alert is delivered, and the outage it alerted at 09:15 the day before is now
    # past its 4-hour reminder: one reminder, no second alert.
    messages = printed.getvalue().strip().split("\n\n")
    assert messages[0] == "🚨 Monitor runs stopped"
    assert len(messages) == 2 and "Still down: Monitor runs stopped" in messages[1]
    assert not (state_dir(first_release) / "watchdog.json").exists()
    assert state_files(first_release) == before  # the runner's state is only read
