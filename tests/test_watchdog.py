"""The watchdog: pure verdicts and transitions, one pass over real files with the fake Telegram over
real HTTP, the external heartbeat ping, and the console script in a fresh interpreter.

Time is a ManualClock (or a ``now`` argument); nothing sleeps.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from telegram_fixtures import TOKEN, closed_port_url, fake_telegram

from monitor.core.clock import ManualClock
from monitor.core.timefmt import format_utc
from monitor.notify.heartbeat_ping import ping_heartbeat
from monitor.notify.outbox import chat_id_for
from monitor.notify.telegram import PrintingSender, TelegramSender
from monitor.sandbox.http import HTTPServerThread, Request, Response
from monitor.sandbox.telegram import FakeTelegram
from monitor.state.runner_state import HEARTBEAT, RUNS
from monitor.storage import FileStore, FlockLock
from monitor.watchdog.judge import (
    FAILING,
    HEALTHY,
    SILENT,
    STATE_MISSING,
    STATE_UNREADABLE,
    STUCK,
    WatchdogSettings,
    advance,
    evaluate,
)
from monitor.watchdog.watch import WATCHDOG_FILE_NAME, watchdog_pass

CHAT = 4242
SETTINGS = WatchdogSettings(label="vps-1")
T0 = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)  # the night Europe's clocks go forward: UTC does not care
REPO = Path(__file__).resolve().parents[1]


def heartbeat(finished_at: datetime | None, started_at: datetime | None = None, outcome: str = "ok",
              budget: float = 360.0, run_id: str = "run-1") -> dict:
    started_at = started_at or (finished_at - timedelta(minutes=1) if finished_at else T0)
    return {
        "run_id": run_id,
        "started_at": format_utc(started_at),
        "finished_at": format_utc(finished_at) if finished_at else None,
        "outcome": outcome if finished_at else "running",
        "budget_seconds": budget,
        "stats": {},
    }


def runs_every_5_minutes(first_finish: datetime, count: int, outcome: str = "ok") -> list[dict]:
    return [
        {
            "run_id": f"run-{i}",
            "started_at": format_utc(first_finish + timedelta(minutes=5 * i - 1)),
            "finished_at": format_utc(first_finish + timedelta(minutes=5 * i)),
            "outcome": outcome,
        }
        for i in range(count)
    ]


def judge(hb: dict | None, runs: list[dict], now: datetime, **settings) -> str:
    chosen = WatchdogSettings(**settings) if settings else SETTINGS
    return evaluate(hb, runs, True, now, chosen).status


# ---- pure verdicts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("age", "expected"),
    [
        (timedelta(minutes=15) - timedelta(seconds=1), HEALTHY),
        (timedelta(minutes=15), HEALTHY),  # "at" max_silence is still within the allowed silence
        (timedelta(minutes=15) + timedelta(seconds=1), SILENT),
    ],
    ids=["just-before", "at", "just-after"],
)
def test_silence_boundary_is_inclusive_of_max_silence(age, expected):
    finished = T0 - age
    assert judge(heartbeat(finished), [], T0) == expected


def test_the_newest_finish_counts_whether_it_is_in_runs_or_the_heartbeat():
    runs = runs_every_5_minutes(T0 - timedelta(hours=1), 3)
    running_now = heartbeat(None, started_at=T0 - timedelta(minutes=1))
    assert judge(running_now, runs, T0) == SILENT  # the latest finish is 50 min old
    runs.append({"run_id": "x", "started_at": format_utc(T0 - timedelta(minutes=3)),
                 "finished_at": format_utc(T0 - timedelta(minutes=2)), "outcome": "ok"})
    assert judge(running_now, runs, T0) == HEALTHY


@pytest.mark.parametrize(
    ("running_for", "expected"),
    [
        (timedelta(minutes=8) - timedelta(seconds=1), HEALTHY),
        (timedelta(minutes=8), HEALTHY),
        (timedelta(minutes=8) + timedelta(seconds=1), STUCK),
    ],
    ids=["just-before", "at", "just-after"],
)
def test_a_run_past_budget_plus_grace_is_stuck(running_for, expected):
    # budget 6 min + stuck_grace 2 min; the previous run finished recently, so silence is no issue.
    started = T0 - running_for
    runs = runs_every_5_minutes(started - timedelta(minutes=1), 1)
    hb = heartbeat(None, started_at=started, budget=360)
    verdict = evaluate(hb, runs, True, T0, WatchdogSettings(max_silence=timedelta(minutes=30)))
    assert verdict.status == expected
    if expected == STUCK:
        assert "run-1" in verdict.reason and "6m" in verdict.reason
        assert verdict.began_at == started


def test_a_stuck_run_is_named_before_the_silence_it_causes():
    started = T0 - timedelta(minutes=40)
    verdict = evaluate(heartbeat(None, started_at=started), runs_every_5_minutes(started, 1), True, T0,
                       SETTINGS)
    assert verdict.status == STUCK


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        (["ok", "degraded", "degraded", "degraded"], FAILING),
        (["ok", "ok", "degraded", "degraded"], HEALTHY),
        (["degraded", "degraded", "degraded", "ok"], HEALTHY),
        (["degraded", "degraded", "nothing_to_do"], HEALTHY),
    ],
)
def test_the_last_n_runs_failing_is_an_outage(outcomes, expected):
    runs = runs_every_5_minutes(T0 - timedelta(minutes=5 * len(outcomes)), len(outcomes))
    for run, outcome in zip(runs, outcomes, strict=True):
        run["outcome"] = outcome
    last = runs[-1]
    hb = heartbeat(datetime.fromisoformat(last["finished_at"].replace("Z", "+00:00")),
                   outcome=last["outcome"])
    verdict = evaluate(hb, runs, True, T0, SETTINGS)
    assert verdict.status == expected
    if expected == FAILING:
        assert "3 runs" in verdict.reason and "degraded" in verdict.reason


def test_missing_and_unreadable_state_are_verdicts_of_their_own():
    assert judge(None, [], T0) == STATE_MISSING
    verdict = evaluate({}, [], False, T0, SETTINGS, error="not JSON at line 1")
    assert verdict.status == STATE_UNREADABLE and "not JSON at line 1" in verdict.reason
    assert judge({}, [], T0) == SILENT  # a state no run ever wrote a heartbeat into


def test_stored_times_with_another_offset_compare_as_the_same_instant():
    moscow = timezone(timedelta(hours=3))
    hb = heartbeat(T0 - timedelta(minutes=10))
    hb["finished_at"] = (T0 - timedelta(minutes=10)).astimezone(moscow).isoformat()
    assert judge(hb, [], T0) == HEALTHY


def test_naive_now_is_refused():
    with pytest.raises(ValueError, match="naive"):
        evaluate({}, [], True, datetime(2026, 1, 1), SETTINGS)


# ---- pure transitions ------------------------------------------------------------------------------


def test_one_alert_per_outage_reminders_at_the_slow_interval_then_one_recovery():
    settings = WatchdogSettings(reminder_every=timedelta(hours=4))
    last_run = T0 - timedelta(minutes=20)
    silent = evaluate(heartbeat(last_run), [], True, T0, settings)
    first = advance(None, silent, T0, settings)
    assert first.kind == "alert" and len(first.messages) == 1
    assert first.memory["status"] == SILENT and first.memory["since"] == format_utc(last_run)

    memory = first.memory
    for minutes in (15, 30, 4 * 60 - 1):
        now = T0 + timedelta(minutes=minutes)
        decision = advance(memory, evaluate(heartbeat(last_run), [], True, now, settings), now, settings)
        assert decision.messages == ()
        memory = decision.memory
    now = T0 + timedelta(hours=4)
    reminder = advance(memory, evaluate(heartbeat(last_run), [], True, now, settings), now, settings)
    assert reminder.kind == "reminder" and "Still down" in reminder.messages[0].text
    assert "4h20m" in reminder.messages[0].text  # down since the last finished run


def test_a_change_of_kind_within_an_outage_sends_nothing_until_the_reminder():
    stuck = evaluate(heartbeat(None, started_at=T0 - timedelta(minutes=9)),
                     runs_every_5_minutes(T0 - timedelta(minutes=10), 1), True, T0, SETTINGS)
    assert stuck.status == STUCK
    alerted = advance(None, stuck, T0, SETTINGS)
    later = T0 + timedelta(minutes=15)
    silent = evaluate(heartbeat(T0 - timedelta(minutes=10)), [], True, later, SETTINGS)
    decision = advance(alerted.memory, silent, later, SETTINGS)
    assert decision.messages == () and decision.memory["status"] == SILENT
    assert decision.memory["since"] == alerted.memory["since"]


def test_recovery_reports_the_outage_from_the_last_good_run_to_the_first_good_one_after_it():
    last_good = T0 - timedelta(minutes=20)
    alerted = advance(None, evaluate(heartbeat(last_good), [], True, T0, SETTINGS), T0, SETTINGS)
    resumed_at = T0 + timedelta(minutes=25)
    runs = runs_every_5_minutes(last_good - timedelta(minutes=10), 3)  # up to the last good run
    runs += runs_every_5_minutes(resumed_at, 3)
    now = resumed_at + timedelta(minutes=12)
    healthy = evaluate(heartbeat(resumed_at + timedelta(minutes=10)), runs, True, now, SETTINGS)
    assert healthy.status == HEALTHY and healthy.healthy_since == resumed_at
    decision = advance(alerted.memory, healthy, now, SETTINGS)
    assert decision.kind == "recovered" and len(decision.messages) == 1
    assert "lasted 45m" in decision.messages[0].text  # 20 min before T0 to 25 min after
    assert decision.memory["status"] == HEALTHY
    again = advance(decision.memory, healthy, now + timedelta(minutes=15), SETTINGS)
    assert again.messages == ()


# ---- one pass over real files, the fake Telegram over real HTTP --------------------------------------


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def fake(clock: ManualClock) -> FakeTelegram:
    return fake_telegram(clock, {CHAT: "Ops"})


class PingCounter:
    def __init__(self, status: int = 200) -> None:
        self.paths: list[str] = []
        self.status = status

    def __call__(self, request: Request) -> Response:
        self.paths.append(request.raw_path)
        return Response(self.status, b"OK", "text/plain")


@pytest.fixture
def pings():
    counter = PingCounter()
    with HTTPServerThread(counter) as server:
        counter.url = f"{server.base_url}/ping/3f1c"
        yield counter


def write_runner_state(state_dir: Path, hb: dict, runs: list[dict] | None = None) -> None:
    with FileStore.in_dir(state_dir) as store:
        store.set_properties({HEARTBEAT: json.dumps(hb), RUNS: json.dumps(runs or [])})


class Watchdog:
    """Runs passes against one state folder, sending to the fake through real HTTP."""

    def __init__(self, state_dir, clock, server, http, api_base=None, ping_url=None):
        self.state_dir, self.clock, self.http = state_dir, clock, http
        self.api_base = api_base or server.base_url
        self.ping_url = ping_url

    def sender(self, outbox: dict) -> TelegramSender:
        return TelegramSender(TOKEN, chat_id_for(outbox, CHAT), self.api_base, client=self.http,
                              clock=self.clock)

    def run(self, **kwargs):
        return watchdog_pass(self.state_dir, SETTINGS, self.sender, self.clock.now(),
                             heartbeat_url=self.ping_url, **kwargs)


@pytest.fixture
def dog(tmp_path, clock, server, http, pings) -> Watchdog:
    return Watchdog(tmp_path / "state", clock, server, http, ping_url=pings.url)


def texts(fake: FakeTelegram) -> list[str]:
    return [message.text for message in fake.messages(CHAT)]


def test_a_heartbeat_20_minutes_old_alerts_once_and_a_pass_15_minutes_later_says_nothing(
        dog, clock, fake, pings):
    write_runner_state(dog.state_dir, heartbeat(T0 - timedelta(minutes=20)))
    report = dog.run()
    assert report.verdict.status == SILENT and report.said == "alert" and not report.delivery_failed
    assert len(texts(fake)) == 1
    assert "Monitor runs stopped" in texts(fake)[0] and "vps-1" in texts(fake)[0]
    assert "20m ago" in texts(fake)[0]
    assert pings.paths == []  # an unhealthy pass does not tell the outside world all is well

    clock.advance(15 * 60)
    report = dog.run()
    assert report.verdict.status == SILENT and report.said is None
    assert len(texts(fake)) == 1


def test_runs_resuming_give_one_recovered_message_with_the_outage_length(dog, clock, fake, pings):
    last_good = T0 - timedelta(minutes=20)
    write_runner_state(dog.state_dir, heartbeat(last_good), runs_every_5_minutes(last_good, 1))
    dog.run()
    clock.advance(30 * 60)  # runs resumed 10 minutes ago, every 5 minutes
    resumed = T0 + timedelta(minutes=20)
    runs = runs_every_5_minutes(last_good, 1) + runs_every_5_minutes(resumed, 3)
    write_runner_state(dog.state_dir, heartbeat(resumed + timedelta(minutes=10)), runs)
    report = dog.run()
    assert report.said == "recovered"
    assert len(texts(fake)) == 2
    assert "healthy again" in texts(fake)[1] and "lasted 40m" in texts(fake)[1]
    assert pings.paths == ["/ping/3f1c"]

    clock.advance(15 * 60)
    write_runner_state(dog.state_dir, heartbeat(clock.now() - timedelta(minutes=2)), runs)
    assert dog.run().said is None
    assert len(texts(fake)) == 2
    assert len(pings.paths) == 2  # each healthy pass pings


def test_a_missing_state_file_alerts(dog, fake):
    report = dog.run()
    assert report.verdict.status == STATE_MISSING
    assert "state file missing" in texts(fake)[0]


def test_an_unreadable_state_file_alerts_without_touching_it(dog, fake):
    dog.state_dir.mkdir(parents=True)
    for name in ("properties.json", "properties.json.bak"):
        (dog.state_dir / name).write_text("{torn")
    report = dog.run()
    assert report.verdict.status == STATE_UNREADABLE
    assert "unreadable" in texts(fake)[0]
    assert (dog.state_dir / "properties.json").read_text() == "{torn"


def test_the_pass_reads_while_a_run_holds_the_run_lock(dog, fake):
    write_runner_state(dog.state_dir, heartbeat(T0 - timedelta(minutes=20)))
    lock = FlockLock.in_dir(dog.state_dir)
    assert lock.try_acquire()
    try:
        assert dog.run().said == "alert"
    finally:
        lock.release()
    assert len(texts(fake)) == 1


def test_the_watchdog_keeps_its_memory_in_its_own_private_file(dog):
    write_runner_state(dog.state_dir, heartbeat(T0 - timedelta(minutes=20)))
    before = (dog.state_dir / "properties.json").read_bytes()
    dog.run()
    own = dog.state_dir / WATCHDOG_FILE_NAME
    document = json.loads(own.read_text())
    assert document["alert"]["status"] == SILENT
    assert document["outbox"]["pending"] == [] and len(document["outbox"]["sent_keys"]) == 1
    assert oct(own.stat().st_mode & 0o777) == "0o600"
    assert (dog.state_dir / "properties.json").read_bytes() == before  # the runner's file untouched


@pytest.mark.parametrize("outbox", [
    {"pending": None},
    {"pending": [{"text": "a message without its key"}]},
    {"pending": [], "migrations": ["not", "a", "mapping"]},
])
def test_a_damaged_outbox_in_its_own_file_starts_afresh_instead_of_failing_every_pass(dog, fake, outbox):
    write_runner_state(dog.state_dir, heartbeat(T0 - timedelta(minutes=20)))
    (dog.state_dir / WATCHDOG_FILE_NAME).write_text(json.dumps({"version": 1, "alert": {}, "outbox": outbox}))
    report = dog.run()
    assert report.said == "alert" and not report.delivery_failed
    assert len(texts(fake)) == 1


def test_a_telegram_outage_loses_nothing_and_duplicates_nothing(tmp_path, clock, server, http, fake):
    write_runner_state(tmp_path, heartbeat(T0 - timedelta(minutes=20)))
    down = Watchdog(tmp_path, clock, server, http, api_base=closed_port_url())
    report = down.run()
    assert report.said == "alert" and report.delivery_failed and report.undelivered == 1
    clock.advance(15 * 60)
    assert down.run().delivery_failed  # still down: still owed, nothing composed twice
    assert len(json.loads((tmp_path / WATCHDOG_FILE_NAME).read_text())["outbox"]["pending"]) == 1

    clock.advance(15 * 60)
    up = Watchdog(tmp_path, clock, server, http)
    report = up.run()
    assert not report.delivery_failed
    assert len(texts(fake)) == 1 and "Monitor runs stopped" in texts(fake)[0]


def test_a_backlog_left_by_the_send_budget_is_not_a_delivery_failure(dog, fake):
    write_runner_state(dog.state_dir, heartbeat(T0 - timedelta(minutes=20)))
    held = [{"key": f"held-{n}", "text": f"held {n}", "created_at": format_utc(T0), "attempts": 1,
             "last_error": None} for n in range(2)]
    document = {"version": 1, "alert": {}, "outbox": {"pending": held}}
    (dog.state_dir / WATCHDOG_FILE_NAME).write_text(json.dumps(document))
    report = dog.run(send_budget=2)
    assert [result.outcome for result in report.results] == ["sent", "sent"]
    assert report.undelivered == 1 and not report.delivery_failed  # the alert goes next pass
    assert texts(fake) == ["held 0", "held 1"]


def test_without_telegram_the_alert_is_printed(tmp_path, clock):
    write_runner_state(tmp_path, heartbeat(T0 - timedelta(minutes=20)))
    out = io.StringIO()
    report = watchdog_pass(tmp_path, SETTINGS, lambda outbox: PrintingSender(out), clock.now())
    assert not report.delivery_failed
    assert "Monitor runs stopped" in out.getvalue() and "<b>" not in out.getvalue()


# ---- the external heartbeat --------------------------------------------------------------------------


def test_ping_heartbeat_gets_the_url_once(pings, http):
    assert ping_heartbeat(pings.url, http) is True
    assert pings.paths == ["/ping/3f1c"]


def test_a_failing_ping_is_logged_never_raised(pings, caplog):
    pings.status = 503
    assert ping_heartbeat(pings.url) is False
    assert ping_heartbeat(closed_port_url() + "/ping/secret-uuid", timeout=1) is False
    logged = " ".join(str(getattr(r, "fields", "")) for r in caplog.records)
    assert "heartbeat_ping_failed" in caplog.text and "secret-uuid" not in logged + caplog.text


# ---- the console script, in a fresh interpreter -------------------------------------------------------

_RUN_CLI = textwrap.dedent("""
    import json, sys
    from monitor.cli.watchdog import watchdog_command  # what the sheet-watchdog script runs
    try:
        watchdog_command.main(args=sys.argv[1:], prog_name="sheet-watchdog", standalone_mode=False)
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("gspread", "google"))
    print(json.dumps({"code": code, "google_modules": loaded}), file=sys.stderr)
    sys.exit(code)
