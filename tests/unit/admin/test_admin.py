"""The operators' library (monitor.admin): pure reports and edits over a State, time passed in.

States are built from the engine's real documents and changed only through their own methods (a
round's tasks through ``Round``), as a run would leave them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from config_fixtures import secrets_folder

from monitor import admin
from monitor.config import Config, load_config
from monitor.core.errors import POISON, ErrorClass, ErrorInfo
from monitor.core.timefmt import format_utc
from monitor.engine.breaker import BreakerPolicy, BreakerState, record_failure
from monitor.engine.change_detection import FeedState
from monitor.engine.health import FAIL, OK, WARN, Finding, SheetHealth, record_skip
from monitor.engine.heartbeat import Heartbeat, RunOutcome, RunStats, StopReason
from monitor.engine.mutes import Mute
from monitor.engine.run_counts import RunCounts
from monitor.engine.runner_state import RetryFirst
from monitor.engine.tasks import FAILED, PENDING, Round, Task, tick_slack
from monitor.notify.documents import Outbox, PendingMessage
from monitor.state import State

NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
INTERVAL = timedelta(minutes=5)
FORBIDDEN = ErrorInfo("permanent", "The caller does not have permission", 403, "PERMISSION_DENIED")
UNAVAILABLE = ErrorInfo("transient", "The service is currently unavailable.", 503, "UNAVAILABLE")
ONE_FAILURE_OPENS = BreakerPolicy(failure_threshold=1, cooldown=timedelta(minutes=15),
                                  max_cooldown=timedelta(hours=4))


@dataclass(frozen=True)
class Sheet:  # what the reports need of a configured spreadsheet (admin.reports.TaggedSheet)
    id: str
    name: str
    tags: tuple[str, ...] = ()


SHEETS = [Sheet("s1", "Store 1"), Sheet("s2", "Store 2"), Sheet("s3", "Store 3"), Sheet("s4", "Store 4")]


def opened_breaker() -> BreakerState:
    opened, _ = record_failure(BreakerState(), NOW, ONE_FAILURE_OPENS, ErrorClass.TRANSIENT)
    return opened


def task_of(state: State, sid: str) -> Task:
    return next(task for task in state.round.tasks.values() if task.target == sid)


def dead_letter(state: State, sid: str, at: datetime, error: ErrorInfo = FORBIDDEN) -> None:
    """File ``sid`` in the DLQ as a run does: its task (of a round of its own) failed with ``error``."""
    rnd = Round.build([sid], at - timedelta(minutes=1))
    [task] = rnd.tasks.values()
    rnd.start(task)
    rnd.record_failure(task, at, error, 1)
    rnd.fail(task)
    state.dlq.record(sid, f"Store {sid[1:]}", task, error, at)


def state_with_round(started: datetime = NOW - timedelta(minutes=2)) -> State:
    """s1 done, s2 dead-lettered, s3 waiting for a retry in 27 s, s4 not taken yet."""
    state = State()
    state.round = rnd = Round.build([s.id for s in SHEETS], started)
    done, failed, retrying = (task_of(state, sid) for sid in ("s1", "s2", "s3"))
    for task in (done, failed, retrying):
        rnd.start(task)
    rnd.succeed(done, NOW)
    rnd.record_failure(failed, NOW, FORBIDDEN, 1)
    rnd.fail(failed)
    rnd.record_failure(retrying, NOW, UNAVAILABLE, 1)
    rnd.retry_at(retrying, NOW + timedelta(seconds=27))
    return state


def finish_round(state: State) -> None:
    for task in list(state.round.tasks.values()):
        if task.status is PENDING:
            state.round.start(task)
            state.round.succeed(task, NOW)


# -- status


def test_status_counts_the_queue_and_ages_the_oldest_pending_task():
    report = admin.status_report(state_with_round(), NOW)
    assert report["queue"] == {"pending": 2, "processing": 0, "done": 1, "failed": 1}
    assert report["current_round"]["done"] == 2 and report["current_round"]["total"] == 4
    assert report["current_round"]["complete"] is False
    assert report["oldest_pending"]["age_seconds"] == 120.0
    assert report["next_retry_at"] == format_utc(NOW + timedelta(seconds=27))


def test_status_reports_the_last_run_dlq_breakers_outbox_mutes_and_quota():
    state = state_with_round()
    state.heartbeat = Heartbeat(
        run_id="run-1", started_at=NOW - timedelta(minutes=4), budget_seconds=270,
        finished_at=NOW - timedelta(minutes=3), outcome=RunOutcome.OK,
        stats=RunStats(duration_seconds=61.5, stop_reason=StopReason.ROUND_DONE,
                       counts=RunCounts(tasks=3, reads_by_credential={"/s/sa-1.json": 2, "/s/sa-2.json": 1},
                                        reads_by_project={"shop-east": 2, "shop-west": 1}),
                       mean_read_seconds=0.42, concurrency=3))
    dead_letter(state, "s2", NOW - timedelta(hours=1))
    state.breakers["s3"] = opened_breaker()
    state.breakers["s4"] = BreakerState(consecutive_failures=1)
    state.outbox = Outbox(pending=(PendingMessage("a", "x", NOW), PendingMessage("b", "y", NOW)))
    state.mutes["s1"] = Mute(until=NOW + timedelta(hours=1), reason="r")
    state.mutes["s4"] = Mute(until=NOW - timedelta(seconds=1), reason="over")
    report = admin.status_report(state, NOW, SHEETS)
    assert report["last_run"]["outcome"] == "ok" and report["last_run"]["duration_seconds"] == 61.5
    assert report["dlq_size"] == 1
    assert report["open_breakers"] == ["s3"]  # s4's breaker only counts failures: closed
    assert report["outbox_size"] == 2 and report["outbox_halted"] is None
    assert report["muted"] == ["s1"]  # s4's mute expired
    assert report["quota_last_run"] == {
        "reads": 3, "by_credential": {"/s/sa-1.json": 2, "/s/sa-2.json": 1},
        "by_project": {"shop-east": 2, "shop-west": 1}, "mean_read_seconds": 0.42, "concurrency": 3}
    assert report["health"]["muted"] == 1 and report["health"]["unknown"] == 3
    assert report["set_aside"] == []


def test_status_of_a_run_that_has_not_finished_counts_its_duration_so_far():
    state = State(heartbeat=Heartbeat(run_id="r", started_at=NOW - timedelta(seconds=90), budget_seconds=270))
    last = admin.status_report(state, NOW)["last_run"]
    assert last["finished_at"] is None and last["duration_seconds"] == 90.0
    assert last["outcome"] == "running"


def test_status_of_a_run_that_measured_no_reads_shows_none_for_what_it_lacks():
    state = State(heartbeat=Heartbeat(run_id="r", started_at=NOW, budget_seconds=270,
                                      stats=RunStats(RunCounts(reads_by_credential={"a": 1}))))
    quota = admin.status_report(state, NOW)["quota_last_run"]
    assert quota == {"reads": 1, "by_credential": {"a": 1}, "by_project": {}, "mean_read_seconds": None,
                     "concurrency": None}


def test_status_of_an_empty_state_has_no_run_and_no_round():
    report = admin.status_report(State(), NOW)
    assert report["last_run"] is None and report["current_round"] is None
    assert report["oldest_pending"] is None and report["next_retry_at"] is None
    assert report["queue"] == {"pending": 0, "processing": 0, "done": 0, "failed": 0}


def test_status_lists_the_entries_set_aside_by_earlier_loads():
    state = State()
    state.set_aside = ["breaker/s3", "heartbeat"]
    assert admin.status_report(state, NOW)["set_aside"] == ["breaker/s3", "heartbeat"]


# -- sheets


def test_sheets_show_muted_and_skipped_as_such_and_list_the_worst_first():
    state = State(health={
        "s1": SheetHealth(OK, last_checked_at=NOW),
        "s2": SheetHealth(FAIL, findings=(Finding("a", "formula_errors", "fail", "m"),
                                          Finding("b", "threshold", "fail", "m"))),
        "s3": record_skip(SheetHealth(WARN), "breaker_open"),
    })
    state.mutes["s1"] = Mute(until=NOW + timedelta(minutes=1), reason="move")
    rows = admin.sheets_report(state, SHEETS, NOW)
    assert [(r["id"], r["shown"]) for r in rows] == [
        ("s2", "fail"), ("s3", "skipped"), ("s1", "muted"), ("s4", "unknown")]
    assert rows[0]["findings"] == 2
    assert rows[1]["health"] == "warn" and rows[1]["skipped"] == "breaker_open"
    assert rows[2]["mute_reason"] == "move"


def test_a_mute_that_expired_shows_the_real_health_again():
    state = State(health={"s1": SheetHealth(WARN)})
    state.mutes["s1"] = Mute(until=NOW, reason="x")  # expires exactly now
    assert admin.sheets_report(state, SHEETS[:1], NOW)[0]["shown"] == "warn"
    assert admin.sheets_report(state, SHEETS[:1], NOW - timedelta(seconds=1))[0]["shown"] == "muted"


def test_sheets_filter_by_shown_health():
    state = State(health={"s1": SheetHealth(OK), "s2": SheetHealth(FAIL)})
    assert [r["id"] for r in admin.sheets_report(state, SHEETS, NOW, "fail")] == ["s2"]
    assert [r["id"] for r in admin.sheets_report(state, SHEETS, NOW, "unknown")] == ["s3", "s4"]


def test_sheets_call_unchanged_only_what_the_round_judged_without_reading_it():
    earlier = NOW - timedelta(hours=1)
    state = State(health={
        "s1": SheetHealth(OK, read_at=earlier),  # left out of the round's reads: judged unchanged
        "s2": SheetHealth(OK, read_at=earlier),  # among its reads, not read yet
        "s3": record_skip(SheetHealth(OK, read_at=earlier), "muted"),  # muted: left out, not judged
        # s4: never read
    })
    state.round = Round.build(["s2"], NOW - timedelta(minutes=1), unread=1)
    rows = {row["id"]: row for row in admin.sheets_report(state, SHEETS, NOW)}
    assert {sid: row["unchanged"] for sid, row in rows.items()} == {
        "s1": True, "s2": False, "s3": False, "s4": False}
    assert rows["s1"]["read_at"] == format_utc(earlier) and rows["s4"]["read_at"] is None
    assert admin.status_report(state, NOW)["current_round"]["unread"] == 1
    state.health["s1"] = SheetHealth(OK, read_at=NOW - timedelta(minutes=1))  # read as the round began
    assert admin.sheets_report(state, SHEETS[:1], NOW)[0]["unchanged"] is False


@pytest.mark.parametrize(("feed", "enabled", "shown"), [
    (FeedState(), True, "no_position"),
    (FeedState("42", "sa-1.json", NOW), True, "ok"),
    (FeedState("42", "sa-1.json", NOW, failing_since=NOW, last_error="quota"), True, "failing"),
    (FeedState(None, "sa-1.json", NOW, failing_since=NOW, last_error="bad position"), True, "failing"),
    (FeedState("42", "sa-1.json", NOW), False, "off"),  # the next round forgets the position
])
def test_status_shows_the_change_feed_as_the_last_round_left_it(feed, enabled, shown):
    report = admin.status_report(State(feed=feed), NOW, change_detection=enabled)["change_feed"]
    assert report["state"] == shown and report["position_known"] is (feed.position is not None)
    assert report["failing_since"] == (format_utc(NOW) if feed.failing_since else None)


# -- dlq


def test_dlq_list_shows_the_latest_failure_first_with_its_error():
    state = State()
    dead_letter(state, "s1", NOW - timedelta(hours=2))
    dead_letter(state, "s2", NOW - timedelta(hours=1), ErrorInfo("permanent", "Not found", 404, "NOT_FOUND"))
    rows = admin.dlq_list(state, NOW)
    assert [r["id"] for r in rows] == ["s2", "s1"]
    assert rows[0]["http_status"] == 404 and rows[0]["error_class"] == "permanent"


def test_dlq_list_names_the_class_of_a_poisoned_task_too():
    state = State()
    state.round = rnd = Round.build(["s1"], NOW)
    task = task_of(state, "s1")
    for _ in range(3):  # three runs killed while reading it
        rnd.start(task)
        rnd.reclaim_abandoned(NOW)
    assert task.status is FAILED and task.last_error.error_class == POISON
    state.dlq.record("s1", "Store 1", task, task.last_error, NOW)
    assert admin.dlq_list(state, NOW)[0]["error_class"] == "poison"
    assert admin.dlq_show(state, "s1")["error_class"] == "poison"


def test_dlq_retry_requeues_the_task_in_a_round_the_next_run_continues():
    state = state_with_round()
    failed = task_of(state, "s2")
    dead_letter(state, "s2", NOW)
    [result] = admin.dlq_retry(state, ["s2"], NOW, INTERVAL)
    assert result["due"] == "current_round"
    assert failed.status is PENDING and failed.attempts == 0 and failed.interruptions == 0
    assert state.round.next_due(NOW).target == "s2"  # the next step takes it
    assert "s2" in state.dlq  # resolved by a successful read, not by the retry


def test_dlq_retry_after_a_finished_round_whose_interval_passed_puts_it_first_in_the_next_round():
    state = state_with_round(started=NOW - INTERVAL)
    finish_round(state)
    dead_letter(state, "s3", NOW)
    [result] = admin.dlq_retry(state, ["s3"], NOW, INTERVAL)
    assert result["due"] == "next_round"
    assert state.retry_first == RetryFirst(("s3",))
    assert state.round.is_complete()  # the old round is not reopened
    admin.dlq_retry(state, ["s3"], NOW, INTERVAL)
    assert state.retry_first == RetryFirst(("s3",))  # retrying twice lists it once


def test_dlq_retry_a_second_before_the_next_round_is_due_still_uses_the_finished_round():
    state = state_with_round(started=NOW - INTERVAL + tick_slack(INTERVAL) + timedelta(seconds=1))
    finish_round(state)
    dead_letter(state, "s3", NOW)
    assert admin.dlq_retry(state, ["s3"], NOW, INTERVAL)[0]["due"] == "current_round"
    assert not state.round.is_complete()


def test_dlq_retry_without_a_round_uses_the_next_round_and_notes_a_mute():
    state = State()
    dead_letter(state, "s1", NOW)
    state.mutes["s1"] = Mute(until=NOW + timedelta(hours=1), reason="r")
    [result] = admin.dlq_retry(state, ["s1"], NOW, INTERVAL)
    assert result == {"id": "s1", "due": "next_round", "breaker_was": None,
                      "muted_until": format_utc(NOW + timedelta(hours=1))}


def test_dlq_retry_closes_an_open_breaker_that_would_skip_it_again():
    state = state_with_round()
    dead_letter(state, "s2", NOW)
    state.breakers["s2"] = state.breakers["s1"] = opened_breaker()
    [result] = admin.dlq_retry(state, ["s2"], NOW, INTERVAL)
    assert result["breaker_was"] == "open"
    assert list(state.breakers) == ["s1"]


def test_dlq_retry_of_an_id_not_in_the_dlq_changes_nothing():
    state = state_with_round()
    dead_letter(state, "s2", NOW)
    with pytest.raises(admin.AdminError, match="not in the dead-letter queue") as caught:
        admin.dlq_retry(state, ["s2", "nope"], NOW, INTERVAL)
    assert not caught.value.usage
    assert state.retry_first == RetryFirst() and task_of(state, "s2").status is FAILED


def test_dlq_purge_one_or_all():
    state = State()
    for sid in ("s1", "s2", "s3"):
        dead_letter(state, sid, NOW)
    assert admin.dlq_purge(state, "s2") == ["s2"]
    assert sorted(state.dlq) == ["s1", "s3"]
    with pytest.raises(admin.AdminError):
        admin.dlq_purge(state, "s2")
    assert sorted(admin.dlq_purge(state)) == ["s1", "s3"]
    assert len(state.dlq) == 0


def test_dlq_show_returns_the_whole_entry():
    state = State()
    dead_letter(state, "s1", NOW)
    entry = admin.dlq_show(state, "s1")
    assert entry["last_error"]["http_status"] == 403 and entry["task"]["target"] == "s1"
    assert entry["task"]["status"] == "failed" and entry["task"]["max_attempts"] == 1  # permanent: no retry
    assert [attempt["outcome"] for attempt in entry["history"]] == ["permanent"]


# -- breakers


def test_breakers_list_open_first_with_the_next_probe_time():
    state = State(breakers={"s2": BreakerState(consecutive_failures=2), "s1": opened_breaker()})
    rows = admin.breakers_list(state, {"s1": "Store 1", "s2": "Store 2"}, NOW)
    assert [(r["id"], r["state"]) for r in rows] == [("s1", "open"), ("s2", "closed")]
    assert rows[0]["next_probe_at"] == format_utc(NOW + timedelta(minutes=15))


def test_breaker_reset_closes_it_and_a_closed_one_is_no_error():
    state = State(breakers={"s1": opened_breaker()})
    assert admin.breaker_reset(state, "s1", ["s1"]) == {"id": "s1", "was": "open", "state": "closed"}
    assert len(state.breakers) == 0
    assert admin.breaker_reset(state, "s1", ["s1"])["was"] == "closed"
    with pytest.raises(admin.AdminError) as caught:
        admin.breaker_reset(state, "unknown", ["s1"])
    assert caught.value.usage


# -- mutes


def test_mute_sets_an_end_and_a_reason_and_drops_expired_mutes():
    state = State(mutes={"s9": Mute(until=NOW - timedelta(days=1), reason="old")})
    result = admin.mute(state, SHEETS[0], timedelta(hours=2), "  moving the stock tab ", NOW)
    assert result["until"] == format_utc(NOW + timedelta(hours=2)) and result["for"] == "2h"
    assert dict(state.mutes.items()) == {
        "s1": Mute(until=NOW + timedelta(hours=2), reason="moving the stock tab", muted_at=NOW,
                   name="Store 1")}


def test_mute_needs_a_reason():
    with pytest.raises(admin.AdminError, match="reason"):
        admin.mute(State(), SHEETS[0], timedelta(hours=1), "  ", NOW)


def test_unmute_ends_a_mute_and_unmuted_is_no_error():
    state = State(mutes={"s1": Mute(until=NOW + timedelta(hours=1), reason="r")})
    assert admin.unmute(state, "s1", NOW)["was_muted"] is True
    assert len(state.mutes) == 0
    assert admin.unmute(state, "s1", NOW)["was_muted"] is False


# -- check-config plan (over a real Config, its spreadsheets listed in a CSV)


@pytest.fixture
def plan_config(tmp_path):
    """A config of ``sheets`` spreadsheets and one key file per entry of ``projects`` (its project)."""
    def write(sheets: int, projects: tuple[str, ...], interval: str = "5m", budget: str = "4m30s",
              google: str = "") -> Config:
        folder = tmp_path / f"{sheets}-{len(projects)}-{interval}-{budget}"
        folder.mkdir()
        secrets_folder(folder, projects)
        rows = ["id,name,profile"] + [f"1planSheet{n:05d}".ljust(44, "x") + f",Store {n},stock"
                                      for n in range(sheets)]
        (folder / "sheets.csv").write_text("\n".join(rows) + "\n")
        names = ", ".join(f'"secrets/sa-{n}.json"' for n in range(1, len(projects) + 1))
        (folder / "monitor.toml").write_text(
            f'sheets_file = "sheets.csv"\n[run]\nround_interval = "{interval}"\nbudget = "{budget}"\n'
            f'[google]\ncredentials = [{names}]\n{google}\n'
            '[profiles.stock]\nchecks = [{ kind = "formula_errors", range = "Stock!A1:C9" }]\n')
        return load_config(Path(folder / "monitor.toml"), {})
    return write


def one_project(credentials: int) -> tuple[str, ...]:
    return ("shop-east",) * credentials


def test_plan_says_750_spreadsheets_on_3_credentials_fit_a_5_minute_round(plan_config):
    config = plan_config(750, one_project(3))
    plan = admin.config_plan(config)
    assert plan["summary"] == ("750 spreadsheets, 3 credentials at 60/min: a full round needs at least "
                               "4.2 min of quota; round_interval 5m: fits")
    assert plan["fits"] is True and plan["credentials_needed"] == 3
    assert plan["to_add"] == {"credentials": {}, "new_projects": []}
    assert plan["warnings"] == list(config.warnings)  # the quota adds none of its own
    assert plan["reads_per_round"] == 750 and plan["ranges"] == 750


def test_plan_warns_when_a_round_does_not_fit_and_says_how_many_credentials_would(plan_config):
    config = plan_config(700, one_project(1), budget="5m")
    plan = admin.config_plan(config)
    assert plan["fits"] is False and plan["round_seconds"] == 700.0
    assert plan["credentials_needed"] == 3 and plan["to_add"]["credentials"] == {"shop-east": 2}
    assert plan["warnings"][: len(config.warnings)] == list(config.warnings)  # the config's come first
    assert "11.7 min" in plan["warnings"][-1]
    warning = plan["warnings"][-1]
    assert "2 more credentials (2 in shop-east) would fit it (you have 1 in 1 project)" in warning


def test_plan_says_when_a_full_project_needs_another_project(plan_config):
    plan = admin.config_plan(plan_config(5000, one_project(10)))
    assert plan["fits"] is False and plan["projects_needed"] == 4  # 1000 reads/min: 300 per project
    assert plan["to_add"] == {"credentials": {}, "new_projects": [5, 5, 2]}
    assert "capped by the project quota of 300/min" in plan["summary"]
    warning = plan["warnings"][-1]
    assert "12 more credentials (12 in 3 new Google Cloud projects (at most 5 each))" in warning
    assert "or set round_interval to at least 17m" in warning


def test_plan_adds_up_the_quotas_of_two_projects(plan_config):
    plan = admin.config_plan(plan_config(1200, ("shop-east",) * 5 + ("shop-west",) * 5))
    assert plan["reads_per_minute"] == 600 and plan["round_seconds"] == 120.0
    east, west = plan["projects"]
    assert east["project"] == "shop-east" and len(east["credentials"]) == 5
    assert (east["reads_per_minute"], east["round_seconds_alone"]) == (300, 240.0)
    assert west["project"] == "shop-west" and west["reads_per_minute"] == 300
    assert plan["summary"].startswith("1200 spreadsheets, 10 credentials at 60/min in 2 projects: ")
    assert plan["fits"] is True


def test_plan_fills_a_project_with_room_before_asking_for_a_new_one(plan_config):
    plan = admin.config_plan(plan_config(3600, ("shop-east",) * 5 + ("shop-west",) * 2))
    # 420 reads/min now, 720 needed: 3 more fill shop-west (180), 120 more in a new project.
    assert plan["to_add"] == {"credentials": {"shop-west": 3}, "new_projects": [2]}
    assert plan["credentials_needed"] == 12 and plan["projects_needed"] == 3
    assert "5 more credentials (3 in shop-west; 2 in 1 new Google Cloud project" in plan["warnings"][-1]


def test_plan_at_the_last_runs_read_time_counts_the_reads_in_flight(plan_config):
    config = plan_config(300, one_project(5), google="max_concurrent_reads = 2")
    typical = admin.config_plan(config)  # a window of 300 has room for more than the 2 allowed
    assert (typical["read_seconds"], typical["read_seconds_source"]) == (0.4, "typical")
    assert typical["reads_in_flight"] == 2 and typical["round_seconds"] == 60.0
    assert typical["round_seconds_at_latency"] == 60.0  # 300 x 0.4 / 2 = 60: as fast as the quota
    slow = admin.config_plan(config, read_seconds=2.5)
    assert slow["read_seconds_source"] == "last_run" and slow["reads_in_flight"] == 2
    assert slow["round_seconds_at_latency"] == 375.0 and slow["fits"] is False
    assert "6.2 min at 2.50 s a read; round_interval 5m: does not fit" in slow["summary"]
    assert slow["warnings"][-1].endswith("raise max_concurrent_reads to 3")  # 300 x 2.5 s / 3 = 250 s


def test_plan_warns_when_the_budget_leaves_less_time_to_read_than_the_request_timeout(plan_config):
    short = admin.config_plan(plan_config(10, one_project(1), budget="20s", google='request_timeout = "30s"'))
    assert short["warnings"][-1] == (
        'run.budget (20s) leaves 17s for reading, after the 3s a run keeps to save: less than '
        'google.request_timeout (30s), so a spreadsheet that takes longer than 17s to answer times out '
        'in every run and is reported as failing; set budget = "33s" or more, or request_timeout = "17s"')
    for budget in ("33s", "3s"):  # enough for a whole timeout; too short to read at all (refused)
        config = plan_config(10, one_project(1), budget=budget, google='request_timeout = "30s"')
        assert not any("for reading" in warning for warning in admin.config_plan(config)["warnings"]), budget


def test_plan_boundary_a_round_exactly_as_long_as_the_interval_fits(plan_config):
    assert admin.config_plan(plan_config(300, one_project(1)))["fits"] is True  # 300 reads at 60/min
    assert admin.config_plan(plan_config(301, one_project(1)))["fits"] is False


def test_plan_never_adds_credentials_to_a_key_that_names_no_project(plan_config):
    plan = admin.config_plan(plan_config(1000, (None, "shop-east")))
    # 200 reads/min needed, 120 now: sa-1.json is a group of its own, so shop-east takes the rest.
    assert [project["project"] for project in plan["projects"]] == ["(no project: sa-1.json)", "shop-east"]
    assert plan["to_add"] == {"credentials": {"shop-east": 2}, "new_projects": []}
