"""Each spreadsheet judged in its own time zone (monitor.engine.zone_refresh): read from Google with its first
read, kept on its health record, asked again about daily, paced as the read it is, and shown in every
freshness message. The [alerts] timezone is the digest's alone.

The first tests run ``run_once`` over a config against the sandbox (real gspread, real google-auth);
the others drive the engine's run with a scripted reader on a manual clock.
"""

from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from cli_fixtures import invoke, json_of, saved_state, state_dir, write_config
from run_fixtures import RANGE, SETTINGS, Bench, ScriptedReader, SimulatedReads
from sandbox_fixtures import drive_caught_up

from monitor.app.run import run_once
from monitor.checks import FreshnessCheck
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.core.errors import ErrorClass, QuotaScope, SheetReadError
from monitor.engine.change_detection import ChangedFiles
from monitor.engine.events import DeadLettered
from monitor.engine.health import ERROR, OK, WARN, Moment, SheetHealth
from monitor.engine.inspect import SheetPlan
from monitor.engine.run import Run
from monitor.engine.zone_refresh import ZONE_REFRESH, with_zone, zone_due
from monitor.state import changing_state
from monitor.state.schema import HEALTH, upgraded
from monitor.storage import MemoryLocation
from sheet_sandbox.server import running_sandbox

GMT, LOS_ANGELES, NOVOSIBIRSK = (f"1zone{name}".ljust(44, "x") for name in ("Gmt", "LosAngeles", "Nsk"))
SPREADSHEETS_GET = "GET /v4/spreadsheets/{id}"
BATCH_GET = "GET /v4/spreadsheets/{id}/values:batchGet"
FRESH = ('\n[profiles.fresh]\n'
         'checks = [{ kind = "freshness", range = "Log!A2:A", warn = "> 2h", fail = "> 1d" }]\n')


def log(written: datetime, zone: str) -> dict:
    return {"title": "Store", "timeZone": zone,
            "tabs": {"Log": [["Updated"], [{"datetime": written.strftime("%Y-%m-%dT%H:%M:%SZ")}]]}}


@pytest.fixture
def zoned_site(tmp_path):
    """Three spreadsheets in three zones, a config whose [alerts] timezone is Europe/Moscow, and the
    manual clock both run on (at the real time: google-auth stamps its JWTs with it)."""
    clock = ManualClock(start=datetime.now(UTC))
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        now = clock.now()
        sandbox.google.store.put_control(GMT, log(now - timedelta(minutes=30), "Etc/GMT"))
        sandbox.google.store.put_control(LOS_ANGELES, log(now - timedelta(minutes=30), "America/Los_Angeles"))
        sandbox.google.store.put_control(NOVOSIBIRSK, log(now - timedelta(hours=3), "Asia/Novosibirsk"))
        credentials = sandbox.write_credentials(tmp_path / "secrets", 1)
        sheets = "".join(f'\n[[sheets]]\nid = "{sid}"\nname = "Store {n}"\nprofile = "fresh"\n'
                         for n, sid in enumerate((GMT, LOS_ANGELES, NOVOSIBIRSK), start=4))
        path = write_config(tmp_path / "site", ids=(), credentials=credentials, endpoint=sandbox.base_url,
                            extra=FRESH + sheets + '\n[alerts]\ntimezone = "Europe/Moscow"\n')
        yield sandbox, clock, path


def zone_reads(sandbox) -> int:
    return sandbox.google.stats.snapshot()["by_endpoint"].get(SPREADSHEETS_GET, 0)


def test_each_spreadsheet_is_judged_in_its_own_zone_not_the_digests(zoned_site):
    sandbox, clock, path = zoned_site
    run_once(load_config(path, {}), clock=clock, messages_to=io.StringIO())
    state = saved_state(path)
    # Read in the digest's Moscow time, the two fresh ones would be 3.5 h and 11.5 h old: both warn.
    assert {sid: state.health[sid].health for sid in (GMT, LOS_ANGELES, NOVOSIBIRSK)} == {
        GMT: OK, LOS_ANGELES: OK, NOVOSIBIRSK: WARN}
    assert [state.health[sid].time_zone for sid in (GMT, LOS_ANGELES, NOVOSIBIRSK)] == [
        "Etc/GMT", "America/Los_Angeles", "Asia/Novosibirsk"]
    [finding] = state.health[NOVOSIBIRSK].findings
    # Shown on the spreadsheet's own clock, with its offset: no guessing which zone was meant.
    written = (clock.now() - timedelta(hours=3)).astimezone(UTC) + timedelta(hours=7)
    assert finding.message == f"newest date {written:%Y-%m-%d %H:%M} UTC+7 is 3 hours old (> 2h)"
    rows = {row["id"]: row for row in json_of(invoke(path, "sheets", "--json"))["sheets"]}
    assert rows[LOS_ANGELES]["time_zone"] == "America/Los_Angeles"
    assert "Asia/Novosibirsk" in invoke(path, "sheets").stdout


