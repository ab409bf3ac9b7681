"""`sheet-monitor check ID`, composed: one spreadsheet read now and judged as a run judges it.

The read uses the credential with the most room in the quota the runs pace (their saved log, or on
Redis the log the runners share, which so counts this read for them); the change, header and
cross-sheet checks are judged against the history the runs keep, wherever the config keeps the
state. Nothing is recorded: no queue, breaker or health changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from monitor.app.pacing import quota_pacer
from monitor.checks import CheckResult, Health, Past, VolatileCell, health_of
from monitor.config import Config, Sheet
from monitor.core.clock import ManualClock, SystemClock
from monitor.core.errors import ErrorInfo, SheetReadError
from monitor.engine.history import past_for
from monitor.engine.inspect import SheetPlan, judge, read, sheets_requests, volatile_formulas, zone_of
from monitor.engine.pacer import QuotaPacer
from monitor.state import State, read_state
from monitor.storage import StateError, StateLocation
from monitor.storage.configured import state_location


class NoQuotaLeft(Exception):
    """Every credential used its quota in the last minute: try again in ``wait`` seconds."""

    def __init__(self, wait: float) -> None:
        super().__init__(f"every credential used its quota in the last minute; try again in {wait:.0f} s")
        self.wait = wait


@dataclass(frozen=True)
class Checked:
    """What one check of a spreadsheet found: its results, or the error its read met."""

    plan: SheetPlan
    checked_at: datetime
    credential: str
    spent: dict[str, Any]  # Sheets reads and Drive reads spent, and whose quota
    results: list[CheckResult] = field(default_factory=list)
    time_zone: str | None = None
    volatile: list[VolatileCell] | None = None  # formulas whose values move without an edit
    error: ErrorInfo | None = None  # the read failed: no results

    @property
    def health(self) -> Health:
        return Health.ERROR if self.error is not None else health_of(self.results)


def check_now(config: Config, sheet: Sheet, clock: SystemClock | ManualClock) -> Checked:
    """Read ``sheet`` now and judge it; raises NoQuotaLeft when no credential may read this minute."""
    # gspread and google-auth load only for the command that reads.
    from monitor.google.reader import GspreadReader

    plan = SheetPlan.of(sheet, config)
    location = state_location(config)
    saved = _saved(location, plan)
    credential = _credential(config, location, saved, sheets_requests(plan), clock)
    timeout = config.google.request_timeout.total_seconds()
    reader = GspreadReader.for_config(config, timeout)
    now = clock.now()
    # Sheets reads (the values, with the time zone when asked) count against the quota the runs pace;
    # a Drive read (freshness on the file's modified time) counts against Drive's own quota.
    spent = {"reads": sheets_requests(plan), "drive_reads": 1 if plan.needs_modified_time else 0,
             "credential": credential}
    try:
        # With Google's details at once: a check of one spreadsheet has no later try to learn
        # whether an #N/A is IMPORTRANGE still computing (monitor.engine.inspect); one read, which
        # also gives each cell's formula, and the spreadsheet's time zone when its dates need it.
        data = read(plan, reader, credential, lambda: timeout, fetch_zone=plan.needs_time_zone, detailed=True)
        results = judge(plan, data, now, zone_of(plan, data.time_zone), past=_past(config, plan, saved))
    except SheetReadError as error:
        return Checked(plan, now, credential, spent, error=error.info())
    return Checked(plan, now, credential, spent, results, data.time_zone,
                   volatile_formulas(plan, data, config.run.change_detection))


def _saved(location: StateLocation, plan: SheetPlan) -> State | None:
    """What the runs saved that this check needs, read once: the quota log, and the history and the
    DLQ when a change, header or cross-sheet check is judged against them. None without a state, or
    when it cannot be read (`status`'s business): the quota is then only the config's, and those
    checks are judged as at a first read."""
    only = ("quota", "history", "dlq") if _judged_against_the_past(plan) else ("quota",)
    try:
        return read_state(location, only=only)
    except StateError:
        return None


def _credential(config: Config, location: StateLocation, saved: State | None, reads: int,
                clock: SystemClock | ManualClock) -> str:
    """The credential with the most room left for ``reads``, from the quota log the runs keep."""
    try:
        pacer = quota_pacer(config, location)
        if saved is not None:
            pacer.restore(saved.quota)
        credential, wait = pacer.acquire(clock.time(), max(reads, 1))
    except StateError:  # the quota log is only a hint; an unreachable state is `status`'s business
        credential, wait = QuotaPacer.from_config(config).acquire(clock.time(), max(reads, 1))
    if credential is None:
        raise NoQuotaLeft(wait)
    return credential


def _judged_against_the_past(plan: SheetPlan) -> bool:
    return any(check.kind in ("change", "headers_changed", "cross_sheet", "anomaly") for check in plan.checks)


def _past(config: Config, plan: SheetPlan, saved: State | None) -> Past | None:
    """What the last run kept for ``plan``'s change, header and cross-sheet checks (none without a
    state: they are judged as at a first read)."""
    if not _judged_against_the_past(plan):
        return None
    history = saved.history if saved is not None else {}
    failing = {sid: entry.last_error.message for sid, entry in saved.dlq.items()} if saved else {}
    return past_for(plan.checks, plan.links, history, plan.id,
                    {sheet.id: sheet.name for sheet in config.sheets}, failing)
