"""Google's per-minute quotas in the sandbox, on an injected clock."""

from __future__ import annotations

import json

import pytest

from monitor.core.clock import ManualClock
from sheet_sandbox.projects import DEFAULT_PROJECT_ID, project_ids, project_number, project_of, spread
from sheet_sandbox.quota import QuotaMeter
from sheet_sandbox.stats import Stats

# Sheets' per-user 429 as it comes today: the message of the recorded body
# (/work/shared/google-recordings) and the details of a live Sheets 429 that gargle's test
# snapshot prints field by field (r-lib/gargle tests/testthat/_snaps/response_process.md,
# "Resource exhausted (Sheets, ReadGroup)", the same consumer project): ErrorInfo with
# quota_location and consumer, then a Help link. docs/sandbox.md, "Quotas", quotes both.
GOOGLE_READ_429 = {"error": {
    "code": 429,
    "message": (
        "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute per user' "
        "of service 'sheets.googleapis.com' for consumer 'project_number:603366585132'."
    ),
    "status": "RESOURCE_EXHAUSTED",
    "details": [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "RATE_LIMIT_EXCEEDED",
            "domain": "googleapis.com",
            "metadata": {
                "quota_location": "global",
                "quota_metric": "sheets.googleapis.com/read_requests",
                "quota_limit": "ReadRequestsPerMinutePerUser",
                "quota_limit_value": "60",
                "consumer": "projects/603366585132",
                "service": "sheets.googleapis.com",
            },
        },
        {
            "@type": "type.googleapis.com/google.rpc.Help",
            "links": [{
                "description": "Request a higher quota limit.",
                "url": "https://cloud.google.com/docs/quota#requesting_higher_quota",
            }],
        },
    ],
}}
# The per-project one differs in the limit alone: its text ends at "per minute", with no "per
# project" (googlesheets4 users' reports: github.com/r-lib/gargle/issues/160,
# github.com/benborgers/opensheet/issues/22), and its ErrorInfo names ReadRequestsPerMinutePerProject.
GOOGLE_PROJECT_READ_429 = json.loads(
    json.dumps(GOOGLE_READ_429)
    .replace("Read requests per minute per user", "Read requests per minute")
    .replace("ReadRequestsPerMinutePerUser", "ReadRequestsPerMinutePerProject")
    .replace('"quota_limit_value": "60"', '"quota_limit_value": "300"')
)


@pytest.fixture
def clock():
    return ManualClock()


def admit_many(meter: QuotaMeter, user: str, kind: str, count: int,
               project: str = DEFAULT_PROJECT_ID) -> list:
    return [meter.admit(user, kind, project) for _ in range(count)]


def test_the_61st_read_in_a_minute_gets_googles_429(clock):
    meter = QuotaMeter(clock)
    assert admit_many(meter, "sa-1", "read", 60) == [None] * 60
    refusal = meter.admit("sa-1", "read")
    assert refusal.status == 429
    assert json.loads(refusal.body) == GOOGLE_READ_429
    assert "retry-after" not in {name.lower() for name in refusal.headers}


def test_reads_succeed_again_once_the_window_refills(clock):
    meter = QuotaMeter(clock)
    admit_many(meter, "sa-1", "read", 60)
    clock.advance(59.9)
    assert meter.admit("sa-1", "read") is not None  # still inside the minute
    clock.advance(0.1)
    assert meter.admit("sa-1", "read") is None  # the first reads are exactly 60 s old now


def test_the_window_rolls_rather_than_resetting_on_the_minute(clock):
    meter = QuotaMeter(clock, read_per_user=2)
    meter.admit("u", "read")
    clock.advance(30)
    meter.admit("u", "read")
    clock.advance(30)
    assert meter.admit("u", "read") is None  # the first left the window
    assert meter.admit("u", "read") is not None  # the one from 30 s ago still counts


def test_refused_requests_are_not_counted(clock):
    meter = QuotaMeter(clock, read_per_user=1)
    meter.admit("u", "read")
    for _ in range(5):
        clock.advance(10)
        assert meter.admit("u", "read") is not None
    clock.advance(10)  # 60 s after the one admitted read; the five refusals must not extend it
    assert meter.admit("u", "read") is None


