"""Inspecting one spreadsheet (monitor.engine.inspect): its plan, the requests ``read`` sends, ``judge``.

``read`` runs the real gspread reader against the sandbox, whose request counts say what went over
HTTP; ``judge`` is pure over what Google returned.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from config_fixtures import FULL, SHEET_A, SHEET_B, load, secrets_folder

from monitor.checks import FormulaErrorsCheck, FreshnessCheck, ThresholdCheck, needs_modified_time, ranges_of
from monitor.checks.cells import values_of
from monitor.core.clock import ManualClock
from monitor.core.errors import ErrorClass, SheetReadError
from monitor.core.timefmt import format_utc
from monitor.engine.inspect import SheetData, SheetPlan, judge, plans_of, read, zone_of
from monitor.google.reader import GspreadReader
from sheet_sandbox.server import running_sandbox
from tests.refs import a1

SHEET = "1sandboxInspect".ljust(44, "x")
BATCH_GET = "GET /v4/spreadsheets/{id}/values:batchGet"
DRIVE_FILE = "GET /drive/v3/files/{fileId}"
ROWS = [["SKU", "Product", "Quantity"], ["A-1", "Tea", 10], ["A-2", "#REF!", 12]]
ERRORS = FormulaErrorsCheck(range="Stock!A1:C3")
LOW_STOCK = ThresholdCheck(range="Stock!C2:C3", aggregate="min", warn="< 5", fail="< 0")
EDITED = FreshnessCheck(source="modified_time", warn="> 2h", fail="> 1d")


def plan(*checks) -> SheetPlan:
    return SheetPlan(SHEET, "Store", checks, tuple(ranges_of(checks)), needs_modified_time(checks))


class Google:
    """The sandbox with one spreadsheet, and a gspread reader for it."""

    def __init__(self, sandbox, credentials) -> None:
        self.sandbox = sandbox
        self.credential = str(credentials[0])
        self.reader = GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=2)
        self.timeouts_asked = 0

    def put(self, rows, modified: str = "2026-01-05T02:00:00Z") -> None:
        self.sandbox.google.store.put_control(SHEET, {"title": "Store", "modifiedTime": modified,
                                                      "tabs": {"Stock": rows}})

    def timeout(self) -> float:
        self.timeouts_asked += 1
        return 2.0

    def read(self, sheet_plan: SheetPlan, detailed: bool = False) -> SheetData:
        return read(sheet_plan, self.reader, self.credential, self.timeout, detailed=detailed)

    def requests(self) -> dict[str, int]:
        return self.sandbox.google.stats.snapshot()["by_endpoint"]


@pytest.fixture
def google(tmp_path):
    # google-auth stamps its JWTs with the real time, so the manual clock starts at the real time.
    with running_sandbox(
        clock=ManualClock(start=datetime.now(UTC)), telegram=False, latency="off"
    ) as sandbox:
        yield Google(sandbox, sandbox.write_credentials(tmp_path, 1))


def test_every_range_of_every_check_is_read_in_one_request(google):
    google.put(ROWS)
    data = google.read(plan(ERRORS, LOW_STOCK))
    assert google.requests() == {BATCH_GET: 1}  # no Drive request: no check needs the file's time
    assert google.timeouts_asked == 1
    assert list(data.value_ranges) == ["Stock!A1:C3", "Stock!C2:C3"]  # by the range asked for
    assert data.value_ranges["Stock!C2:C3"]["values"] == [[10], [12]]
    assert data.modified_time is None


def test_a_freshness_check_on_the_file_adds_one_drive_request(google):
    google.put(ROWS, modified="2026-01-04T00:00:00Z")
    data = google.read(plan(ERRORS, EDITED))
    assert google.requests() == {BATCH_GET: 1, DRIVE_FILE: 1}
    assert google.timeouts_asked == 2  # asked again as the second request starts: the budget shrinks
    assert format_utc(data.modified_time) == "2026-01-04T00:00:00.000Z"  # read as a time, once


def test_a_reads_values_are_sorted_out_once_for_its_checks_and_its_history(google):
    google.put(ROWS)
    data = google.read(plan(LOW_STOCK))
    read_range = data.value_ranges["Stock!C2:C3"]
    assert read_range.found is None  # nothing walked before a check asks
    judge(plan(LOW_STOCK), data, datetime(2026, 1, 5, 3, tzinfo=UTC), UTC)
    found = read_range.found  # what the check sorted out, and the history keeps from
    assert found is not None and found.values == [10, 12] and values_of(read_range) is found


def test_a_plan_with_only_the_files_time_sends_no_batch_get(google):
    google.put(ROWS)
    data = google.read(plan(EDITED))
    assert google.requests() == {DRIVE_FILE: 1}
    assert data.value_ranges == {}


def test_a_failed_read_arrives_classified(google):
    with pytest.raises(SheetReadError) as failure:
        google.read(plan(ERRORS))  # the spreadsheet does not exist
    assert failure.value.error_class is ErrorClass.PERMANENT and failure.value.http_status == 404


def test_judging_evaluates_every_check_over_what_google_returned(google):
    google.put(ROWS, modified="2026-01-04T00:00:00Z")
    sheet_plan = plan(ERRORS, LOW_STOCK, EDITED)
    # B3's #REF! is no external function's: a read with Google's details judges it a formula error.
    now = datetime(2026, 1, 5, 3, 0, tzinfo=UTC)
    results = judge(sheet_plan, google.read(sheet_plan, detailed=True), now, UTC)
    assert [(result.kind, result.status) for result in results] == [
        ("formula_errors", "fail"), ("threshold", "ok"), ("freshness", "fail"),
    ]
    assert a1(results[0].cells) == ("Stock!B3",)
    assert "2026-01-04" in results[2].message


def test_a_named_range_is_read_and_judged_as_the_cells_it_names(google):
    google.sandbox.google.store.put_control(SHEET, {"title": "Store", "tabs": {"Stock": ROWS},
                                                    "namedRanges": {"Quantities": "Stock!C2:C3"}})
    low = ThresholdCheck(range="Stock!Quantities", aggregate="min", warn="< 11")
    data = google.read(plan(low))
    assert data.value_ranges["Stock!Quantities"]["range"] == "Stock!C2:C3"  # Google's echo: cells
    [result] = judge(plan(low), data, datetime(2026, 1, 5, tzinfo=UTC), UTC)
    assert (result.status, result.observed, a1(result.cells)) == ("warn", 10, ("Stock!C2",))


def test_cells_still_loading_are_a_failed_read_to_retry_never_a_finding(google):
    google.put([["SKU", "Product", "Quantity"], ["A-1", "Tea", "Loading..."]])
    sheet_plan = plan(ERRORS, LOW_STOCK)
    data = google.read(sheet_plan)
    with pytest.raises(SheetReadError) as failure:
        judge(sheet_plan, data, datetime(2026, 1, 5, tzinfo=UTC), UTC)
    assert failure.value.error_class is ErrorClass.LOADING
    assert "Stock!C2" in failure.value.message and "Loading" in failure.value.message


def test_judging_a_date_without_an_offset_uses_the_spreadsheets_time_zone():
    # 10:00 in Moscow is 07:00 UTC: at 08:30 UTC it is 1.5 h old (ok), not 1.5 h in the future.
    check = FreshnessCheck(range="Log!A2:A", warn="> 2h")
    sheet_plan = SheetPlan(SHEET, "Store", (check,), ("Log!A2:A",))
    data = SheetData({"Log!A2:A": {"range": "Log!A2:A3", "values": [["2026-01-05 10:00"]]}},
                     time_zone="Europe/Moscow")
    moscow = zone_of(sheet_plan, data.time_zone)
    [result] = judge(sheet_plan, data, datetime(2026, 1, 5, 8, 30, tzinfo=UTC), moscow)
    assert (result.status, result.message) == (
        "ok", "newest date 2026-01-05 10:00 UTC+3 is 1 hour and 30 minutes old")
    [late] = judge(sheet_plan, data, datetime(2026, 1, 5, 8, 30, tzinfo=UTC) + timedelta(hours=1), moscow)
    assert late.status == "warn"


def test_the_zone_to_judge_in_is_the_spreadsheets_and_is_never_guessed():
    dated = plan(FreshnessCheck(range="Log!A2:A", warn="> 2h"))
    assert dated.needs_time_zone
    assert zone_of(dated, "GMT-07:00").utcoffset(None) == -timedelta(hours=7)  # Google's custom form
    with pytest.raises(ValueError, match="time zone"):
        zone_of(dated, None)  # a caller must read the zone before judging dates
    # No dates to read: no zone asked for. Drive's modified time is an instant, shown in UTC.
    assert not plan(ERRORS, EDITED).needs_time_zone
    assert zone_of(plan(ERRORS, EDITED), None) == UTC
    with pytest.raises(SheetReadError) as unknown:
        zone_of(dated, "Mars/Olympus_Mons")
    assert unknown.value.error_class is ErrorClass.PERMANENT
    assert "'Mars/Olympus_Mons'" in unknown.value.message and "tzdata" in unknown.value.message


def test_a_read_that_must_learn_the_zone_learns_it_in_the_request_that_reads_the_values(google):
    google.sandbox.google.store.put_control(SHEET, {"title": "Store", "timeZone": "Asia/Novosibirsk",
                                                    "tabs": {"Stock": ROWS, "Notes": [["x"]]}})
    data = read(plan(ERRORS, LOW_STOCK), google.reader, google.credential, google.timeout, fetch_zone=True)
    assert data.time_zone == "Asia/Novosibirsk"
    assert [tab.title for tab in data.tabs] == ["Stock"]  # the tabs the ranges name: Google answers those
    assert google.requests() == {"GET /v4/spreadsheets/{id}": 1}
    assert google.timeouts_asked == 1
    quota = google.sandbox.google.quota.usage()["read"]
    assert sum(quota["users"].values()) == 1  # one read of the Sheets read quota
    # Judged as a batchGet's values: an error code is no detail, and may be an import computing.
    assert data.cell_errors is None and data.formula_ranges is None
    assert data.value_ranges == google.read(plan(ERRORS, LOW_STOCK)).value_ranges


def test_a_read_with_details_that_must_learn_the_zone_sends_one_spreadsheets_get(google):
    # `check ID` reads with details at once: the zone comes in the same answer.
    google.sandbox.google.store.put_control(SHEET, {"title": "Store", "timeZone": "GMT-07:00",
                                                    "tabs": {"Stock": ROWS}})
    data = read(plan(ERRORS), google.reader, google.credential, google.timeout, fetch_zone=True,
                detailed=True)
    assert data.time_zone == "GMT-07:00"
    assert data.cell_errors is not None and data.formula_ranges is not None
    assert data.value_ranges == google.read(plan(ERRORS), detailed=True).value_ranges
    assert google.requests() == {"GET /v4/spreadsheets/{id}": 2}  # with the comparison's own
    assert google.timeouts_asked == 2


def test_a_read_that_must_learn_the_zone_of_a_renamed_tab_is_refused_as_a_batchget_is(google):
    google.put(ROWS)
    renamed = plan(ThresholdCheck(range="Stocks!C2:C3", aggregate="min", fail="< 0"))
    with pytest.raises(SheetReadError) as zoned:
        read(renamed, google.reader, google.credential, google.timeout, fetch_zone=True)
    with pytest.raises(SheetReadError) as plain:
        google.read(renamed)
    assert zoned.value.error_class is plain.value.error_class is ErrorClass.PERMANENT
    assert (zoned.value.http_status, zoned.value.range) == (400, "Stocks!C2:C3") == (
        plain.value.http_status, plain.value.range)
    assert zoned.value.tabs == plain.value.tabs == ("Stock",)


def test_the_plans_of_a_config(tmp_path):
    config = load(secrets_folder(tmp_path), FULL)
    stock, sales = plans_of(config)
    assert (stock.id, stock.name, sales.id, sales.name) == (SHEET_A, "Store 014", SHEET_B, "Sales North")
    assert stock.ranges == ("Stock!A1:H500", "Stock!A2:A", "Stock!F2:F", "Stock!E2:E")
    assert not stock.needs_modified_time
    assert sales.needs_modified_time and "Sales!B2:B" in sales.ranges
    # The config's [alerts] timezone (Europe/Moscow) is the digest's: no plan carries a zone.
    assert not hasattr(stock, "timezone") and not hasattr(stock, "tz")
    assert SheetPlan.of(config.sheets[0], config) == stock


def test_a_plain_read_showing_na_or_ref_asks_for_details_unless_no_try_is_left(google):
    google.put(ROWS)  # B3 shows #REF!: IMPORTRANGE shows it too while it computes
    sheet_plan = plan(ERRORS)
    data = google.read(sheet_plan)
    with pytest.raises(SheetReadError) as failure:
        judge(sheet_plan, data, datetime(2026, 1, 5, tzinfo=UTC), UTC)
    assert failure.value.error_class is ErrorClass.LOADING
    assert failure.value.message.startswith("Stock!B3 shows #REF!, which IMPORTRANGE and GOOGLEFINANCE")
    [result] = judge(sheet_plan, data, datetime(2026, 1, 5, tzinfo=UTC), UTC, last_try=True)
    assert (result.status, a1(result.cells)) == ("fail", ("Stock!B3",))


def test_a_read_with_details_gives_the_values_a_batch_get_gives(google):
    # The retry after a value not known yet judges grid data's effectiveValue: it must be what
    # UNFORMATTED_VALUE with SERIAL_NUMBER renders, for every kind of cell a generated store holds.
    from sheet_sandbox import dataset

    generated = dataset.generate(30, 5, now=datetime(2026, 1, 5, tzinfo=UTC))
    dataset.apply(generated, google.sandbox.google)
    ranges = ("Stock!A1:H500", "Stock!F2:F500", "Sales!A2:D", "Notes", "Stock!E2:E500")
    faulted = {spec["spreadsheet"] for spec in generated.faults}
    for entry in generated.sheets[:8]:  # a formula_errors store (4th) among healthy ones
        if entry.kind in ("missing", "renamed_tab") or entry.id in faulted:
            continue
        sheet_plan = SheetPlan(entry.id, entry.title, (ERRORS,), ranges)
        plain = google.read(sheet_plan)
        detailed = google.read(sheet_plan, detailed=True)
        assert detailed.value_ranges == plain.value_ranges, entry.kind
        assert detailed.cell_errors == () or entry.kind == "formula_errors"
