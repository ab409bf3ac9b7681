"""Reading spreadsheets through gspread: one ``values:batchGet`` per spreadsheet, errors classified here.

Everything gspread, requests or google-auth raise is caught here, classified once
(``monitor.core.errors.classify``) and raised as a ``SheetReadError``; nothing above this module sees
a library's exception. Implements ``monitor.engine.inspect.SheetReader``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from monitor.google import lean_gspread  # noqa: F401  before gspread: see its doc

# isort: split

import google.auth.exceptions
import gspread
import requests
from gspread.exceptions import APIError
from gspread.urls import DRIVE_FILES_API_V3_URL, SPREADSHEET_URL, SPREADSHEET_VALUES_BATCH_URL

from monitor.config import Config
from monitor.core.errors import (
    CREDENTIAL_REASONS,
    ErrorClass,
    QuotaScope,
    SheetReadError,
    classify,
    quota_scope,
)
from monitor.core.timefmt import parse_utc
from monitor.engine.health import Tab
from monitor.engine.inspect import Encoded, ZoneAnswer
from monitor.google import grid, token
from monitor.google.client import CredentialCache, build_gspread_client
from monitor.google.refusals import CredentialUnusable, refused_for_now

if TYPE_CHECKING:
    from monitor.suggest.workbook import Workbook

T = TypeVar("T")

# Numbers as numbers and dates as serial numbers: the checks compare values, not their display.
READ_PARAMS = {
    "valueRenderOption": "UNFORMATTED_VALUE",
    "dateTimeRenderOption": "SERIAL_NUMBER",
    "majorDimension": "ROWS",
}
# Google's wording for a range it cannot resolve (a renamed tab, a typo in the config).
_BAD_RANGE_PREFIX = "Unable to parse range: "
# spreadsheets.get narrowed to what the monitor needs: a small answer, one read of quota. The tabs'
# ids come in the same answer at no extra cost, so alerts can link to a tab's bad cell.
ZONE_PARAMS = {"fields": "properties.timeZone,sheets.properties(sheetId,title)"}
# A read that must learn the zone learns it in the request that reads the values (their grid data, in
# which every tab's properties come), one read of quota rather than two: one mask, no field twice.
ZONE_FIELD = "properties.timeZone"
# The tabs a spreadsheet has, asked once its range was refused (a tab renamed or deleted?).
TABS_PARAMS = {"fields": "sheets.properties.title"}
# The Sheets API's words for a spreadsheet not shared with the caller.
_FORBIDDEN = "The caller does not have permission"
# Google's answer to a request that reached it without any credential carries no ErrorInfo; it is
# given the reason Google's newer answers to that use, so the table classifies it as the others.
_MISSING_CREDENTIAL = "The request is missing a valid API key."


class GspreadReader:
    """Reads spreadsheets with one gspread client per credential, built when it is first used.

    One reader per worker thread: its clients hold ``requests`` sessions, which are not thread-safe.
    Readers of one run share a :class:`CredentialCache`, so each service account is loaded once and
    has one token, whatever the number of workers. ``defer``: the values come :class:`Encoded`, to
    be decoded when the run judges them (a run's workers; see there).
    """

    def __init__(self, make_client: Callable[[str], gspread.Client], *, defer: bool = False) -> None:
        self._make_client = make_client
        self.clients: dict[str, gspread.Client] = {}
        self.defer = defer

    @classmethod
    def for_config(cls, config: Config, timeout: float, credentials: CredentialCache | None = None, *,
                   defer: bool = False) -> GspreadReader:
        """A reader for the config's credentials and endpoint."""
        endpoint = str(config.google.api_endpoint).rstrip("/") if config.google.api_endpoint else None
        return cls.from_credentials(endpoint=endpoint, timeout=timeout, credentials=credentials, defer=defer)

    @classmethod
    def from_credentials(cls, *, endpoint: str | None, timeout: float,
                         credentials: CredentialCache | None = None, defer: bool = False) -> GspreadReader:
        """A reader whose credentials are service-account files, named by their paths."""
        cache = credentials or CredentialCache()
        return cls(lambda path: build_gspread_client(cache.get(path), endpoint=endpoint, timeout=timeout),
                   defer=defer)

    def read(self, spreadsheet_id: str, ranges: Sequence[str], credential: str, timeout: float
             ) -> list[dict] | Encoded[list[dict]]:
        """Every range in one request; raises SheetReadError, never a requests/gspread/google-auth error."""
        params = {**READ_PARAMS, "ranges": list(ranges)}
        return self._answer(SPREADSHEET_VALUES_BATCH_URL % spreadsheet_id, params, credential, timeout,
                            partial(_value_ranges, len(ranges)))

    def read_detailed(self, spreadsheet_id: str, ranges: Sequence[str], credential: str, timeout: float
                      ) -> grid.GridValues | Encoded[grid.GridValues]:
        """The ValueRanges :meth:`read` returns, every error cell's details, and the same ranges as
        formulas, from one ``spreadsheets.get`` with grid data (``monitor.google.grid``);
        SheetReadError as read."""
        params = {"ranges": list(ranges), "fields": grid.FIELDS}
        return self._answer(SPREADSHEET_URL % spreadsheet_id, params, credential, timeout,
                            lambda content: _grid_values(grid.parse(content), ranges))

    def read_with_zone(self, spreadsheet_id: str, ranges: Sequence[str], credential: str, timeout: float,
                       detailed: bool = False
                       ) -> tuple[grid.GridValues, ZoneAnswer] | Encoded[tuple[grid.GridValues, ZoneAnswer]]:
        """The values of ``ranges`` (with every error cell's details and the ranges as formulas when
        ``detailed``, else the ValueRanges :meth:`read` gives and no details) and the spreadsheet's
        time zone and tabs, from one ``spreadsheets.get`` with grid data: one read of quota where
        :meth:`time_zone` then :meth:`read` are two. The tabs are those the ranges name, as Google
        answers only those (the ones a finding's cell can be on). SheetReadError as :meth:`read`."""
        cells = grid.FIELDS if detailed else grid.VALUE_FIELDS
        params = {"ranges": list(ranges), "fields": f"{ZONE_FIELD},{cells}"}

        def decode(content: bytes) -> tuple[grid.GridValues, ZoneAnswer]:
            body = grid.parse(content)
            return _grid_values(body, ranges, formulas=detailed), ZoneAnswer(_zone_of(body), _tabs_of(body))

        return self._answer(SPREADSHEET_URL % spreadsheet_id, params, credential, timeout, decode)

    def _answer(self, url: str, params: dict, credential: str, timeout: float, decode: Callable[[bytes], T]
                ) -> T | Encoded[T]:
        """One GET of the Sheets API, its answer decoded by ``decode`` (or left Encoded when this reader
        defers); SheetReadError for the request's failure and for an answer that is not what was asked."""
        with self._explained(credential), classified(timeout, credential):
            client = self.client_for(credential, timeout)
            content = client.http_client.request("get", url, params=params).content
        answer = Encoded(content, partial(_decoded, decode))
        return answer if self.defer else answer.decoded()

    def read_workbook(self, spreadsheet_id: str, credential: str, timeout: float) -> Workbook:
        """The whole spreadsheet, every tab's values with dates marked, its title and time zone, in one
        ``spreadsheets.get`` with grid data (``monitor.google.workbook``): one read of quota, for
        `suggest`. SheetReadError as :meth:`read`. Its module (and `suggest`'s) loads only here: a
        run never reads a whole workbook."""
        from monitor.google import workbook

        params = {"includeGridData": "true", "fields": workbook.FIELDS}
        with self._explained(credential), classified(timeout, credential):
            client = self.client_for(credential, timeout)
            body = client.http_client.request("get", SPREADSHEET_URL % spreadsheet_id, params=params).json()
            return workbook.workbook_of(body)

    def modified_time(self, spreadsheet_id: str, credential: str, timeout: float) -> datetime:
        """The file's Drive ``modifiedTime``, for freshness checks on the whole file: read here from
        its RFC 3339 text, once (text that is not a time is an unreadable answer)."""
        params = {"fields": "modifiedTime", "supportsAllDrives": True}
        with classified(timeout, credential):
            client = self.client_for(credential, timeout)
            response = client.http_client.request(
                "get", f"{DRIVE_FILES_API_V3_URL}/{spreadsheet_id}", params=params
            )
            return parse_utc(response.json()["modifiedTime"])

    def time_zone(self, spreadsheet_id: str, credential: str, timeout: float) -> ZoneAnswer:
        """The spreadsheet's ``properties.timeZone`` as Google names it ("Europe/Moscow",
        "GMT-07:00"), and its tabs' titles and ids: one Sheets read, counted against the read quota
        like a batchGet. Often a spreadsheet's first request: its refusal is explained as a read's."""
        with self._explained(credential), classified(timeout, credential):
            client = self.client_for(credential, timeout)
            body = client.http_client.fetch_sheet_metadata(spreadsheet_id, params=dict(ZONE_PARAMS))
            return ZoneAnswer(_zone_of(body), _tabs_of(body))

    @contextmanager
    def _explained(self, credential: str) -> Iterator[None]:
        """A 403 a person must act on, given what they need to act: the service account's e-mail
        (the address to share the spreadsheet with). A 400 for a range is explained by the tabs the
        spreadsheet has (:meth:`tab_titles`), a request of its own that the caller decides on."""
        try:
            yield
        except SheetReadError as error:
            if error.http_status == 403 and error.message.startswith(_FORBIDDEN):
                error.account = self._account(credential)
            raise

    def _account(self, credential: str) -> str | None:
        client = self.clients.get(credential)
        email = getattr(client.http_client.auth, "service_account_email", None) if client else None
        return email if isinstance(email, str) and email else None

    def tab_titles(self, spreadsheet_id: str, credential: str, timeout: float) -> tuple[str, ...] | None:
        """The spreadsheet's tab titles, or None when they cannot be had within ``timeout``. One
        Sheets read, asked for a spreadsheet whose range was refused (was a tab renamed?)."""
        try:
            with classified(timeout, credential):
                client = self.client_for(credential, timeout)
                body = client.http_client.fetch_sheet_metadata(spreadsheet_id, params=dict(TABS_PARAMS))
                titles = tuple(sheet["properties"]["title"] for sheet in body.get("sheets", []))
        except SheetReadError:
            return None  # the refusal is told without them
        return titles if all(isinstance(title, str) for title in titles) else None

    def client_for(self, credential: str, timeout: float) -> gspread.Client:
        """This reader's client for ``credential``, its timeout set to ``timeout``."""
        client = self.clients.get(credential)
        if client is None:
            client = self.clients[credential] = self._make_client(credential)
        client.set_timeout(max(timeout, 0.1))  # bounded by the run's remaining budget on every call
        return client


@contextmanager
def classified(timeout: float, credential: str | None = None) -> Iterator[None]:
    """Turn whatever gspread, requests or google-auth raise into one classified SheetReadError (for
    every request this package sends: reads, and Drive's change feed). ``credential`` (its file's
    path) is named when the failure is the credential's, not the spreadsheet's."""
    try:
        yield
    except APIError as exc:
        raise _api_error(exc, credential) from None
    except requests.Timeout:
        raise _transient(f"no answer within {timeout:.1f} s") from None
    except requests.ConnectionError as exc:
        raise _transient(f"connection failed: {_reason(exc)}") from None
    except CredentialUnusable as exc:
        # The credential's own problem (its key, or Google refusing the account): the run stops using
        # it; no spreadsheet is blamed and it does not look like Google failing.
        raise SheetReadError(ErrorClass.TRANSIENT, None, None, exc.problem.text()[:500],
                             credential_problem=exc.problem) from None
    except google.auth.exceptions.GoogleAuthError as exc:
        # The token endpoint refused or failed: every spreadsheet would fail alike, so this must
        # not dead-letter them one by one; as transient it feeds the whole-API breaker instead.
        message = f"token request failed{_for(credential)}: {_token_problem(exc, timeout)}"
        raise SheetReadError(ErrorClass.TRANSIENT, None, None, message,
                             credential_refused=refused_for_now(exc)) from None
    except (ValueError, KeyError) as exc:  # a 200 whose body is not the JSON we asked for
        raise SheetReadError(ErrorClass.UNCERTAIN, 200, None, f"unreadable answer: {exc!r}"[:300]) from None


def _api_error(exc: APIError, credential: str | None) -> SheetReadError:
    response = exc.response
    content_type = response.headers.get("Content-Type", "")
    is_html = "json" not in content_type.lower()
    google_status = exc.error.get("status") if not is_html else None
    message = str(exc.error.get("message", "")) if not is_html else f"HTTP {response.status_code} error page"
    reason = None if is_html else _first_reason(exc.error)
    detail = None if is_html else _detail_reason(exc.error, message)
    error_class = classify(response.status_code, google_status, is_html, False, False, reason,
                           detail_reason=detail)
    credential_refused = response.status_code == 401 or CREDENTIAL_REASONS & {reason, detail}
    if credential_refused and credential:  # which key file to look at: the spreadsheet is not at fault
        message = f"{message} (credential {Path(credential).name})"
    bad_range = message[len(_BAD_RANGE_PREFIX) :] if message.startswith(_BAD_RANGE_PREFIX) else None
    scope = None
    if error_class is ErrorClass.QUOTA:
        # Whose quota ran out decides who waits; Google's anti-abuse page ("Sorry...") names none.
        scope = QuotaScope.UNKNOWN if is_html else quota_scope(exc.error)
    return SheetReadError(error_class, response.status_code, google_status, message[:500], range=bad_range,
                          quota_scope=scope)


def _decoded(decode: Callable[[bytes], T], content: bytes) -> T:
    """``decode(content)``, an answer that is not the JSON asked for told as such (a 200 of another
    shape: classified as uncertain, as ``classified`` does for the request's own)."""
    try:
        return decode(content)
    except (ValueError, KeyError, TypeError) as exc:
        raise SheetReadError(ErrorClass.UNCERTAIN, 200, None, f"unreadable answer: {exc!r}"[:300]) from None


def _value_ranges(asked: int, content: bytes) -> list[dict]:
    """A ``values:batchGet`` answer's ValueRanges, one for each of the ``asked`` ranges."""
    value_ranges = json.loads(content)["valueRanges"]
    if len(value_ranges) != asked:
        raise SheetReadError(ErrorClass.UNCERTAIN, 200, None,
                             f"asked for {asked} ranges, Google returned {len(value_ranges)}")
    return value_ranges


def _grid_values(body: Mapping[str, Any], ranges: Sequence[str], formulas: bool = True) -> grid.GridValues:
    try:
        return grid.value_ranges_of(body, ranges, formulas=formulas)
    except grid.UnreadableGrid as exc:
        message = f"unreadable grid data: {exc}"[:300]
        raise SheetReadError(ErrorClass.UNCERTAIN, 200, None, message) from None


def _zone_of(body: dict) -> str:
    """``properties.timeZone`` of a ``spreadsheets.get`` answer; KeyError/ValueError (an unreadable
    answer, classified as such) when it is not a name."""
    zone = body["properties"]["timeZone"]
    if not isinstance(zone, str):
        raise ValueError(f"timeZone is {zone!r}")
    return zone


def _tabs_of(body: dict) -> tuple[Tab, ...]:
    """Each tab's title and ``sheetId`` from a ``sheets.properties`` answer. Google leaves out a field
    at its default, and the first tab's ``sheetId`` is often 0, so a missing id is 0."""
    tabs = []
    for sheet in body.get("sheets", []):
        properties = sheet.get("properties", {}) if isinstance(sheet, dict) else {}
        title, gid = properties.get("title"), properties.get("sheetId", 0)
        if isinstance(title, str) and isinstance(gid, int):
            tabs.append(Tab(title, gid))
    return tuple(tabs)


def _detail_reason(error: dict, message: str) -> str | None:
    """The ``reason`` of the body's ``google.rpc.ErrorInfo`` detail, if any (see _MISSING_CREDENTIAL)."""
    details = error.get("details")
    for detail in details if isinstance(details, list) else ():
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("google.rpc.ErrorInfo"):
            return detail.get("reason")
    return "CREDENTIALS_MISSING" if message == _MISSING_CREDENTIAL else None


def _token_problem(exc: google.auth.exceptions.GoogleAuthError, timeout: float) -> str:
    # google-auth wraps a request that got no answer in its own error: told as for any request.
    if isinstance(exc.__cause__, requests.Timeout):
        return f"no answer within {timeout:.1f} s"
    if isinstance(exc.__cause__, requests.ConnectionError):
        return f"connection failed: {_reason(exc)}"
    return token.token_failure_text(exc)


def _for(credential: str | None) -> str:
    return f" for {Path(credential).name}" if credential else ""


def _first_reason(error: dict) -> str | None:
    """``error.errors[0].reason`` of a Google error body (Drive's say why they refuse), if any."""
    details = error.get("errors")
    first = details[0] if isinstance(details, list) and details else None
    return first.get("reason") if isinstance(first, dict) else None


def _transient(message: str) -> SheetReadError:
    return SheetReadError(ErrorClass.TRANSIENT, None, None, message)


def _reason(exc: BaseException) -> str:
    # The innermost cause says what happened ("Connection reset by peer"), the wrappers only where.
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__
    return str(exc)[:300] or type(exc).__name__
