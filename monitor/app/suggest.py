"""`sheet-monitor suggest URL...`, composed: one read of each spreadsheet, paced as the runs pace
theirs, and a proposed profile per template (``monitor.suggest``).

Each read is one ``spreadsheets.get`` with every tab's grid data (``GspreadReader.read_workbook``),
one slot of the quota the runs pace (their saved log, or on Redis the log the runners share, which
so counts these reads for them); when every credential's minute is full the command waits for the
next slot, as a run would. Nothing is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from monitor.app.pacing import NoQuotaLeft, command_pacer
from monitor.config import Config
from monitor.core.clock import ManualClock, SystemClock
from monitor.core.errors import ErrorInfo, SheetReadError
from monitor.core.timefmt import format_utc
from monitor.core.wording import counted
from monitor.engine.inspect import known_zone
from monitor.engine.pacer import QuotaPacer
from monitor.state import read_state
from monitor.storage import StateError
from monitor.storage.configured import state_location
from monitor.suggest import Proposal, SheetSurvey, propose_all, render_toml, survey, templates

DEFAULT_PROFILE = "suggested"
# A read of a whole spreadsheet answers more than a batchGet of a few ranges: every tab's cells.
_LEAST_TIMEOUT = 60.0


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

    def toml(self, heading: str) -> str:
        return render_toml(self.proposals, heading)


def suggest_for(config: Config, sheet_ids: Sequence[str], clock: SystemClock | ManualClock,
                profile: str = DEFAULT_PROFILE) -> Suggestion:
    """Read each of ``sheet_ids`` once and propose a profile per template, the first named ``profile``."""
    from monitor.google.reader import GspreadReader  # gspread loads only for the command that reads

    location = state_location(config)
    try:
        saved = read_state(location, only=("quota",))
    except StateError:
        saved = None
    pacer = command_pacer(config, location, saved)
    timeout = max(config.google.request_timeout.total_seconds(), _LEAST_TIMEOUT)
    reader = GspreadReader.for_config(config, timeout)
    surveys: list[SheetSurvey] = []
    unread: list[Unread] = []
    for sheet_id in dict.fromkeys(sheet_ids):  # each once, in the order given
        credential = _slot(pacer, clock)
        try:
            workbook = reader.read_workbook(sheet_id, credential, timeout)
            zone = known_zone(workbook.time_zone)
        except SheetReadError as error:
            unread.append(Unread(sheet_id, error.info()))
            continue
        surveys.append(survey(workbook, clock.now(), zone))
    proposals = propose_all(templates(surveys), profile) if surveys else []
    return Suggestion(proposals, surveys, unread, reads=len(surveys) + len(unread))


def heading(suggestion: Suggestion, clock: SystemClock | ManualClock) -> str:
    """The comment above a proposal: when, from what, and what to do with it."""
    read = counted(len(suggestion.surveys), "spreadsheet")
    profiles = counted(len(suggestion.proposals), "profile")
    return (f"Suggested by `sheet-monitor suggest` at {format_utc(clock.now())} from {read} (one read "
            f"each): {profiles}, one per template.\nEach check says what it saw. Review them, add this "
            "to your config and run `sheet-monitor check-config`,\nthen `sheet-monitor check ID` for each "
            "spreadsheet.")


def _slot(pacer: QuotaPacer, clock: SystemClock | ManualClock) -> str:
    """A credential with room for one read now, waiting for the soonest slot when none has any."""
    while True:
        credential, wait = pacer.acquire(clock.time(), 1)
        if credential is not None:
            return credential
        if wait == float("inf"):
            raise NoQuotaLeft(wait)
        clock.sleep(wait)
