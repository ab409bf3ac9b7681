"""Each spreadsheet's own time zone and locale in the sandbox, through gspread as the monitor reads.

What Google does (docs/sandbox.md, "Data model and ranges"): a spreadsheet has ``properties.timeZone``
and ``properties.locale`` (a service account's new file: "Etc/GMT" and "en_US", as recorded), and a
moment written into it is kept as the wall-clock time in its zone, so its date serial is that local
time. The control API sets both with the keys Google uses.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import requests
from gspread.auth import DEFAULT_SCOPES

from monitor.core.clock import ManualClock
from monitor.google.client import build_gspread_client
from sheet_sandbox import running_sandbox

SHEET = "1sandboxZones".ljust(44, "x")
NOON_UTC = {"datetime": "2026-01-05T12:00:00Z"}
READ = {"valueRenderOption": "UNFORMATTED_VALUE", "dateTimeRenderOption": "SERIAL_NUMBER"}
SERIAL_OF_NOON = 46027.5  # 2026-01-05 12:00, days since 1899-12-30


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    # google-auth stamps its JWTs with the real time, so the manual clock starts at the real time.
    with running_sandbox(clock=ManualClock(datetime.now(UTC)), telegram=False, latency="off") as sandbox:
        (credentials,) = sandbox.write_credentials(tmp_path_factory.mktemp("zones"), 1)
        # gspread's own scopes, an editor's: one test sets the zone as a person would (a write).
        yield sandbox, build_gspread_client(credentials, endpoint=sandbox.base_url, timeout=5,
                                            scopes=DEFAULT_SCOPES)


def put(google, timeout=5, **settings) -> requests.Response:
    sandbox, _ = google
    payload = {"title": "Store", "tabs": {"Log": [["Updated"], [NOON_UTC]]}, **settings}
    return requests.put(f"{sandbox.base_url}/_sandbox/spreadsheets/{SHEET}", json=payload, timeout=timeout)


def properties(google, fields: str | None = None) -> dict:
    _, client = google
    params = {"fields": fields} if fields else None
    return client.http_client.fetch_sheet_metadata(SHEET, params=params)["properties"]


def updated(google, render: dict = READ) -> object:
    _, client = google
    body = client.http_client.values_batch_get(SHEET, ["Log!A2"], params=dict(render))
    return body["valueRanges"][0]["values"][0][0]


def test_a_new_spreadsheet_has_the_zone_and_locale_google_gives_a_service_accounts_file(google):
    assert put(google).json()["timeZone"] == "Etc/GMT"
    got = properties(google)
    # As recorded (SpreadsheetTest.test_timezone_and_locale, tests/conformance): en_US, Etc/GMT.
    assert (got["timeZone"], got["locale"]) == ("Etc/GMT", "en_US")
    assert updated(google) == SERIAL_OF_NOON


def test_the_control_api_sets_both_and_spreadsheets_get_returns_them(google):
    stored = put(google, timeZone="Europe/Moscow", locale="ru_RU").json()
    assert (stored["timeZone"], stored["locale"]) == ("Europe/Moscow", "ru_RU")
    got = properties(google)
    assert (got["timeZone"], got["locale"]) == ("Europe/Moscow", "ru_RU")


def test_asking_for_the_zone_alone_returns_only_the_zone(google):
    put(google, timeZone="Asia/Novosibirsk")
    _, client = google
    answer = client.http_client.fetch_sheet_metadata(SHEET, params={"fields": "properties.timeZone"})
    assert answer == {"properties": {"timeZone": "Asia/Novosibirsk"}}


@pytest.mark.parametrize(("zone", "serial", "shown"), [
    ("Europe/Moscow", SERIAL_OF_NOON + 3 / 24, "2026-01-05 15:00:00"),
    ("America/Los_Angeles", SERIAL_OF_NOON - 8 / 24, "2026-01-05 04:00:00"),
    ("GMT-07:00", SERIAL_OF_NOON - 7 / 24, "2026-01-05 05:00:00"),  # Google's custom form
])
def test_a_moment_reads_as_the_wall_clock_time_in_the_spreadsheets_zone(google, zone, serial, shown):
    put(google, timeZone=zone)
    assert updated(google) == pytest.approx(serial, abs=1e-9)
    assert updated(google, {"valueRenderOption": "FORMATTED_VALUE"}) == shown


def test_the_moment_comes_back_from_the_control_api_as_it_went_in(google):
    put(google, timeZone="Asia/Kolkata")
    sandbox, _ = google
    assert sandbox.google.store.get_control(SHEET)["tabs"]["Log"][1] == [NOON_UTC]


def test_a_day_is_the_same_day_in_every_zone(google):
    sandbox, _ = google
    sandbox.google.store.put_control(SHEET, {"title": "S", "timeZone": "Pacific/Kiritimati",
                                             "tabs": {"Log": [["Day"], [{"date": "2026-01-05"}]]}})
    assert updated(google) == 46027


@pytest.mark.parametrize(("settings", "complaint"), [
    ({"timeZone": "Mars/Olympus_Mons"}, '"timeZone"'),
    ({"timeZone": 3}, '"timeZone"'),
    ({"locale": "Russian"}, '"locale"'),
])
def test_a_zone_or_locale_google_would_not_have_is_refused(google, settings, complaint):
    response = put(google, **settings)
    assert response.status_code == 400
    assert complaint in response.json()["error"]["message"]


def test_new_values_without_an_edit_keep_the_zone_and_cannot_change_it(google):
    sandbox, _ = google
    put(google, timeZone="Europe/Moscow")
    url = f"{sandbox.base_url}/_sandbox/spreadsheets/{SHEET}?touch=false"
    quiet = {"title": "Store", "tabs": {"Log": [["Updated"], [NOON_UTC]]}}
    assert requests.put(url, json=quiet, timeout=5).json()["timeZone"] == "Europe/Moscow"
    assert updated(google) == pytest.approx(SERIAL_OF_NOON + 3 / 24)
    refused = requests.put(url, json={**quiet, "timeZone": "UTC"}, timeout=5)
    assert refused.status_code == 400 and "'timeZone' is an edit" in refused.json()["error"]["message"]


def test_a_zone_set_through_the_api_is_what_a_later_read_of_the_zone_sees(google):
    put(google)
    _, client = google
    client.open_by_key(SHEET).update_timezone("Europe/Paris")  # as recorded: updateSpreadsheetProperties
    assert properties(google, "properties.timeZone") == {"timeZone": "Europe/Paris"}