def test_each_user_has_its_own_quota_and_the_project_caps_them_all(clock):
    meter = QuotaMeter(clock, read_per_user=3, read_per_project=5)
    assert admit_many(meter, "a", "read", 3) == [None] * 3
    assert admit_many(meter, "b", "read", 2) == [None] * 2
    refusal = meter.admit("c", "read")
    body = json.loads(refusal.body)["error"]
    assert "limit 'Read requests per minute' of service" in body["message"]
    assert "per project" not in body["message"]  # Google's text names no scope for the project's
    assert body["details"][0]["metadata"]["quota_limit"] == "ReadRequestsPerMinutePerProject"
    assert body["details"][0]["metadata"]["quota_limit_value"] == "5"


def test_the_projects_429_is_googles_body_for_its_limit(clock):
    meter = QuotaMeter(clock, read_per_user=1000)
    admit_many(meter, "a", "read", 300)
    refusal = meter.admit("b", "read")
    assert refusal.status == 429
    assert json.loads(refusal.body) == GOOGLE_PROJECT_READ_429


def test_two_projects_each_get_their_own_300_reads_a_minute(clock):
    meter = QuotaMeter(clock, read_per_user=1000)
    assert admit_many(meter, "a@one", "read", 300, project="one") == [None] * 300
    assert admit_many(meter, "b@two", "read", 300, project="two") == [None] * 300
    for user, project in (("a@one", "one"), ("c@one", "one"), ("b@two", "two")):
        refusal = meter.admit(user, "read", project)
        assert refusal is not None
        metadata = json.loads(refusal.body)["error"]["details"][0]["metadata"]
        assert metadata["quota_limit"] == "ReadRequestsPerMinutePerProject"
        assert metadata["consumer"] == f"projects/{project_number(project)}"
    assert meter.usage()["read"]["projects"] == {"one": 300, "two": 300}


def test_one_projects_exhaustion_does_not_refuse_the_other(clock):
    meter = QuotaMeter(clock, read_per_user=1000, read_per_project=5)
    admit_many(meter, "a", "read", 5, project="busy")
    assert meter.admit("a", "read", "busy") is not None
    assert meter.admit("b", "read", "idle") is None
    clock.advance(60)
    assert meter.admit("a", "read", "busy") is None  # its own window refilled on its own clock


def test_a_429_names_the_number_of_the_callers_project_and_keeps_googles_shape(clock):
    meter = QuotaMeter(clock)
    admit_many(meter, "a", "read", 60, project="sheet-monitor-sandbox-2")
    body = json.loads(meter.admit("a", "read", "sheet-monitor-sandbox-2").body)
    number = project_number("sheet-monitor-sandbox-2")
    assert number != "603366585132"
    assert body == json.loads(json.dumps(GOOGLE_READ_429).replace("603366585132", number))


@pytest.mark.parametrize(("user", "project"), [
    ("monitor-3@sheet-monitor-sandbox-2.iam.gserviceaccount.com", "sheet-monitor-sandbox-2"),
    ("monitor-1@sheet-monitor-sandbox.iam.gserviceaccount.com", DEFAULT_PROJECT_ID),
    ("tester@example.com", DEFAULT_PROJECT_ID),
    ("odd@.iam.gserviceaccount.com", DEFAULT_PROJECT_ID),
    (None, DEFAULT_PROJECT_ID),
])
def test_a_requests_project_is_the_one_in_its_service_accounts_email(user, project):
    assert project_of(user) == project


def test_project_numbers_are_stable_twelve_digits_and_the_default_is_the_recorded_one():
    assert project_number(DEFAULT_PROJECT_ID) == "603366585132"
    numbers = {project_number(f"sheet-monitor-sandbox-{n}") for n in range(1, 50)}
    assert len(numbers) == 49 and all(len(n) == 12 and n.isdigit() for n in numbers)
    assert project_number("sheet-monitor-sandbox-1") == project_number("sheet-monitor-sandbox-1")


