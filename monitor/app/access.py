"""``check-config --access``: can the credentials open every spreadsheet and folder the config names?

Drive is asked once per spreadsheet (and per folder) and credential: a ``files.get`` with the field
mask ``id,mimeType`` and ``supportsAllDrives``, counted against Drive's quota (12,000 requests a
minute per user), not against Sheets' read quota the runs live on. The requests go a few at a time
and are paced to at most :data:`PER_MINUTE` per credential, a quarter of Drive's per-user quota, so
that a check beside running cron jobs leaves Drive's quota to them: 700 spreadsheets take seconds.

Drive answers a file the account may not see as 404 "File not found", exactly as one that does not
exist (Drive's "Resolve errors" page): either way it must be shared with the account (or its id
corrected), which is what the listing says. A file Drive shows as another type (an uploaded .xlsx, a
folder given as a spreadsheet) is listed too. An answer that is no answer (a 429, a 5xx, a timeout)
is asked again once, then said as not asked: never as unshared.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from monitor.config import Config
from monitor.core.errors import ErrorClass, SheetReadError
from monitor.google.client import CredentialCache
from monitor.google.reader import DRIVE_FILES_API_V3_URL, GspreadReader, classified

PER_MINUTE = 3000  # a quarter of Drive's 12,000 requests per minute per user
IN_FLIGHT = 16  # Drive answers in ~0.4 s: 16 at a time make ~40 requests a second, under the pace
SHEETS_MIME = "application/vnd.google-apps.spreadsheet"
FOLDER_MIME = "application/vnd.google-apps.folder"
RETRY_AFTER_SECONDS = 2.0  # one pause before a request that got no answer is asked again


@dataclass(frozen=True)
class Target:
    """A file the config names: a spreadsheet of [[sheets]] or a folder of [[folders]]."""

    id: str
    name: str
    origin: str  # where the config names it
    mime_type: str  # what it must be


@dataclass(frozen=True)
class Refusal:
    """A target one credential cannot open, and why, in words."""

    target: Target
    credential: str
    account: str | None  # the e-mail to share it with
    problem: str
    answered: bool = True  # False: Drive gave no answer (not asked, rather than refused)


@dataclass
class AccessReport:
    """What Drive said: every refusal, and how many requests it took and how long."""

    targets: int
    credentials: int
    requests: int = 0
    seconds: float = 0.0
    refusals: list[Refusal] = field(default_factory=list)
    accounts: dict[str, str | None] = field(default_factory=dict)  # credential -> its e-mail

    @property
    def unopened(self) -> list[Refusal]:
        return [refusal for refusal in self.refusals if refusal.answered]

    @property
    def unasked(self) -> list[Refusal]:
        return [refusal for refusal in self.refusals if not refusal.answered]


def targets_of(config: Config) -> list[Target]:
    """Every spreadsheet [[sheets]] lists, then every folder, in the config's order."""
    return [*(Target(sheet.id, sheet.name, sheet.origin, SHEETS_MIME) for sheet in config.sheets),
            *(Target(folder.id, folder.name or folder.id, folder.origin, FOLDER_MIME)
              for folder in config.folders)]


class Pace:
    """At most ``per_minute`` sends, evenly spaced, however many threads ask."""

    def __init__(self, per_minute: int, monotonic: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._gap = 60.0 / per_minute
        self._next = 0.0
        self._lock = threading.Lock()
        self._monotonic, self._sleep = monotonic, sleep

    def wait(self) -> None:
        with self._lock:
            now = self._monotonic()
            at = max(now, self._next)
            self._next = at + self._gap
        if at > now:
            self._sleep(at - now)


def check_access(config: Config, timeout: float | None = None, in_flight: int = IN_FLIGHT,
                 per_minute: int = PER_MINUTE) -> AccessReport:
    """Ask Drive about every target with every credential; the refusals, in the config's order."""
    timeout = timeout or config.google.request_timeout.total_seconds()
    targets = targets_of(config)
    credentials = [str(path) for path in config.google.credentials]
    cache = CredentialCache()
    report = AccessReport(len(targets), len(credentials),
                          accounts={credential: _account(cache, credential) for credential in credentials})
    started = time.monotonic()
    local = threading.local()

    def reader() -> GspreadReader:
        if not hasattr(local, "reader"):  # a client per thread: a requests session is not shared
            local.reader = GspreadReader.for_config(config, timeout, cache)
        return local.reader

    for credential in credentials:
        pace = Pace(per_minute)

        def ask(target: Target, credential: str = credential, pace: Pace = pace
                ) -> tuple[Refusal | None, int]:
            return _asked(reader(), target, credential, report.accounts[credential], pace, timeout)

        with ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix="access") as pool:
            for refusal, requests in pool.map(ask, targets):
                report.requests += requests
                if refusal is not None:
                    report.refusals.append(refusal)
    report.seconds = time.monotonic() - started
    return report


def _asked(reader: GspreadReader, target: Target, credential: str, account: str | None, pace: Pace,
           timeout: float) -> tuple[Refusal | None, int]:
    """(the refusal, or None when the credential opens ``target``; the requests it took)."""
    for attempt in (1, 2):
        pace.wait()
        try:
            with classified(timeout, credential):
                client = reader.client_for(credential, timeout)
                body = client.http_client.request(
                    "get", f"{DRIVE_FILES_API_V3_URL}/{target.id}",
                    params={"fields": "id,mimeType", "supportsAllDrives": "true"}).json()
        except SheetReadError as error:
            if _no_answer(error) and attempt == 1:
                time.sleep(RETRY_AFTER_SECONDS)  # read when called: a test shortens it
                continue
            refusal = Refusal(target, credential, account, _problem(error), answered=not _no_answer(error))
            return refusal, attempt
        mime = body.get("mimeType")
        if mime != target.mime_type:
            return Refusal(target, credential, account, _wrong_type(target, mime)), attempt
        return None, attempt
    raise AssertionError("unreachable: the second attempt returns")


def _no_answer(error: SheetReadError) -> bool:
    return error.error_class in (ErrorClass.QUOTA, ErrorClass.TRANSIENT) or (error.http_status or 0) >= 500


def _problem(error: SheetReadError) -> str:
    if error.http_status == 404:
        return "Drive says it is not there: not shared with the account, or a wrong id"
    if error.http_status in (401, 403):
        return f"Drive refused the account ({error.http_status}): {error.message[:200]}"
    if _no_answer(error):
        return f"Drive gave no answer, asked twice: {error.message[:200]}"
    return f"{error.message[:200]}"


def _wrong_type(target: Target, mime: object) -> str:
    if target.mime_type == SHEETS_MIME:
        return (f"it is not a Google Sheets spreadsheet but {mime} (an uploaded file must be converted: "
                "File > Save as Google Sheets)")
    return f"it is not a folder but {mime}"


def _account(cache: CredentialCache, credential: str) -> str | None:
    try:
        return cache.get(credential).service_account_email
    except Exception:  # noqa: BLE001 - a key that does not load is the key probe's to tell
        return None


def share_lines(refusals: Sequence[Refusal]) -> dict[str | None, list[Refusal]]:
    """The refusals by the account to share them with, in order."""
    by_account: dict[str | None, list[Refusal]] = {}
    for refusal in refusals:
        by_account.setdefault(refusal.account, []).append(refusal)
    return by_account
