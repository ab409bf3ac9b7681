"""Every view counts the fleet alike: `status --json`, the round summary in Telegram, `report --json`
and the metrics give the same figures for any state, on the file backend and on Redis.

Generated states hold spreadsheets healthy, warning, failing, dead-lettered, paused by their breaker,
muted, under maintenance (the config's window over the first two, windows started from the chat),
never read, and ones the config no longer lists; each state is saved through the state layer and read
back from its backend, as `status` and the run's notifier read it, before every view is asked.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cli_fixtures import FORBIDDEN, write_config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metrics_fixtures import families, labelled
from prometheus_client import generate_latest
from redis_fixtures import REDIS_URL, delete_prefix, new_prefix, redis_or_skip

from monitor.admin import SHOWN_ORDER, status_report
from monitor.admin.metrics import metrics_registry
from monitor.config import load_config
from monitor.engine.breaker import OPEN, BreakerState
from monitor.engine.health import ERROR, FAIL, OK, WARN, SheetHealth, record_skip
from monitor.engine.maintenance import Maintenance, start_maintenance
from monitor.engine.mutes import Mute
from monitor.engine.tasks import Round
from monitor.notify.counts import IN_WORDS
from monitor.notify.destinations import DEFAULT
from monitor.notify.notifier import compose_all
from monitor.notify.settings import AlertSettings
from monitor.report.page_data import build_report
from monitor.state import State, changing_state, read_state
from monitor.storage.redis_store import RedisLocation
from sheet_sandbox.telegram_html import parse_html

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
CONFIGURED = [f"1countSheet{n:02d}".ljust(44, "x") for n in range(8)]
REMOVED = [f"1goneSheet{n:02d}".ljust(44, "x") for n in range(3)]
KINDS = ("ok", "warn", "fail", "dead_lettered", "paused", "paused_failing", "never_read")


def put(state: State, sid: str, kind: str, muted: bool, maintained: bool = False) -> None:
    """One spreadsheet in the state as runs (and `mute`, and the chat's `/maintenance`) leave it."""
    if kind == "never_read":
        pass
    elif kind in ("ok", "warn", "fail"):
        state.health[sid] = SheetHealth(
            {"ok": OK, "warn": WARN, "fail": FAIL}[kind], since=NOW, down_since=NOW
        )
    elif kind == "dead_lettered":
        state.health[sid] = SheetHealth(ERROR, since=NOW, down_since=NOW)
        [task] = Round.build([sid], NOW).tasks.values()
        state.dlq.record(sid, sid, task, FORBIDDEN, NOW)
    else:  # paused by an open breaker, its last verdict ok, or failing
        state.health[sid] = record_skip(
            SheetHealth(FAIL if kind == "paused_failing" else OK, since=NOW), "breaker_open"
        )
        state.breakers[sid] = BreakerState(
            OPEN, 3, opened_at=NOW, cooldown_seconds=900.0, first_opened_at=NOW
        )
    if muted:
        state.mutes[sid] = Mute(until=NOW + timedelta(hours=1), reason="moving", muted_at=NOW, name=sid)
    if maintained:
        start_maintenance(state, NOW - timedelta(minutes=30), NOW + timedelta(hours=1), "@ivan", "moving",
                          [sid])


def finished_round(started: datetime) -> Round:
    """A round of the configured spreadsheets, every task done: a summary is owed."""
    rnd = Round.build(CONFIGURED, started)
    for task in list(rnd.tasks.values()):
        rnd.start(task)
        rnd.succeed(task, NOW)
    return rnd


spreadsheet = st.tuples(st.sampled_from(KINDS), st.booleans(), st.booleans())  # kind, muted, in a chat window
fleets = st.tuples(
    st.lists(spreadsheet, min_size=len(CONFIGURED), max_size=len(CONFIGURED)),
    st.lists(spreadsheet, min_size=len(REMOVED), max_size=len(REMOVED)),
)
# The config's window, in force at NOW, over the first two configured spreadsheets.
WINDOW = f"""
[[maintenance]]
start = "{(NOW - timedelta(hours=1)).isoformat()}"
end = "{(NOW + timedelta(hours=1)).isoformat()}"
sheets = ["{CONFIGURED[0]}", "Store 2"]
reason = "moving the servers"
"""


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return load_config(write_config(tmp_path_factory.mktemp("site"), ids=CONFIGURED, extra=WINDOW))


@pytest.fixture(scope="module")
def redis_prefix():
    redis_or_skip()
    prefix = new_prefix()
    yield prefix
    delete_prefix(prefix)


def saved_and_read_back(location, configured, removed) -> State:
    """The state of ``configured`` and ``removed`` spreadsheets' (kind, muted), saved at ``location``
    (over what an earlier example left there) and read back as `status` reads it."""
    with changing_state(location, actor="test", now=NOW) as session:
        state = session.state
        for documents in (state.health, state.dlq, state.breakers, state.mutes):
            for sid in list(documents.keys()):
                del documents[sid]
        state.maintenance = Maintenance()
        for sid, spreadsheet in zip([*CONFIGURED, *REMOVED], [*configured, *removed], strict=True):
            put(state, sid, *spreadsheet)
        state.round = finished_round(NOW - timedelta(minutes=5))
    state = read_state(location)
    assert state is not None
    return state


def summary_counts(state: State, config) -> dict[str, int]:
    """The counts of the round summary the notifier composes for ``state``, read back from its words."""
    names = {sheet.id: sheet.name for sheet in config.sheets}
    _, composed = compose_all(
        state, [], state.alerts, AlertSettings(summary="every_round", digest_at=None), names, NOW,
        maintenance=config.maintenance,
    )
    [message] = composed[DEFAULT]
    text = parse_html(message.text).text
    line = text.split("sheet-monitor: round done")[1].split("\n")[1]
    words = {said: shown for shown, said in IN_WORDS.items()}
    counts = dict.fromkeys(SHOWN_ORDER, 0)
    total, _, parts = line.partition(": ")
    for part in parts.split(" · "):
        number, _, said = part.partition(" ")
        counts[words[said]] = int(number)
    assert int(total.split()[0]) == sum(counts.values())
    return counts


def all_views(state: State, config) -> dict[str, dict[str, int]]:
    status = status_report(state, NOW, config.sheets, maintenance=config.maintenance)["health"]
    page = build_report(config, state, NOW)["fleet"]["by_health"]
    metrics = families(generate_latest(metrics_registry(state, config, NOW)).decode())
    counted = {
        shown: int(count)
        for shown, count in labelled(metrics["sheet_monitor_spreadsheets"], "health").items()
    }
    return {
        "status": dict(status),
        "summary": summary_counts(state, config),
        "report": dict(page),
        "metrics": counted,
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fleet=fleets)
def test_status_the_summary_the_page_and_the_metrics_count_alike_on_the_file_backend(fleet, config, tmp_path):
    state = saved_and_read_back(Path(tmp_path) / "state", *fleet)
    views = all_views(state, config)
    assert all(counts == views["status"] for counts in views.values()), views
    assert sum(views["status"].values()) == len(CONFIGURED)  # the removed ones are in none


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fleet=fleets)
def test_status_the_summary_the_page_and_the_metrics_count_alike_on_redis(fleet, config, redis_prefix):
    state = saved_and_read_back(RedisLocation(REDIS_URL, prefix=redis_prefix), *fleet)
    views = all_views(state, config)
    assert all(counts == views["status"] for counts in views.values()), views
    assert sum(views["status"].values()) == len(CONFIGURED)


