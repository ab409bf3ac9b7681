"""check-config's reads per round with change detection: the engine's rule for how often max_age reads a
spreadsheet Drive reports unchanged, and the plan's arithmetic over a real Config, checked against
figures worked out by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from config_fixtures import secrets_folder

from monitor import admin
from monitor.config import Config, load_config
from monitor.engine.change_detection import due_for_read, rounds_between_reads
from monitor.engine.health import OK, SheetHealth
from monitor.engine.inspect import SheetPlan

START = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


def rounds_apart_by_the_run(max_age: timedelta, interval: timedelta) -> list[int]:
    """Rounds ``interval`` apart over twelve hours, each read landing 10 s after its round started, as
    ``due_for_read`` decides them: how many rounds apart the reads were."""
    plan = SheetPlan("s", "Store", (), (), fingerprint="f", max_age=max_age)
    record, read_rounds = None, []
    for number in range(int(timedelta(hours=12) / interval)):
        now = START + number * interval
        if due_for_read(plan, record, now, interval, failing=False):
            read_rounds.append(number)
            record = SheetHealth(OK, read_at=now + timedelta(seconds=10), checks="f")
    return [later - earlier for earlier, later in zip(read_rounds, read_rounds[1:], strict=False)]


@pytest.mark.parametrize(("max_age", "interval", "rounds"), [
    (60 * MINUTE, 5 * MINUTE, 12),  # a whole multiple: not at 0:55, when it would be 59m50s old next round
    (11 * MINUTE, 5 * MINUTE, 2),
    (7 * MINUTE, 5 * MINUTE, 1),
    (5 * MINUTE, 5 * MINUTE, 1),
    (MINUTE, 5 * MINUTE, 1),  # younger than a round: every round
    (90 * MINUTE, 10 * MINUTE, 9),
])
def test_max_age_reads_a_spreadsheet_every_so_many_rounds_as_the_run_does(max_age, interval, rounds):
    assert rounds_between_reads(max_age, interval) == rounds
    assert set(rounds_apart_by_the_run(max_age, interval)) == {rounds}


@pytest.fixture
def config(tmp_path):
    """750 spreadsheets of the "stock" profile (max_age from [run], 1h unless given), 30 of "slow"
    (max_age 15m, a freshness check on the file's modified time) and 20 of "live" (always_read), on
    three credentials of one project."""
    def write(run: str = "", stock: str = "", stock_count: int = 750) -> Config:
        if not (tmp_path / "secrets").exists():
            secrets_folder(tmp_path, ("shop-east",) * 3)
        rows = ["id,name,profile"]
        for profile, count in (("stock", stock_count), ("slow", 30), ("live", 20)):
            rows += [f"1{profile}{n:04d}".ljust(44, "x") + f",{profile} {n},{profile}" for n in range(count)]
        (tmp_path / "sheets.csv").write_text("\n".join(rows) + "\n")
        (tmp_path / "monitor.toml").write_text(
            f'sheets_file = "sheets.csv"\n[run]\nround_interval = "5m"\nbudget = "4m30s"\n{run}\n'
            '[google]\ncredentials = ["secrets/sa-1.json", "secrets/sa-2.json", "secrets/sa-3.json"]\n'
            f'[profiles.stock]\n{stock}\nchecks = [{{ kind = "formula_errors", range = "Stock!A1:C9" }}]\n'
            '[profiles.slow]\nmax_age = "15m"\n'
            'checks = [{ kind = "freshness", source = "modified_time", warn = "> 1d" }]\n'
            '[profiles.live]\nalways_read = true\n'
            'checks = [{ kind = "formula_errors", range = "Stock!A1:C9" }]\n')
        return load_config(Path(tmp_path / "monitor.toml"), {})
    return write


def test_reads_per_round_are_the_edited_the_max_age_due_and_the_always_read(config):
    detection = admin.config_plan(config())["change_detection"]
    assert detection["enabled"] is True and detection["always_read"] == 20
    assert detection["max_age"] == [
        {"max_age": "15m", "spreadsheets": 30, "rounds_between_reads": 3},
        {"max_age": "1h", "spreadsheets": 750, "rounds_between_reads": 12},
    ]
    low, mid, high = detection["estimates"]  # 5 %, 20 %, 50 % unless asked
    # 5 %: 780 x 0.05 = 39 edited; 750 / 12 + 30 / 3 = 72.5 due by max_age; 20 always: 131.5 -> 132.
    assert (low["edit_share"], low["changed_reads"], low["max_age_reads"]) == (0.05, 39.0, 72.5)
    assert (low["always_read_reads"], low["reads_per_round"]) == (20, 132)
    # Drive: one page of changes; the 30 "slow" files' modifiedTime when read, 30 x (0.05 + 1/3) = 11.5.
    assert low["drive_requests_per_round"] == 1 + 12
    # 180 reads/min on three credentials: 132 reads are 44 s of quota, well within 5m.
    assert (low["round_seconds"], low["fits"]) == (44.0, True)
    assert (mid["reads_per_round"], mid["fits"]) == (249, True)  # 156 + 72.5 + 20 = 248.5
    # At 50 %, a sheet read every third round for its max_age is read at most every round: 1 - 0.5 caps
    # nothing here (1/3 < 0.5), so 390 + 72.5 + 20 = 482.5 -> 483 reads, 161 s: still within 5m.
    assert (high["reads_per_round"], high["round_seconds"], high["fits"]) == (483, 161.0, True)


def test_a_max_age_within_one_round_reads_every_spreadsheet_every_round_whatever_the_edits(config):
    plan = admin.config_plan(config(stock='max_age = "5m"'), edit_shares=(0.2, 1.0))
    some, every = plan["change_detection"]["estimates"]
    # Each "stock" spreadsheet: 0.2 edited, and the other 0.8 of its rounds due by max_age, never more
    # than one read a round; the "slow" ones 1/3 due; 780 x 0.2 = 156 edited.
    assert (some["changed_reads"], some["max_age_reads"]) == (156.0, 750 * 0.8 + 30 / 3)
    assert some["reads_per_round"] == 156 + 610 + 20
    # Everything edited: every spreadsheet read, none for its age, the full round.
    assert (every["changed_reads"], every["max_age_reads"]) == (780.0, 0.0)
    assert every["reads_per_round"] == plan["reads_per_round"] == 800
    assert every["round_seconds"] == plan["round_seconds"] == round(800 * 60 / 180, 1)  # 4.4 min
    assert every["fits"] is plan["fits"] is True


def test_more_than_a_thousand_changes_a_round_take_a_second_page_of_drives_change_feed(config):
    small, large = (admin.config_plan(config(stock_count=count), edit_shares=(0.5, 1.0))
                    for count in (950, 1250))
    # 500, 1,000 and 650 changes: one page of 1,000; 1,300: two. Each "slow" spreadsheet's
    # modifiedTime is read when it is: 30 x (0.5 + 1/3) = 25, and 30 when all are edited.
    assert drive_requests(small) == [1 + 25, 1 + 30]
    assert drive_requests(large) == [1 + 25, 2 + 30]


def drive_requests(plan: dict) -> list[int]:
    return [row["drive_requests_per_round"] for row in plan["change_detection"]["estimates"]]


def test_without_change_detection_the_plan_says_so_and_estimates_nothing(config):
    plan = admin.config_plan(config(run="change_detection = false"))
    assert plan["change_detection"] == {"enabled": False, "always_read": None, "max_age": [], "estimates": []}
    assert plan["reads_per_round"] == 800