""")


def run_cli(config: Path, env_extra: dict[str, str]) -> tuple[int, dict, str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "SHEET_MONITOR_"))}
    env.update(env_extra)
    done = subprocess.run([sys.executable, "-c", _RUN_CLI, "--config", str(config)], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=60)
    summary = json.loads(done.stderr.strip().splitlines()[-1])
    return done.returncode, summary, done.stdout, done.stderr


def write_config(folder: Path, telegram_base: str | None, ping_url: str | None = None) -> Path:
    # credentials are never opened by the watchdog; an empty list works around config.py refusing its
    # own default when [google] is left out (reported to its owner).
    lines = ['[run]', 'state_dir = "state"', '[google]', 'credentials = []', '[watchdog]',
             'max_silence = "15m"']
    if ping_url:
        lines.append(f'heartbeat_url = "{ping_url}"')
    if telegram_base:
        lines += ['[telegram]', f'chat_id = "{CHAT}"', f'api_base = "{telegram_base}"']
    path = folder / "monitor.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_sheet_watchdog_alerts_through_telegram_without_loading_the_google_stack(tmp_path, server, fake):
    config = write_config(tmp_path, server.base_url)
    write_runner_state(tmp_path / "state", heartbeat(datetime.now(UTC) - timedelta(minutes=20)))
    code, summary, _, stderr = run_cli(config, {"TELEGRAM_BOT_TOKEN": TOKEN})
    assert code == 0, stderr
    assert summary["google_modules"] == []  # neither gspread nor google.auth was imported
    assert len(texts(fake)) == 1 and "Monitor runs stopped" in texts(fake)[0]
    assert TOKEN not in stderr


def test_sheet_watchdog_healthy_pass_pings_and_prints_nothing(tmp_path, pings):
    config = write_config(tmp_path, None, ping_url=pings.url)
    write_runner_state(tmp_path / "state", heartbeat(datetime.now(UTC) - timedelta(minutes=2)))
    code, summary, stdout, stderr = run_cli(config, {})
    assert code == 0, stderr
    assert stdout == "" and pings.paths == ["/ping/3f1c"]


def test_sheet_watchdog_exits_1_when_it_cannot_send_and_2_without_a_token(tmp_path):
    config = write_config(tmp_path, closed_port_url())
    write_runner_state(tmp_path / "state", heartbeat(datetime.now(UTC) - timedelta(minutes=20)))
    code, _, _, stderr = run_cli(config, {"TELEGRAM_BOT_TOKEN": TOKEN})
    assert code == 1 and "could not be sent" in stderr and TOKEN not in stderr
    code, _, _, stderr = run_cli(config, {})
    assert code == 2 and "TELEGRAM_BOT_TOKEN" in stderr
    code, _, _, stderr = run_cli(write_config(tmp_path, None), {"TELEGRAM_BOT_TOKEN": TOKEN})
    assert code == 2 and "no chat to send to" in stderr and TOKEN not in stderr


def test_a_good_run_pings_the_heartbeat_url(tmp_path, pings):
    from monitor.app.run import run_once
    from monitor.config import load_config

    config_path = tmp_path / "monitor.toml"
    config_path.write_text(
        '[run]\nstate_dir = "state"\n[google]\ncredentials = ["sa.json"]\n'
        f'[watchdog]\nheartbeat_url = "{pings.url}"\n'
    )
    config = load_config(config_path, {}, require_secrets=False)
    # No spreadsheets configured: the run has nothing to do, which is a good outcome.
    result = run_once(config, reader_factory=lambda config, timeout: None, messages_to=io.StringIO())
    assert result.report.outcome == "nothing_to_do"
    assert pings.paths == ["/ping/3f1c"]


def test_sheet_monitor_watchdog_is_the_same_command():
    from monitor.cli.main import cli
    from monitor.cli.watchdog import watchdog_command

    assert cli.commands["watchdog"] is watchdog_command