def test_the_zone_is_read_once_then_daily_and_counts_as_a_read(zoned_site):
    sandbox, clock, path = zoned_site
    config = load_config(path, {})
    first = run_once(config, clock=clock, messages_to=io.StringIO())
    assert zone_reads(sandbox) == 3  # one spreadsheets.get each: its values, with properties.timeZone
    assert sum(first.report.counts.reads_by_credential.values()) == 3  # the quota they spent: one read each
    assert sandbox.google.stats.snapshot()["by_endpoint"].get(BATCH_GET, 0) == 0
    for _ in range(3):  # rounds within the day ask no zone again
        clock.advance(6 * 60)
        run_once(config, clock=clock, messages_to=io.StringIO())
    assert zone_reads(sandbox) == 3
    # A day later every zone is due again. (The sandbox's clock cannot move a day: google-auth signs
    # its tokens with the real time, which the sandbox checks; the state is moved instead.)
    with changing_state(state_dir(path), actor="test", now=clock.now()) as session:
        for sid in (GMT, LOS_ANGELES, NOVOSIBIRSK):
            session.state.health[sid] = replace(session.state.health[sid], zone_due=clock.now())
    # Someone sets the first spreadsheet's zone in File > Settings: an edit, which Drive reports.
    sandbox.google.store.put_control(GMT, {**log(clock.now(), "Etc/GMT"), "timeZone": "Asia/Tokyo"})
    drive_caught_up(sandbox.google)  # once Drive's feed shows it
    clock.advance(6 * 60)
    run_once(config, clock=clock, messages_to=io.StringIO())
    # The zone is asked with a read that happens anyway: the edited one now, the others at their next.
    assert zone_reads(sandbox) == 4
    record = saved_state(path).health[GMT]
    assert record.time_zone == "Asia/Tokyo"
    assert record.zone_due - clock.now() == pytest.approx(ZONE_REFRESH, abs=timedelta(minutes=1))


def test_check_asks_for_the_zone_with_the_values_and_says_it_spent_one_read(zoned_site):
    sandbox, _, path = zoned_site
    data = json_of(invoke(path, "check", NOVOSIBIRSK, "--json"))
    assert data["time_zone"] == "Asia/Novosibirsk" and data["health"] == "warn"
    assert data["quota_spent"]["reads"] == 1
    assert "UTC+7" in data["results"][0]["message"]
    human = invoke(path, "check", LOS_ANGELES)
    assert "in its time zone America/Los_Angeles" in human.stdout
    assert "Spent one read" in human.stderr
    # Each check: its values with Google's details and its zone, one spreadsheets.get.
    assert zone_reads(sandbox) == 2
    assert sum(sandbox.google.quota.usage()["read"]["users"].values()) == 2


def test_check_config_counts_no_read_for_the_zones(tmp_path):
    ids = [f"1plan{n:04d}".ljust(44, "x") for n in range(300)]
    sheets = "".join(f'\n[[sheets]]\nid = "{sid}"\nname = "S{n}"\nprofile = "fresh"\n'
                     for n, sid in enumerate(ids))
    path = write_config(tmp_path / "site", ids=(), extra=FRESH + sheets)
    data = json_of(invoke(path, "check-config", "--offline", "--json"))
    # Each zone comes in the request that reads its spreadsheet's values, the first round's too.
    assert data["reads_per_round"] == 300 and "zone_reads_per_round" not in data
    assert data["round_seconds"] == 300.0  # 300 reads at 60 a minute
    human = invoke(path, "check-config", "--offline").stdout
    assert "300 in a full round (one read per spreadsheet)" in human
    every = json_of(invoke(path, "check-config", "--offline", "--edits", "100%", "--json")
                    )["change_detection"]
    [edited] = every["estimates"]
    assert edited["reads_per_round"] == 300 and "zone_reads" not in edited


# -- the engine's run, scripted ----------------------------------------------------------------------


