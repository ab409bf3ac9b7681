"""The operators' library (monitor.admin): pure reports and edits over a RunnerState, time passed in."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from monitor import admin
from monitor.core.timefmt import format_utc
from monitor.engine.breaker import BreakerState, record_failure
from monitor.engine.health import SheetHealth
from monitor.engine.tasks import DONE, FAILED, Round
from monitor.state.runner_state import RunnerState

NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
INTERVAL = timedelta(minutes=5)


@dataclass(frozen=True)
class Sheet:
    id: str
    name: str


SHEETS = [Sheet("s1", "Store 1"), Sheet("s2", "Store 2"), Sheet("s3", "Store 3"), Sheet("s4", "Store 4")]


def dead_letter(state: RunnerState, sid: str, at: datetime, status: int = 403) -> None:
    error = {"error_class": "permanent", "http_status": status, "google_status": "PERMISSION_DENIED",
             "message": "The caller does not have permission"}
    state.dlq.record(sid, f"Store {sid[1:]}", {"id": f"t-{sid}", "history": []}, error, at)


def state_with_round(started: datetime = NOW - timedelta(minutes=2)) -> RunnerState:
    state = RunnerState()
    state.round = Round.build([s.id for s in SHEETS], started)
    tasks = list(state.round.tasks.values())
    tasks[0].status = DONE
    tasks[1].status = FAILED
    state.round.schedule_retry(tasks[2], NOW + timedelta(seconds=27))
    return state


# -- status


def test_status_counts_the_queue_and_ages_the_oldest_pending_task():
    state = state_with_round()
    report = admin.status_report(state, NOW)
    assert report["queue"] == {"pending": 2, "processing": 0, "done": 1, "failed": 1}
    assert report["current_round"]["done"] == 2 and report["current_round"]["total"] == 4
    assert report["current_round"]["complete"] is False
    assert report["oldest_pending"]["age_seconds"] == 120.0
    assert report["next_retry_at"] == format_utc(NOW + timedelta(seconds=27))


def test_status_reports_the_last_run_dlq_breakers_outbox_mutes_and_quota():
    state = state_with_round()
    state.heartbeat = {
        "run_id": "run-1", "started_at": format_utc(NOW - timedelta(minutes=4)),
        "finished_at": format_utc(NOW - timedelta(minutes=3)), "outcome": "ok",
        "stats": {"duration_seconds": 61.5, "stop_reason": "round_done", "tasks": 3,
                  "reads_by_credential": {"/s/sa-1.json": 2, "/s/sa-2.json": 1}},
    }
    dead_letter(state, "s2", NOW - timedelta(hours=1))
    opened, _ = record_failure(BreakerState(), NOW, threshold=1)
    state.breakers = {"s3": opened.to_dict(), "s4": BreakerState(consecutive_failures=1).to_dict()}
    state.outbox = {"pending": [{"key": "a"}, {"key": "b"}], "halted": None}
    state.mutes = {"s1": {"until": format_utc(NOW + timedelta(hours=1)), "reason": "r"},
                   "s4": {"until": format_utc(NOW - timedelta(seconds=1)), "reason": "over"}}
    report = admin.status_report(state, NOW, SHEETS)
    assert report["last_run"]["outcome"] == "ok" and report["last_run"]["duration_seconds"] == 61.5
    assert report["dlq_size"] == 1
    assert report["open_breakers"] == ["s3"]  # s4's breaker only counts failures: closed
    assert report["outbox_size"] == 2
    assert report["muted"] == ["s1"]  # s4's mute expired
    assert report["quota_last_run"] == {"reads": 3, "by_credential": {"/s/sa-1.json": 2, "/s/sa-2.json": 1}}
    assert report["health"]["muted"] == 1 and report["health"]["unknown"] == 3


def test_status_of_a_run_that_has_not_finished_counts_its_duration_so_far():
    state = RunnerState(heartbeat={"run_id": "r", "started_at": format_utc(NOW - timedelta(seconds=90)),
                                   "finished_at": None, "outcome": "running"})
    last = admin.status_report(state, NOW)["last_run"]
    assert last["finished_at"] is None and last["duration_seconds"] == 90.0


def test_status_of_an_empty_state_has_no_run_and_no_round():
    report = admin.status_report(RunnerState(), NOW)
    assert report["last_run"] is None and report["current_round"] is None
    assert report["oldest_pending"] is None and report["next_retry_at"] is None


# -- sheets


def test_sheets_show_muted_and_skipped_as_such_and_list_the_worst_first():
    state = RunnerState()
    state.sheets = {
        "s1": SheetHealth(health="ok", last_checked_at=format_utc(NOW)),
        "s2": SheetHealth(health="fail", findings=[{"check": "a"}, {"check": "b"}]),
        "s3": SheetHealth(health="error", skipped="breaker_open"),
    }
    state.mutes = {"s1": {"until": format_utc(NOW + timedelta(minutes=1)), "reason": "move"}}
    rows = admin.sheets_report(state, SHEETS, NOW)
    assert [(r["id"], r["shown"]) for r in rows] == [
        ("s2", "fail"), ("s3", "skipped"), ("s1", "muted"), ("s4", "unknown")]
    assert rows[0]["findings"] == 2
    assert rows[1]["health"] == "error" and rows[1]["skipped"] == "breaker_open"
    assert rows[2]["mute_reason"] == "move"


def test_a_mute_that_expired_shows_the_real_health_again():
    state = RunnerState(sheets={"s1": SheetHealth(health="warn")})
    state.mutes = {"s1": {"until": format_utc(NOW), "reason": "x"}}  # expires exactly now
    assert admin.sheets_report(state, SHEETS[:1], NOW)[0]["shown"] == "warn"
    assert admin.sheets_report(state, SHEETS[:1], NOW - timedelta(seconds=1))[0]["shown"] == "muted"


def test_sheets_filter_by_shown_health():
    state = RunnerState(sheets={"s1": SheetHealth(health="ok"), "s2": SheetHealth(health="fail")})
    assert [r["id"] for r in admin.sheets_report(state, SHEETS, NOW, "fail")] == ["s2"]
    assert [r["id"] for r in admin.sheets_report(state, SHEETS, NOW, "unknown")] == ["s3", "s4"]


# -- dlq


def test_dlq_list_shows_the_latest_failure_first_with_its_error():
    state = RunnerState()
    dead_letter(state, "s1", NOW - timedelta(hours=2))
    dead_letter(state, "s2", NOW - timedelta(hours=1), status=404)
    rows = admin.dlq_list(state, NOW)
    assert [r["id"] for r in rows] == ["s2", "s1"]
    assert rows[0]["http_status"] == 404 and rows[0]["error_class"] == "permanent"


def test_dlq_list_names_the_class_of_a_poisoned_task_too():
    state = RunnerState()
    poison = {"error_class": "poison", "message": "the run was killed 3 times while checking it"}
    state.dlq.record("s1", "Store 1", {"id": "t"}, poison, NOW)
    assert admin.dlq_list(state, NOW)[0]["error_class"] == "poison"
    assert admin.dlq_show(state, "s1")["error_class"] == "poison"


def test_dlq_retry_requeues_the_task_in_a_round_the_next_run_continues():
    state = state_with_round()
    failed = next(t for t in state.round.tasks.values() if t.status == FAILED)
    failed.interruptions = 3
    dead_letter(state, failed.target, NOW)
    [result] = admin.dlq_retry(state, [failed.target], NOW, INTERVAL)
    assert result["due"] == "current_round"
    assert failed.status == "pending" and failed.attempts == 0 and failed.interruptions == 0
    assert state.round.next_due(NOW).target == failed.target  # the next step takes it
    assert failed.target in state.dlq  # resolved by a successful read, not by the retry


def test_dlq_retry_after_a_finished_round_whose_interval_passed_puts_it_first_in_the_next_round():
    state = state_with_round(started=NOW - INTERVAL)
    for task in state.round.tasks.values():
        task.status = DONE
    dead_letter(state, "s3", NOW)
    [result] = admin.dlq_retry(state, ["s3"], NOW, INTERVAL)
    assert result["due"] == "next_round"
    assert state.flags[admin.RETRY_FIRST] == ["s3"]
    assert state.round.is_complete()  # the old round is not reopened
    admin.dlq_retry(state, ["s3"], NOW, INTERVAL)
    assert state.flags[admin.RETRY_FIRST] == ["s3"]  # retrying twice lists it once


def test_dlq_retry_a_second_before_the_interval_ends_still_uses_the_finished_round():
    state = state_with_round(started=NOW - INTERVAL + timedelta(seconds=1))
    for task in state.round.tasks.values():
        task.status = DONE
    dead_letter(state, "s3", NOW)
    assert admin.dlq_retry(state, ["s3"], NOW, INTERVAL)[0]["due"] == "current_round"
    assert not state.round.is_complete()


def test_dlq_retry_without_a_round_uses_the_next_round_and_notes_a_mute():
    state = RunnerState()
    dead_letter(state, "s1", NOW)
    state.mutes = {"s1": {"until": format_utc(NOW + timedelta(hours=1)), "reason": "r"}}
    [result] = admin.dlq_retry(state, ["s1"], NOW, INTERVAL)
    assert result == {"id": "s1", "due": "next_round", "breaker_was": None,
                      "muted_until": format_utc(NOW + timedelta(hours=1))}


def test_dlq_retry_closes_an_open_breaker_that_would_skip_it_again():
    state = state_with_round()
    dead_letter(state, "s2", NOW)
    opened, _ = record_failure(BreakerState(), NOW, threshold=1)
    state.breakers = {"s2": opened.to_dict(), "s1": opened.to_dict()}
    [result] = admin.dlq_retry(state, ["s2"], NOW, INTERVAL)
    assert result["breaker_was"] == "open"
    assert list(state.breakers) == ["s1"]


def test_dlq_retry_of_an_id_not_in_the_dlq_changes_nothing():
    state = state_with_round()
    dead_letter(state, "s1", NOW)
    with pytest.raises(admin.AdminError, match="not in the dead-letter queue") as caught:
        admin.dlq_retry(state, ["s1", "nope"], NOW, INTERVAL)
    assert not caught.value.usage
    assert admin.RETRY_FIRST not in state.flags


def test_dlq_purge_one_or_all():
    state = RunnerState()
    for sid in ("s1", "s2", "s3"):
        dead_letter(state, sid, NOW)
    assert admin.dlq_purge(state, "s2") == ["s2"]
    assert sorted(state.dlq.entries) == ["s1", "s3"]
    with pytest.raises(admin.AdminError):
        admin.dlq_purge(state, "s2")
    assert sorted(admin.dlq_purge(state)) == ["s1", "s3"]
    assert len(state.dlq) == 0


def test_dlq_show_returns_the_whole_entry():
    state = RunnerState()
    dead_letter(state, "s1", NOW)
    entry = admin.dlq_show(state, "s1")
    assert entry["last_error"]["http_status"] == 403 and entry["task"]["id"] == "t-s1"


# -- breakers


def test_breakers_list_open_first_with_the_next_probe_time():
    opened, _ = record_failure(BreakerState(), NOW, threshold=1, base_cooldown=900)
    closed = BreakerState(consecutive_failures=2)
    state = RunnerState(breakers={"s2": closed.to_dict(), "s1": opened.to_dict()})
    rows = admin.breakers_list(state, {"s1": "Store 1", "s2": "Store 2"}, NOW)
    assert [(r["id"], r["state"]) for r in rows] == [("s1", "open"), ("s2", "closed")]
    assert rows[0]["next_probe_at"] == format_utc(NOW + timedelta(minutes=15))


def test_breaker_reset_closes_it_and_a_closed_one_is_no_error():
    opened, _ = record_failure(BreakerState(), NOW, threshold=1)
    state = RunnerState(breakers={"s1": opened.to_dict()})
    assert admin.breaker_reset(state, "s1", ["s1"]) == {"id": "s1", "was": "open", "state": "closed"}
    assert state.breakers == {}
    assert admin.breaker_reset(state, "s1", ["s1"])["was"] == "closed"
    with pytest.raises(admin.AdminError) as caught:
        admin.breaker_reset(state, "unknown", ["s1"])
    assert caught.value.usage


# -- mutes


def test_mute_sets_an_end_and_a_reason_and_drops_expired_mutes():
    state = RunnerState(mutes={"s9": {"until": format_utc(NOW - timedelta(days=1)), "reason": "old"}})
    result = admin.mute(state, SHEETS[0], timedelta(hours=2), "  moving the stock tab ", NOW)
    assert result["until"] == format_utc(NOW + timedelta(hours=2)) and result["for"] == "2h"
    assert state.mutes == {"s1": {"until": result["until"], "reason": "moving the stock tab",
                                  "muted_at": format_utc(NOW)}}


def test_mute_needs_a_reason():
    with pytest.raises(admin.AdminError, match="reason"):
        admin.mute(RunnerState(), SHEETS[0], timedelta(hours=1), "  ", NOW)


def test_unmute_ends_a_mute_and_unmuted_is_no_error():
    state = RunnerState(mutes={"s1": {"until": format_utc(NOW + timedelta(hours=1)), "reason": "r"}})
    assert admin.unmute(state, "s1", NOW)["was_muted"] is True
    assert state.mutes == {}
    assert admin.unmute(state, "s1", NOW)["was_muted"] is False


# -- check-config plan


def config(sheets: int, credentials: int, interval_minutes: float = 5, per: int = 60, project: int = 300,
           budget_minutes: float = 4.5, warnings=()):
    check = SimpleNamespace(kind="formula_errors", range="Stock!A1:C9")
    return SimpleNamespace(
        path=Path("/etc/monitor.toml"),
        run=SimpleNamespace(round_interval=timedelta(minutes=interval_minutes),
                            budget=timedelta(minutes=budget_minutes), state_dir=Path("/var/state")),
        google=SimpleNamespace(credentials=tuple(f"sa-{n}.json" for n in range(credentials)),
                               read_requests_per_minute=per, project_read_requests_per_minute=project),
        sheets=[SimpleNamespace(id=f"s{n}", checks=(check,), needs_modified_time=False)
                for n in range(sheets)],
        warnings=tuple(warnings),
    )


def test_plan_says_750_spreadsheets_on_3_credentials_fit_a_5_minute_round():
    plan = admin.config_plan(config(750, 3))
    assert plan["summary"] == ("750 spreadsheets, 3 credentials at 60/min: a full round needs at least "
                               "4.2 min of quota; round_interval 5m: fits")
    assert plan["fits"] is True and plan["credentials_needed"] == 3 and plan["warnings"] == []
    assert plan["reads_per_round"] == 750 and plan["ranges"] == 750


def test_plan_warns_when_a_round_does_not_fit_and_says_how_many_credentials_would():
    plan = admin.config_plan(config(700, 1, warnings=["budget warning"]))
    assert plan["fits"] is False and plan["round_seconds"] == 700.0
    assert plan["credentials_needed"] == 3
    assert plan["warnings"][0] == "budget warning"
    assert "11.7 min" in plan["warnings"][1]
    assert "3 credentials would fit it (you have 1)" in plan["warnings"][1]


def test_plan_says_when_only_a_larger_project_quota_or_interval_helps():
    plan = admin.config_plan(config(5000, 10))
    assert plan["credentials_needed"] is None and plan["fits"] is False
    assert "capped by the project quota of 300/min" in plan["summary"]
    assert "set round_interval to at least 17m" in plan["warnings"][0]


def test_plan_boundary_a_round_exactly_as_long_as_the_interval_fits():
    assert admin.config_plan(config(300, 1))["fits"] is True  # 300 reads at 60/min = 5 min
    assert admin.config_plan(config(301, 1))["fits"] is False
