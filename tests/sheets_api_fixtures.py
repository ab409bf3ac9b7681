"""A seeded fake Google API over real HTTP, for the tests of its Sheets and Drive endpoints
(test_sandbox_reads, _writes, _batch_update, _drive, _control_format).

tests/conftest.py registers the fixtures: ``google_clock`` (a ManualClock at 2026-01-05 03:00 UTC),
``sandbox`` (a GoogleSandbox on that clock, no auth, no latency, no quota to speak of, holding
:data:`SPREADSHEET_ID`) and ``api`` (a :class:`SheetsApi` talking to it through ``requests``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import quote

import pytest
import requests

from monitor.core.clock import ManualClock
from sheet_sandbox.google import GoogleSandbox
from sheet_sandbox.http import HTTPServerThread

SPREADSHEET_ID = "1StockSheetForTestsxxxxxxxxxxxxxxxxxxxxxxxxx"[:44]
BIG = 10**9


@pytest.fixture
def google_clock():
    return ManualClock(datetime(2026, 1, 5, 3, 0, tzinfo=UTC))


@pytest.fixture
def sandbox(google_clock):
    sandbox = GoogleSandbox(clock=google_clock, require_auth=False, latency="off", read_per_user=BIG,
                            read_per_project=BIG, write_per_user=BIG, write_per_project=BIG)
    sandbox.store.put_control(SPREADSHEET_ID, {
        "title": "Store 7",
        "tabs": {
            "Stock": [
                ["SKU", "Qty", "Price", "Updated", "Value"],
                ["A-1", 5, 2.5, {"date": "2020-01-01"}, "=B2*C2"],
                ["A-2", None, None, None, None],
                [],
                ["A-4", -3, "#REF!", {"datetime": "2026-01-05T02:30:00Z"}, True],
            ],
            "My tab": [["x"]],
        },
    })
    return sandbox


@pytest.fixture
def api(sandbox):
    with HTTPServerThread(sandbox) as server, requests.Session() as session:
        session.trust_env = False
        yield SheetsApi(server.base_url, session)


class SheetsApi:
    """The fake's Sheets and Drive endpoints through a ``requests`` session (5 s timeouts)."""

    def __init__(self, base_url: str, session: requests.Session) -> None:
        self.base = base_url
        self.session = session

    def sheets(self, method: str, tail: str, **kwargs) -> requests.Response:
        return self.session.request(method, f"{self.base}/v4/spreadsheets/{tail}", timeout=5,
                                    **kwargs)

    def values(self, text: str, spreadsheet: str = SPREADSHEET_ID, **params) -> requests.Response:
        return self.sheets("GET", f"{spreadsheet}/values/{quote(text, safe='')}", params=params)

    def put(self, text: str, values, option: str = "RAW") -> requests.Response:
        return self.sheets("PUT", f"{SPREADSHEET_ID}/values/{quote(text, safe='')}",
                           params={"valueInputOption": option}, json={"values": values})

    def drive(self, method: str, tail: str = "", **kwargs) -> requests.Response:
        return self.session.request(method, f"{self.base}/drive/v3/files{tail}", timeout=5,
                                    **kwargs)


def google_error(response: requests.Response) -> tuple[int, str, str]:
    """(status, error.status, error.message) of a Google-shaped error, checking its code."""
    error = response.json()["error"]
    assert error["code"] == response.status_code
    return response.status_code, error["status"], error["message"]