def fresh_plans(count: int, **overrides) -> list[SheetPlan]:
    check = FreshnessCheck(range=RANGE, warn="> 2h", fail="> 1d")
    return [SheetPlan(id=f"s{n}", name=f"Store {n}", checks=(check,), ranges=(RANGE,), fingerprint="f",
                      **overrides) for n in range(count)]


def dated(moment: datetime) -> dict:
    """A ValueRange holding ``moment`` as text without an offset: wall-clock time, read in the zone."""
    return {"range": RANGE, "values": [[moment.strftime("%Y-%m-%d %H:%M:%S")]]}


class QuietDrive:
    """Drive's change feed reporting no change at all."""

    source = "sa-1.json"

    def start_position(self, timeout: float) -> str:
        return "1"

    def changed_since(self, position: str, timeout: float) -> ChangedFiles:
        return ChangedFiles(frozenset(), frozenset(), position, requests=1)


def simulated_run(reader: ScriptedReader, per_credential: int = 4) -> tuple[list[tuple[str, float]], Run]:
    """One run over three spreadsheets with a freshness check, each request taking 0.1 s: which
    spreadsheet each request named and when it went (seconds from the start), and the run."""
    made: list[SimulatedReads] = []

    def simulated(run_clock: ManualClock) -> SimulatedReads:
        made.append(SimulatedReads(reader, run_clock, lambda sid: 0.1))
        return made[-1]

    the_bench = Bench(reader, fresh_plans(3), MemoryLocation(), clock=ManualClock(),
                      per_credential=per_credential, make_reads=simulated)
    start = the_bench.clock.time()
    run = the_bench.run(budget=timedelta(minutes=3))
    return [(sid, round(at - start, 1)) for sid, at in made[0].started], run


def test_a_zone_comes_in_the_request_of_the_values_paced_as_one_read():
    reader = ScriptedReader()
    sent, run = simulated_run(reader)
    # 4 requests a minute: each spreadsheet's zone and values in one request, so the three go at once.
    assert sent == [("s0", 0.0), ("s1", 0.1), ("s2", 0.2)]
    assert reader.zone_reads == ["s0", "s1", "s2"] and reader.reads == ["s0", "s1", "s2"]
    assert run.report.counts.reads_by_credential == {"sa-1.json": 3}
    assert run.report.counts.tasks == 3 and run.report.counts.tasks_done == 3 and run.report.zones_read == 3
    assert all(len(task.history) == 1 for task in run.state.round.tasks.values())
    assert {run.state.health[sid].time_zone for sid in ("s0", "s1", "s2")} == {"Etc/GMT"}


def test_a_read_whose_zone_fails_is_the_reads_failure():
    reader = ScriptedReader()
    reader.zones["s1"] = SheetReadError(ErrorClass.PERMANENT, 404, "NOT_FOUND",
                                        "Requested entity was not found.")
    sent, run = simulated_run(reader, per_credential=60)
    assert [sid for sid, _ in sent] == ["s0", "s1", "s2"]
    assert reader.reads == ["s0", "s2"]
    assert run.report.counts.tasks == 3
    [dead] = [event for event in run.state.events if isinstance(event, DeadLettered)]
    assert dead.spreadsheet_id == "s1" and dead.error.http_status == 404
    assert run.state.health["s1"].time_zone is None


def test_a_read_refused_for_quota_leaves_the_zone_unknown_and_the_pacers_log_as_google_did_not_count_it():
    full = SheetReadError(ErrorClass.QUOTA, 429, "RESOURCE_EXHAUSTED", "Quota exceeded ... per user",
                          quota_scope=QuotaScope.USER)
    reader = ScriptedReader()
    reader.zones["s0"] = full
    sent, run = simulated_run(reader)
    # Refused (answered at 0.1 s): the window is taken as the others', filled at the refusal, so
    # nothing goes until it ages out; then s0 again, zone and values, and the round as before.
    assert sent[0] == ("s0", 0.0) and sent[1][1] >= 61.0
    first = run.state.round.tasks[next(iter(run.state.round.tasks))]
    assert first.target == "s0" and first.history[0].outcome == "quota"


def test_a_record_from_before_zones_is_read_again_even_when_drive_says_unchanged():
    reader = ScriptedReader()
    the_bench = Bench(reader, fresh_plans(1, max_age=timedelta(days=7)), MemoryLocation(),
                      changes=QuietDrive())
    now = the_bench.clock.now()
    with the_bench.session() as session:  # as the upgrade of an older state leaves a record
        session.state.health["s0"] = SheetHealth(
            health=OK, since=now, last_checked_at=now, read_at=now, checks="f",
            moments=(Moment("freshness Stock!A1:B2", now - timedelta(hours=1), "Stock!A1"),))
    reader.script = {"s0": [dated(now - timedelta(minutes=10))]}
    run = the_bench.run()
    assert run.report.counts.tasks == 1 and reader.zone_reads == ["s0"]
    assert the_bench.stored().health["s0"].time_zone == "Etc/GMT"
    the_bench.clock.advance(SETTINGS.round_interval.total_seconds())
    assert the_bench.run().report.counts.tasks == 0  # zone known, nothing changed: judged without a read


