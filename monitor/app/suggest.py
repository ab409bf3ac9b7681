"""`sheet-monitor suggest URL...`, composed: one read of each spreadsheet, paced as the runs pace
theirs, and a proposed profile per template (``monitor.suggest``).

Each read is one ``spreadsheets.get`` with every tab's grid data (``GspreadReader.read_workbook``),
one slot of the quota the runs pace (their saved log, or on Redis the log the runners share, which
so counts these reads for them); when every credential's minute is full the command waits for the
next slot, as a run would. Nothing is recorded.

A folder (``suggest FOLDER_URL``) is listed through Drive first, as a run lists it
(``monitor.google.drive_folders``, by the first credential), and its spreadsheets read like the
others; the proposal then holds its ``[[folders]]`` table (``monitor.suggest.folders``). A folder
the credential cannot see, a file that is not a folder and a folder with no spreadsheet are
``FolderProblem``s: the reference was wrong, nothing is read.

``google_only_config`` is the config of a newcomer who has a key and no config yet.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from monitor.app.pacing import NoQuotaLeft, command_pacer
from monitor.config import DEFAULT_CONFIG_NAME, Config, config_of_text
from monitor.core.clock import ManualClock, SystemClock
from monitor.core.errors import ErrorClass, ErrorInfo, QuotaScope, SheetReadError
from monitor.core.timefmt import format_utc
from monitor.core.wording import counted
from monitor.engine.inspect import known_zone
from monitor.engine.pacer import QuotaPacer
from monitor.engine.retry import DEFAULT_POLICIES
from monitor.state import read_state
from monitor.storage import StateError
from monitor.storage.configured import state_location
from monitor.suggest import (
    FolderProposal,
    Proposal,
    SheetSurvey,
    folders_first,
    for_folder,
    propose_all,
    render_toml,
    survey,
    templates,
)

DEFAULT_PROFILE = "suggested"
# A read of a whole spreadsheet answers more than a batchGet of a few ranges: every tab's cells.
_LEAST_TIMEOUT = 60.0
# A spreadsheet's tries: someone waits on the command, so a failure that passes (a 503, a timeout, a
# 429) is tried twice more, not five times over two minutes as a run's; one that cannot pass, once.
SUGGEST_TRIES = 3
_PASSING = frozenset({ErrorClass.TRANSIENT, ErrorClass.QUOTA})


@dataclass(frozen=True)
class Unread:
    """A spreadsheet whose read failed, and why."""

    sheet_id: str
    error: ErrorInfo


@dataclass(frozen=True)
class Suggestion:
    proposals: list[Proposal]
    surveys: list[SheetSurvey]
    unread: list[Unread] = field(default_factory=list)
    reads: int = 0  # Sheets reads spent
    folders: list[FolderProposal] = field(default_factory=list)
    listings: int = 0  # Drive requests that listed the folders

    def toml(self, heading: str) -> str:
        return render_toml(self.proposals, heading, self.folders)


class FolderProblem(Exception):
    """A folder given to suggest that cannot be proposed for (a usage error): the message says what
    and what to do."""


@dataclass(frozen=True)
class Listed:
    """A folder as Drive listed it for suggest."""

    reference: str  # as given
    id: str
    name: str
    sheets: dict[str, str]  # id -> name
    recursive: bool
    requests: int


def google_only_config(credentials: Sequence[Path], endpoint: str | None, folder: Path) -> Config:
    """The config of ``[google]`` alone, with these keys (and the sandbox's endpoint), as if written
    in ``folder``: what suggest needs before a config exists. Raises ConfigError as a file would."""
    lines = ["[google]", f"credentials = {json.dumps([str(path.absolute()) for path in credentials])}"]
    if endpoint:
        lines.append(f"api_endpoint = {json.dumps(endpoint)}")
    return config_of_text("\n".join(lines) + "\n", folder / DEFAULT_CONFIG_NAME, require_sheets=False)


def suggest_for(config: Config, sheet_ids: Sequence[str], clock: SystemClock | ManualClock,
                profile: str = DEFAULT_PROFILE, folders: Sequence[tuple[str, str]] = (),
                recursive: bool = False) -> Suggestion:
    """Read each of ``sheet_ids`` once, and each spreadsheet of ``folders`` ((reference, id), listed
    first), and propose a profile per template, the first named ``profile``."""
    from monitor.google.reader import GspreadReader  # gspread loads only for the command that reads

    location = state_location(config)
    try:
        saved = read_state(location, only=("quota",))
    except StateError:
        saved = None
    pacer = command_pacer(config, location, saved)
    timeout = max(config.google.request_timeout.total_seconds(), _LEAST_TIMEOUT)
    from monitor.google.client import CredentialCache

    keys = CredentialCache()
    reader = GspreadReader.for_config(config, timeout, keys)
    listed = [_listed(reader, keys, config, reference, folder_id, recursive, timeout)
              for reference, folder_id in folders]
    surveys: list[SheetSurvey] = []
    unread: list[Unread] = []
    in_folders = [sheet_id for folder in listed for sheet_id in folder.sheets]
    for sheet_id in dict.fromkeys([*sheet_ids, *in_folders]):  # each once, in the order given
        try:
            workbook = _workbook(reader, sheet_id, pacer, clock, timeout)
            zone = known_zone(workbook.time_zone)
        except SheetReadError as error:
            unread.append(Unread(sheet_id, error.info()))
            continue
        surveys.append(survey(workbook, clock.now(), zone))
    proposals = propose_all(folders_first(templates(surveys), in_folders), profile) if surveys else []
    tables = []
    for folder in listed:
        if proposals and any(one.id in folder.sheets for one in surveys):
            proposals, table = for_folder(proposals, folder.id, folder.name, folder.recursive, folder.sheets)
            tables.append(table)
    return Suggestion(proposals, surveys, unread, reads=len(surveys) + len(unread), folders=tables,
                      listings=sum(folder.requests for folder in listed))


def _listed(reader, keys, config: Config, reference: str, folder_id: str, recursive: bool,
            timeout: float) -> Listed:
    """The folder's spreadsheets as the first credential sees them; a FolderProblem when there are
    none to see, a SheetReadError when Drive gave no answer."""
    from monitor.app.folders import first_credentials_drive

    drive = first_credentials_drive(config, reader, keys)
    credential, account = drive.credential, drive.account
    share = f"share it with {account} (Viewer is enough)" if account else "share it with the service account"
    try:
        contents = drive.list_folder(folder_id, recursive, timeout)
    except SheetReadError as error:
        if error.http_status == 404:
            raise FolderProblem(f"{reference}: Drive says there is no such folder for {credential}: it is "
                                f"not shared with the account, or the address is wrong; {share}, or copy "
                                "its address again from the browser") from None
        if error.error_class is ErrorClass.PERMANENT:
            raise FolderProblem(f"{reference}: {error.message}") from None
        raise
    if not contents.sheets:
        below = ("nor do its subfolders" if recursive else
                 "spreadsheets in its subfolders count only with --recursive")
        raise FolderProblem(f"{reference}: the folder {contents.name!r} holds no Google Sheets that "
                            f"{credential} can see ({below}): put spreadsheets in it and {share}; an "
                            "uploaded .xlsx must be converted first (File > Save as Google Sheets)")
    return Listed(reference, folder_id, contents.name, dict(contents.sheets), recursive, contents.requests)


def heading(suggestion: Suggestion, clock: SystemClock | ManualClock) -> str:
    """The comment above a proposal: when, from what, and what to do with it."""
    read = counted(len(suggestion.surveys), "spreadsheet")
    profiles = counted(len(suggestion.proposals), "profile")
    return (f"Suggested by `sheet-monitor suggest` at {format_utc(clock.now())} from {read} (one read "
            f"each): {profiles}, one per template.\nEach check says what it saw. Review them, add this "
            "to your config and run `sheet-monitor check-config`,\nthen `sheet-monitor check ID` for each "
            "spreadsheet.")


def _workbook(reader, sheet_id: str, pacer: QuotaPacer, clock: SystemClock | ManualClock, timeout: float):
    """One spreadsheet's workbook, a failure that passes tried again as a run would: a transient one
    (a 503, a timeout) after the runs' backoff (3 s, then 9 s), a quota refusal when the pacer has
    room again; SheetReadError once it failed SUGGEST_TRIES times, or at once when retrying cannot
    help (it is not shared, not found, not a spreadsheet)."""
    attempt = 1
    while True:
        credential = _slot(pacer, clock)
        try:
            return reader.read_workbook(sheet_id, credential, timeout)
        except SheetReadError as error:
            if attempt == SUGGEST_TRIES or error.error_class not in _PASSING:
                raise
            if error.error_class is ErrorClass.QUOTA:  # the next slot is after the window Google named
                pacer.record_quota_error(credential, clock.time(), error.quota_scope or QuotaScope.UNKNOWN)
            else:
                clock.sleep(DEFAULT_POLICIES[ErrorClass.TRANSIENT].nominal_delay(attempt))
        attempt += 1


def _slot(pacer: QuotaPacer, clock: SystemClock | ManualClock) -> str:
    """A credential with room for one read now, waiting for the soonest slot when none has any."""
    while True:
        credential, wait = pacer.acquire(clock.time(), 1)
        if credential is not None:
            return credential
        if wait == float("inf"):
            raise NoQuotaLeft(wait)
        clock.sleep(wait)
