"""The check models: one default-name rule, validation that says problem and fix, the written form."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from monitor import checks
from monitor.core.invalid_value import InvalidValue


def invalid(build) -> InvalidValue:
    """The InvalidValue a model's validator raised, as pydantic keeps it for the config loader."""
    with pytest.raises(ValidationError) as caught:
        build()
    (error,) = caught.value.errors()
    original = error["ctx"]["error"]
    assert isinstance(original, InvalidValue)
    return original


def test_a_check_without_a_name_is_named_by_kind_aggregate_and_range_or_source():
    assert checks.FormulaErrorsCheck(range="Stock!A1:H500").name == "formula_errors Stock!A1:H500"
    assert checks.ThresholdCheck(range="Stock!F2:F", aggregate="min", fail="< 0").name == (
        "threshold min Stock!F2:F")
    assert checks.FreshnessCheck(source="modified_time", fail="> 1d").name == "freshness modified_time"
    assert checks.NotEmptyCheck(range="A!A:A", name="rows").name == "rows"
    # The same rule whether the kind is given (the config) or implied by the model (Python).
    given = checks.NotEmptyCheck.model_validate({"kind": "not_empty", "range": "A!A:A"})
    assert given.name == "not_empty A!A:A"


def test_conditions_are_parsed_when_the_check_is_built():
    check = checks.ThresholdCheck(range="S!A1:A", aggregate="max", warn="> 10",
                                  fail=checks.Condition(">=", 100))
    assert (check.warn.op, check.warn.value, str(check.fail)) == (">", 10, ">= 100")
    fresh = checks.FreshnessCheck(range="Log!E2:E", warn="2h", fail=">= 1d")
    assert (str(fresh.warn), fresh.warn_age, fresh.fail_age) == ("> 2h", timedelta(hours=2),
                                                                 timedelta(days=1))


def test_model_validators_say_what_is_wrong_and_how_to_fix_it():
    bounds = invalid(lambda: checks.RowCountCheck(range="S!A:A", min=9, max=5))
    assert (bounds.problem, bounds.fix) == ("min (9) is greater than max (5)", "swap them")
    assert invalid(lambda: checks.ThresholdCheck(range="S!A:A", aggregate="min")).problem == (
        "threshold needs a condition")
    both = invalid(lambda: checks.FreshnessCheck(range="S!A:A", source="modified_time", fail="> 1d"))
    assert "takes no range" in both.problem and "remove range" in both.fix
    tabless = invalid(lambda: checks.NotEmptyCheck(range="A2:A"))
    assert tabless.problem == "range 'A2:A' does not name a tab"
    assert invalid(lambda: checks.ThresholdCheck(range="S!A:A", aggregate="min", warn=5)).problem == (
        "5 is a number, not a condition")
    assert invalid(lambda: checks.FreshnessCheck(range="S!A:A", warn="< 2h")).problem == (
        "bad age condition '< 2h'")


@pytest.mark.parametrize("text", ["Stock!Quantities", "'My tab'!Quantities", "Quantities"])
def test_a_named_range_is_accepted_where_a1_is(text):
    # Google resolves 'Sheet1'!MyRange, Sheet1!MyRange and MyRange (the recorded read of
    # 'Sheet1'!NamedRange, and the Sheets API guide's "A1 notation").
    check = checks.ThresholdCheck(range=text, aggregate="min", fail="< 0")
    assert check.range == text and checks.ranges_of([check]) == (text,)


def test_a_name_google_would_refuse_is_still_a_malformed_range():
    assert "malformed A1 range" in invalid(lambda: checks.NotEmptyCheck(range="Stock!R1C1")).problem
    assert "named range" in invalid(lambda: checks.NotEmptyCheck(range="Stock!has space")).fix


def test_unknown_parameters_and_aggregates_are_refused():
    with pytest.raises(ValidationError, match="mean"):
        checks.ThresholdCheck(range="S!A1", aggregate="mean", fail="< 0")
    with pytest.raises(ValidationError, match="extra"):
        checks.NotEmptyCheck(range="S!A1", rnage="S!B1")


def test_checks_are_frozen_and_hashable():
    check = checks.NotEmptyCheck(range="S!A:A")
    with pytest.raises(ValidationError):
        check.min_rows = 3  # type: ignore[misc]
    assert len({check, checks.NotEmptyCheck(range="S!A:A")}) == 1


@pytest.mark.parametrize("check", [
    checks.FormulaErrorsCheck(range="Stock!A1:H500"),
    checks.NotEmptyCheck(range="Stock!A2:A", min_rows=3),
    checks.RowCountCheck(range="'Sales 2026'!A2:A", max=499, name="not too long"),
    checks.ThresholdCheck(range="Stock!F2:F", aggregate="min", warn="< 5", fail="< 0"),
    checks.FreshnessCheck(range="Stock!E2:E", warn="> 2h", fail="> 1d"),
    checks.FreshnessCheck(source="modified_time", fail="> 1d"),
])
def test_the_written_form_builds_the_same_check_again(check):
    written = check.as_written()
    assert next(iter(written)) == "kind"
    assert checks.CHECK_KINDS[written["kind"]].model_validate(written) == check


def test_the_written_form_omits_defaults_and_the_default_name():
    written = checks.NotEmptyCheck(range="S!A:A", min_rows=1).as_written()
    assert written == {"kind": "not_empty", "range": "S!A:A"}
    assert checks.FreshnessCheck(range="L!E:E", warn="> 2h").as_written() == {
        "kind": "freshness", "range": "L!E:E", "warn": "> 2h"}
    assert checks.RowCountCheck(range="S!A:A", min=0, name="rows").as_written() == {
        "kind": "row_count", "range": "S!A:A", "min": 0, "name": "rows"}