def test_judging_again_without_a_read_shows_the_newest_date_on_the_spreadsheets_clock():
    reader = ScriptedReader()
    reader.zones["s0"] = "Asia/Novosibirsk"
    the_bench = Bench(reader, fresh_plans(1, max_age=timedelta(days=7)), MemoryLocation(),
                      changes=QuietDrive())
    written = the_bench.clock.now() - timedelta(hours=1)
    local = written.astimezone(UTC) + timedelta(hours=7)  # the sheet's wall clock: Novosibirsk, UTC+7
    reader.script = {"s0": [dated(local)]}
    the_bench.run()
    assert the_bench.stored().health["s0"].health is OK
    the_bench.clock.advance(90 * 60)  # 2.5 h after the date: judged again, without a read
    run = the_bench.run()
    assert run.report.counts.tasks == 0 and reader.reads == ["s0"]
    record = the_bench.stored().health["s0"]
    assert record.health is WARN
    assert record.findings[0].message == (
        f"newest date {local:%Y-%m-%d %H:%M} UTC+7 is 2 hours and 30 minutes old (> 2h)")


def test_a_zone_this_machine_does_not_know_dead_letters_the_spreadsheet_with_what_to_do():
    reader = ScriptedReader()
    reader.zones["s0"] = "America/Nowhere"
    the_bench = Bench(reader, fresh_plans(1), MemoryLocation())
    run = the_bench.run()
    state = the_bench.stored()
    assert state.health["s0"].health is ERROR and state.health["s0"].time_zone is None
    [dead] = [event for event in run.state.events if isinstance(event, DeadLettered)]
    assert dead.error.error_class == ErrorClass.PERMANENT
    assert "'America/Nowhere'" in dead.error.message and "tzdata" in dead.error.message


def test_checks_without_dates_never_ask_for_a_zone():
    reader = ScriptedReader()
    the_bench = Bench(reader, [replace(plan, checks=()) for plan in fresh_plans(2)], MemoryLocation())
    assert the_bench.run().report.counts.reads_by_credential == {"sa-1.json": 2}
    assert reader.zone_reads == []


# -- when to ask ---------------------------------------------------------------------------------------


def test_a_zone_first_learnt_is_asked_again_within_the_day_then_daily():
    now = datetime(2026, 1, 5, 3, 0, tzinfo=UTC)
    assert zone_due(None, now) and zone_due(SheetHealth(), now)
    first = [with_zone(None, f"sheet-{n}", "Etc/GMT", now) for n in range(200)]
    waits = sorted(record.zone_due - now for record in first)
    assert timedelta(0) < waits[0] and waits[-1] <= ZONE_REFRESH
    # Spread over the day, so the zones learnt in one round are not all asked again in one round.
    assert waits[49] < ZONE_REFRESH * 0.35 and waits[149] > ZONE_REFRESH * 0.65
    record = first[0]
    assert not zone_due(record, record.zone_due - timedelta(seconds=1)) and zone_due(record, record.zone_due)
    again = with_zone(record, "sheet-0", "Europe/Moscow", record.zone_due)
    assert again.zone_due - record.zone_due == ZONE_REFRESH and again.time_zone == "Europe/Moscow"


def test_a_health_record_from_before_zones_is_read_with_no_zone_known():
    record = SheetHealth(health=OK, read_at=datetime(2026, 1, 5, tzinfo=UTC), checks="f")
    written = json.loads(HEALTH.encode(record))
    older = {key: value for key, value in written.items() if key not in ("time_zone", "zone_due")}
    assert HEALTH.version == 8  # 4 tabs, 5 unreadable, 6 owner, 7 changes, 8 tab: a record of 2 reads without
    upgrade = upgraded(HEALTH, older, 2)  # (later versions' fields come too: stored text leaves
    assert upgrade == {**upgrade, **older, "time_zone": None, "zone_due": None}  # defaults out)
    assert HEALTH.validate(upgraded(HEALTH, older, 2)) == record  # no zone known: read, not re-judged