@pytest.mark.parametrize(("credentials", "projects", "sizes"), [
    (10, 2, [5, 5]), (7, 3, [3, 2, 2]), (1, 1, [1]), (4, 4, [1, 1, 1, 1]),
])
def test_credentials_are_spread_over_projects_in_contiguous_blocks(credentials, projects, sizes):
    owners = spread(credentials, projects)
    names = project_ids(projects)
    assert owners == [name for name, size in zip(names, sizes, strict=True) for _ in range(size)]
    assert names == (["sheet-monitor-sandbox"] if projects == 1
                     else [f"sheet-monitor-sandbox-{n}" for n in range(1, projects + 1)])


def test_more_projects_than_credentials_is_refused():
    with pytest.raises(ValueError, match="every project needs at least one account"):
        spread(2, 3)


def test_reads_and_writes_are_counted_apart(clock):
    meter = QuotaMeter(clock, read_per_user=1, write_per_user=1)
    assert meter.admit("u", "read") is None
    assert meter.admit("u", "write") is None
    refusal = meter.admit("u", "write")
    assert "'Write requests per minute per user'" in json.loads(refusal.body)["error"]["message"]


def test_limits_change_at_runtime_and_are_validated(clock):
    meter = QuotaMeter(clock)
    admit_many(meter, "u", "read", 10)
    meter.set_limits(read_per_user=10)
    assert meter.admit("u", "read") is not None
    assert meter.limits()["read_per_user"] == 10
    with pytest.raises(ValueError, match="read_per_usr"):
        meter.set_limits(read_per_usr=5)
    with pytest.raises(ValueError, match="positive integer"):
        meter.set_limits(write_per_project=0)
    with pytest.raises(ValueError, match="positive integer"):
        meter.set_limits(write_per_project=True)


def test_reset_empties_the_windows_but_keeps_the_limits(clock):
    meter = QuotaMeter(clock, read_per_user=1)
    meter.admit("u", "read")
    meter.reset()
    assert meter.admit("u", "read") is None
    assert meter.admit("u", "read") is not None


def test_usage_reports_the_current_window(clock):
    meter = QuotaMeter(clock)
    admit_many(meter, "a", "read", 2)
    meter.admit("b", "write")
    usage = meter.usage()
    assert usage["read"] == {"projects": {DEFAULT_PROJECT_ID: 2}, "users": {"a": 2}}
    assert usage["write"] == {"projects": {DEFAULT_PROJECT_ID: 1}, "users": {"b": 1}}
    clock.advance(60)
    assert meter.usage()["read"] == {"projects": {}, "users": {}}


def test_unknown_kinds_are_a_programming_error(clock):
    with pytest.raises(ValueError, match="unknown request kind"):
        QuotaMeter(clock).admit("u", "delete")


def test_stats_count_requests_by_endpoint_status_user_and_spreadsheet():
    moments = iter([100.0, 101.0, 102.0, 103.0, 104.0])
    stats = Stats(lambda: next(moments))
    stats.record("values.get", 200, "a@x", "sheet-1")
    stats.record("values.get", 429, "a@x", "sheet-1")
    stats.record("spreadsheets.get", 404, None, "sheet-2")
    stats.record("changes.list", 200, "a@x")  # names no spreadsheet
    snapshot = stats.snapshot()
    assert snapshot == {
        "total": 4,
        "by_endpoint": {"values.get": 2, "spreadsheets.get": 1, "changes.list": 1},
        "by_status": {"200": 2, "404": 1, "429": 1},
        "by_user": {"a@x": 3, "anonymous": 1},
        "quota_exceeded": 1,
        "quota_exceeded_by_user": {"a@x": 1},
        "refusals": [{"at": 101.0, "endpoint": "values.get", "user": "a@x", "spreadsheet": "sheet-1"}],
        "by_spreadsheet": {"sheet-1": {"values.get": 2}, "sheet-2": {"spreadsheets.get": 1}},
        "first_request_at": 100.0,  # the first request's moment, asked once
    }
    assert stats.of_spreadsheet("sheet-1") == {"values.get": 2} and stats.of_spreadsheet("sheet-3") == {}
    stats.reset()
    assert stats.snapshot()["total"] == 0 and stats.of_spreadsheet("sheet-1") == {}
    assert stats.snapshot()["first_request_at"] is None
    stats.record("values.get", 200, "a@x", "sheet-1")
    assert stats.snapshot()["first_request_at"] == 102.0  # 101 was the refusal's moment
    assert stats.snapshot()["refusals"] == []
