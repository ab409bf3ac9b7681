"""A spreadsheet that never answers: failing after ``unreadable_after``, in every list, until it reads again.

Cron runs every five minutes over one state (``run_fixtures.Bench``); one spreadsheet answers 503 to
every read. Its breaker opens after three failures and then only lets a probe through now and then, so
no retry ever reaches the dead-letter queue: the streak of failed reads alone makes it failing.
"""

from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from run_fixtures import SETTINGS, UNAVAILABLE, Bench, ScriptedReader, SimulatedReads, of_run, plans

from monitor.core.errors import ErrorClass, ErrorInfo
from monitor.engine.events import HealthChanged
from monitor.engine.health import ERROR, OK, SheetHealth
from monitor.engine.unreadable import judge_streak, record_failed_read
from monitor.notify.notifier import notify
from monitor.notify.settings import AlertSettings
from monitor.notify.telegram import PrintingSender
from monitor.state.schema import HEALTH, upgraded
from monitor.storage import MemoryLocation

TICK = timedelta(minutes=5)
AFTER = timedelta(minutes=30)
FOREVER = 1000  # failed reads scripted: more than any test makes
START = datetime(2026, 1, 5, 3, 0, tzinfo=UTC)  # the ManualClock's start


def hanging_bench() -> Bench:
    """s0 answers 503 to every read (until a test clears its script)."""
    return Bench(ScriptedReader({"s0": FOREVER}), plans(2), MemoryLocation())


def silent_bench(latency: dict[str, float]) -> Bench:
    """s0 never answers: each read of it lasts ``latency["s0"]``, past every request's timeout."""
    return Bench(ScriptedReader(), plans(2), MemoryLocation(),
                 make_reads=lambda clock: SimulatedReads(ScriptedReader(), clock, lambda sid: latency[sid]))


def run_ticks(the_bench: Bench, ticks: int) -> list[HealthChanged]:
    """``ticks`` cron runs five minutes apart; the health changes they told, in order."""
    told = []
    for _ in range(ticks):
        run = the_bench.run(replace(SETTINGS, unreadable_after=AFTER))
        told += [event for event in of_run(run) if isinstance(event, HealthChanged)]
        the_bench.clock.advance(TICK.total_seconds())
    return told


def test_a_spreadsheet_that_never_answers_becomes_failing_once_then_recovers_once():
    latency = {"s0": 600.0, "s1": 0.4}
    the_bench = silent_bench(latency)
    assert run_ticks(the_bench, 6) == []
    [failing] = run_ticks(the_bench, 1)
    assert failing.current == ERROR
    assert failing.findings[0].message.startswith("cannot be read since 03:00 UTC (no answer within 2.0 s, ")
    assert run_ticks(the_bench, 12) == []
    latency["s0"] = 0.4
    the_bench.clock.advance(timedelta(hours=2).total_seconds())
    [recovered] = run_ticks(the_bench, 1)
    assert (recovered.previous, recovered.current) == (ERROR, OK)


def test_a_spreadsheet_answering_503_forever_becomes_failing_once_then_recovers_once():
    the_bench = hanging_bench()
    started = the_bench.clock.now()
    before = run_ticks(the_bench, 6)  # 0 .. 25 min: its breaker opened, a probe failed
    assert before == []
    assert the_bench.stored().health["s0"].health != ERROR

    told = run_ticks(the_bench, 1)  # 30 min: the streak has lasted unreadable_after
    [failing] = told
    assert (failing.spreadsheet_id, failing.previous, failing.current) == ("s0", "unknown", ERROR)
    [finding] = failing.findings
    assert finding.message.startswith("cannot be read since 03:00 UTC (503 Service Unavailable, ")
    record = the_bench.stored().health["s0"]
    assert record.health == ERROR and record.down_since == started

    assert run_ticks(the_bench, 12) == []  # an hour of failed probes and skips: no event each time

    the_bench.reader.script["s0"] = []  # it answers again
    the_bench.clock.advance(timedelta(hours=2).total_seconds())  # past the longest cooldown
    [recovered] = run_ticks(the_bench, 1)
    assert (recovered.previous, recovered.current) == (ERROR, OK)
    assert recovered.down_for_seconds >= timedelta(hours=3).total_seconds()
    record = the_bench.stored().health["s0"]
    assert record.health == OK and record.unreadable is None and record.findings == ()


def notified(the_bench: Bench) -> str:
    """The notifier's pass after the last run (as the app makes it), printed: what people read."""
    out = io.StringIO()
    with the_bench.session() as session:
        state = session.state
        report = notify(state, state.outbox, state.alerts, AlertSettings(summary="every_round"),
                        PrintingSender(out), the_bench.clock.now(), names={"s0": "Store 0", "s1": "Store 1"})
        state.outbox, state.alerts = report.outbox, report.memory
    return out.getvalue()


def test_failing_too_long_is_told_in_the_alert_and_reminders_and_counted_in_the_summary_and_digest():
    the_bench = hanging_bench()
    run_ticks(the_bench, 6)
    run = the_bench.run(replace(SETTINGS, unreadable_after=AFTER))
    alert, summary = notified(the_bench).split("sheet-monitor: round done")
    assert run.state.health["s0"].health == ERROR
    told = ": cannot be read since 03:00 UTC (503 Service Unavailable, 4 tries)"
    [alert_line] = [line for line in alert.splitlines() if "cannot be read" in line]
    assert "Failing now: 1" in alert and alert_line.startswith("🔴") and alert_line.endswith(told)
    assert "Failing now (1):" in summary  # (by name in the alert just above it)

    the_bench.clock.advance(timedelta(hours=5, minutes=35).total_seconds())  # 09:05: a reminder, a digest
    run_ticks(the_bench, 1)
    later = notified(the_bench)
    reminder, digest = later.split("sheet-monitor daily digest")
    assert "reminder: 1 still failing" in reminder
    assert "Store 0" in reminder and "cannot be read since 03:00 UTC (503 Service Unavailable" in reminder
    assert "Still failing (1):" in digest and "1 cannot be read" in digest  # (by name in the reminder above)


def test_the_streak_turns_failing_at_exactly_unreadable_after_and_not_a_second_before():
    record = record_failed_read(SheetHealth(), UNAVAILABLE.info(), START)
    just_before, none = judge_streak(record, START + AFTER - timedelta(seconds=1), AFTER)
    assert none is None and just_before.health != ERROR
    at, change = judge_streak(record, START + AFTER, AFTER)
    assert change is not None and at.health == ERROR
    assert at.findings[0].message == "cannot be read since 03:00 UTC (503 Service Unavailable, 1 try)"


def test_a_streak_begun_another_day_gives_the_date_and_a_timeout_says_what_it_waited_for():
    timeout = ErrorInfo(ErrorClass.TRANSIENT, "no answer within 30.0 s")
    record = record_failed_read(None, timeout, START)
    record = record_failed_read(record, timeout, START + timedelta(hours=1))
    judged, _ = judge_streak(record, START + timedelta(days=1), AFTER)
    assert judged.findings[0].message == (
        "cannot be read since 2026-01-05 03:00 UTC (no answer within 30.0 s, 2 tries)")


def test_a_health_record_from_before_streaks_upgrades_with_none_known():
    record = SheetHealth(health=OK, read_at=START, checks="f", time_zone="Etc/GMT")
    written = json.loads(HEALTH.encode(record))
    older = {key: value for key, value in written.items() if key != "unreadable"}
    assert HEALTH.version == 8  # 6 a finding's owner, 7 changes and read times, 8 its tab: read without
    assert HEALTH.validate(upgraded(HEALTH, older, 4)) == record  # its next failed read starts one
