"""Per-spreadsheet health records: verdicts, changes worth an alert, and skips shown beside the verdict."""

from datetime import UTC, datetime, timedelta

import pytest

from monitor.checks import FormulaErrorsCheck, NotEmptyCheck, evaluate
from monitor.engine.health import (
    ERROR,
    FAIL,
    OK,
    SKIPPED,
    UNKNOWN,
    WARN,
    Change,
    Finding,
    SheetHealth,
    VerdictChange,
    is_alerting,
    record_skip,
    record_verdict,
)

NOW = datetime(2026, 3, 2, 3, 47, tzinfo=UTC)
BROKEN = (Finding("no errors", "formula_errors", "fail", "2 cells show #REF!", ("Stock!B2", "Stock!B3")),)


def test_the_first_healthy_check_is_a_change_nobody_needs_to_hear_about():
    record, change = record_verdict(None, OK, NOW, ())
    assert change == Change(UNKNOWN, OK)
    assert not is_alerting(change)
    assert record == SheetHealth(OK, since=NOW, last_checked_at=NOW, changes=(VerdictChange(NOW, OK),))


def test_a_first_check_that_finds_trouble_is_heard_about():
    _, change = record_verdict(SheetHealth(), FAIL, NOW, BROKEN)
    assert is_alerting(change)
    _, first_warning = record_verdict(SheetHealth(), WARN, NOW, ())
    assert is_alerting(first_warning)  # nobody has heard of it yet: a later "ok again" would puzzle


def test_the_same_verdict_with_a_new_finding_is_a_change_and_other_values_are_not():
    low = Finding("stock", "threshold", "warn", "minimum 3 < 5", ("Stock!F2",))
    lower = Finding("stock", "threshold", "warn", "minimum 2 < 5", ("Stock!F2",))
    stale = Finding("fresh", "freshness", "warn", "newest date 3h ago", ("Stock!E2",))
    record, _ = record_verdict(None, WARN, NOW, (low,))
    record, same = record_verdict(record, WARN, NOW + timedelta(minutes=5), (lower,))
    assert same is None and record.findings == (lower,)
    record, news = record_verdict(record, WARN, NOW + timedelta(minutes=10), (lower, stale))
    assert news == Change(WARN, WARN) and is_alerting(news)
    assert record.since == NOW  # the verdict itself did not move
    record, gone = record_verdict(record, WARN, NOW + timedelta(minutes=15), (stale,))
    assert gone is None  # a finding that went away is not news; the digest shows what is left


def test_a_failure_alerts_once_and_the_recovery_says_how_long_it_was_down():
    record, _ = record_verdict(None, OK, NOW, ())
    record, change = record_verdict(record, FAIL, NOW + timedelta(minutes=5), BROKEN)
    assert is_alerting(change) and record.findings == BROKEN
    assert record.down_since == NOW + timedelta(minutes=5)

    record, same = record_verdict(record, FAIL, NOW + timedelta(minutes=10), BROKEN)
    assert same is None and record.last_checked_at == NOW + timedelta(minutes=10)
    assert record.since == NOW + timedelta(minutes=5)  # when the health last moved, not last checked

    record, worse = record_verdict(record, ERROR, NOW + timedelta(minutes=15), ())
    assert worse == Change(FAIL, ERROR) and is_alerting(worse)
    assert record.down_since == NOW + timedelta(minutes=5)  # still the same bad episode

    record, recovered = record_verdict(record, OK, NOW + timedelta(minutes=65), ())
    assert recovered == Change(ERROR, OK, down_for_seconds=3600)
    assert record.down_since is None and record.since == NOW + timedelta(minutes=65)
    assert record.findings == ()


def test_ok_and_warn_flipping_after_the_first_check_alerts_without_a_downtime():
    record, _ = record_verdict(None, OK, NOW, ())
    record, change = record_verdict(record, WARN, NOW + timedelta(minutes=5), ())
    assert is_alerting(change) and change.down_for_seconds is None and record.down_since is None


def test_recording_returns_a_new_record_and_leaves_the_old_one_as_it_was():
    before, _ = record_verdict(None, OK, NOW, ())
    after, _ = record_verdict(before, FAIL, NOW + timedelta(minutes=5), BROKEN)
    assert before.health == OK and before.findings == ()
    assert after is not before
    with pytest.raises(AttributeError):
        before.health = FAIL  # stored documents are values


def test_skipping_shows_beside_the_verdict_without_changing_it():
    record, _ = record_verdict(None, WARN, NOW, ())
    skipped = record_skip(record, "breaker_open")
    assert skipped.shown == SKIPPED and skipped.health == WARN and skipped.since == NOW
    again, change = record_verdict(skipped, WARN, NOW + timedelta(minutes=5), ())
    assert change is None  # warn -> skipped -> warn is no change
    assert again.shown == WARN and again.skipped is None


def test_a_failing_spreadsheet_paused_by_its_breaker_is_shown_failing_still():
    record, _ = record_verdict(None, ERROR, NOW, ())
    skipped = record_skip(record, "breaker_open")
    assert skipped.shown == ERROR and skipped.skipped == "breaker_open"
    again, change = record_verdict(skipped, ERROR, NOW + timedelta(minutes=5), ())
    assert change is None  # error -> paused -> error is no recovery and no new failure


def test_a_spreadsheet_skipped_before_its_first_check_is_still_unknown():
    record = record_skip(None, "breaker_open")
    assert record.shown == SKIPPED and record.health == UNKNOWN and record.last_checked_at is None
    assert record_skip(None, "muted").shown == UNKNOWN  # a mute in force is the fleet's to show


def test_only_verdicts_are_recorded():
    with pytest.raises(ValueError, match="not a verdict"):
        record_verdict(SheetHealth(), SKIPPED, NOW, ())
    with pytest.raises(ValueError, match="not a verdict"):
        record_verdict(SheetHealth(), UNKNOWN, NOW, ())


def test_a_finding_keeps_the_tab_its_checks_range_is_on_and_its_cells_as_references():
    empty = NotEmptyCheck(range="'Daily log'!A2:A")
    found = Finding.of(evaluate(empty, {"range": "'Daily log'!A2:A1000"}, NOW), empty)
    assert (found.tab, found.cells) == ("Daily log", ())
    broken = FormulaErrorsCheck(range="Stock!F2:F")
    found = Finding.of(evaluate(broken, {"range": "Stock!F2:F3", "values": [[1], ["#REF!"]]}, NOW), broken)
    assert (found.tab, [str(cell) for cell in found.cells]) == ("Stock", ["Stock!F3"])
    whole = NotEmptyCheck(range="Stock")  # a whole tab: no cells to say it by, as before
    assert Finding.of(evaluate(whole, {"range": "Stock!A1:Z1000"}, NOW), whole).tab is None