def test_a_failing_spreadsheet_paused_by_its_breaker_counts_as_failing_in_every_view(config, tmp_path):
    configured = [("ok", False, False)] * 2 + [("paused_failing", False, False)] + [("ok", False, False)] * (
        len(CONFIGURED) - 3)
    state = saved_and_read_back(tmp_path / "state", configured, [("fail", False, False)] * len(REMOVED))
    views = all_views(state, config)
    assert {name: counts["fail"] for name, counts in views.items()} == dict.fromkeys(views, 1)
    assert {name: counts["ok"] for name, counts in views.items()} == dict.fromkeys(views, len(CONFIGURED) - 3)
    assert {name: counts["maintenance"] for name, counts in views.items()} == dict.fromkeys(views, 2)


def test_spreadsheets_under_maintenance_count_as_such_in_every_view_and_a_mute_comes_first(config, tmp_path):
    # The config's window covers the first two (one of them muted); the chat's covers a failing one.
    configured = [("fail", False, False), ("fail", True, False), ("fail", False, True)] + [
        ("ok", False, False)] * (len(CONFIGURED) - 3)
    state = saved_and_read_back(tmp_path / "state", configured, [("fail", False, True)] * len(REMOVED))
    views = all_views(state, config)
    expected = {"maintenance": 2, "muted": 1, "fail": 0, "ok": len(CONFIGURED) - 3}
    for name, counts in views.items():
        assert {shown: counts[shown] for shown in expected} == expected, name
