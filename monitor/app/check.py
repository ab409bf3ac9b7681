"""`sheet-monitor check ID`, composed: one spreadsheet read now and judged as a run judges it.

The read uses the credential with the most room in the quota the runs pace (their saved log, or on
Redis the log the runners share, which so counts this read for them); the change, header and
cross-sheet checks are judged against the history the runs keep, wherever the config keeps the
state. Nothing is recorded: no queue, breaker or health changes.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from monitor.admin.errors import AdminError
from monitor.app.pacing import NoQuotaLeft, command_pacer
from monitor.checks import CheckResult, Health, Past, VolatileCell, health_of
from monitor.config import Config, Sheet
from monitor.config.cross import link_cross_sheets
from monitor.config.model import CheckSet
from monitor.core.clock import ManualClock, SystemClock
from monitor.core.errors import ErrorInfo, SheetReadError
from monitor.engine.history import past_for
from monitor.engine.inspect import (
    SheetPlan,
    explaining_requests,
    judge,
    read,
    sheets_requests,
    volatile_formulas,
    zone_of,
)
from monitor.engine.pacer import QuotaPacer
from monitor.state import State, read_state
from monitor.storage import StateError, StateLocation
from monitor.storage.configured import state_location
from monitor.suggest import check_models


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
    # Whose checks: "config" (the spreadsheet's entry), "profile" (named by --profile), "suggested"
    # (those `suggest` proposes, for a spreadsheet the config does not list).
    judged_by: str = "config"

    @property
    def health(self) -> Health:
        return Health.ERROR if self.error is not None else health_of(self.results)


def check_any(config: Config, target: Sheet | str, profile: str | None, clock: SystemClock | ManualClock
              ) -> tuple[Sheet, Checked]:
    """Check a configured spreadsheet, or one the config does not list (``target`` its id), as a run
    would judge it: by ``profile`` when given (a configured profile's checks instead of its own), else
    by its own checks, and for one the config does not list by the checks `suggest` proposes from a
    read of it (one read more, said in ``spent``). AdminError (usage) for a profile not in the config."""
    if isinstance(target, Sheet) and profile is None:
        return target, check_now(config, target, clock)
    sheet_id = target.id if isinstance(target, Sheet) else target
    if profile is not None:
        name = target.name if isinstance(target, Sheet) else sheet_id
        sheet = _with_profile(config, sheet_id, name, profile)
        return sheet, replace(check_now(config, sheet, clock), judged_by="profile")
    from monitor.app.suggest import suggest_for

    suggestion = suggest_for(config, [sheet_id], clock)
    if suggestion.unread:
        sheet = Sheet.of(sheet_id, sheet_id, None, (), CheckSet.of(()), SUGGESTED)
        spent = {"reads": suggestion.reads, "drive_reads": 0, "credential": ""}
        return sheet, Checked(SheetPlan.of(sheet, config), clock.now(), "", spent,
                              error=suggestion.unread[0].error, judged_by="suggested")
    [proposal] = suggestion.proposals
    (_, title), = proposal.sheets
    sheet = Sheet.of(sheet_id, title, None, (), CheckSet.of(check_models(proposal)), SUGGESTED)
    checked = check_now(config, sheet, clock)
    spent = {**checked.spent, "reads": checked.spent["reads"] + suggestion.reads}
    return sheet, replace(checked, spent=spent, judged_by="suggested")


SUGGESTED = "the checks `suggest` proposes"  # where an unconfigured spreadsheet's checks come from


def _with_profile(config: Config, sheet_id: str, name: str, profile: str) -> Sheet:
    by_name = {p.name: p for p in config.profiles}
    if profile not in by_name:
        listed = ", ".join(sorted(by_name)) or "none: define [profiles.NAME] in the config"
        raise AdminError(f"--profile {profile}: no such profile in {config.path.name}; its profiles: "
                         f"{listed}", usage=True)
    chosen = by_name[profile]
    sheet = Sheet.of(sheet_id, name, chosen, (), CheckSet.of(chosen.checks), f"--profile {profile}")
    # Its cross-sheet checks' other spreadsheets, as the config links them (an unknown one is then a
    # finding of the check, as for a configured spreadsheet whose other is not monitored).
    others = [s for s in config.sheets if s.id != sheet_id]
    return link_cross_sheets([*others, sheet], [])[-1]


def check_now(config: Config, sheet: Sheet, clock: SystemClock | ManualClock) -> Checked:
    """Read ``sheet`` now and judge it; raises NoQuotaLeft when no credential may read this minute."""
    # gspread and google-auth load only for the command that reads.
    from monitor.google.reader import GspreadReader

    plan = SheetPlan.of(sheet, config)
    location = state_location(config)
    saved = _saved(location, plan)
    credential, pacer, follow_ups = _credential(config, location, saved, plan, clock)
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
        data = read(plan, reader, credential, lambda: timeout, fetch_zone=plan.needs_time_zone, detailed=True,
                    explain=follow_ups > 0)
        results = judge(plan, data, now, zone_of(plan, data.time_zone), past=_past(config, plan, saved))
    except SheetReadError as error:
        if error.extra_requests:  # the refused range's tab titles
            spent["reads"] += error.extra_requests
            # Told to the runs' shared log (on Redis); one that stops answering is `status`'s business.
            with contextlib.suppress(StateError):
                pacer.count_unpaced(credential, clock.time(), error.extra_requests)
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


def _credential(config: Config, location: StateLocation, saved: State | None, plan: SheetPlan,
                clock: SystemClock | ManualClock) -> tuple[str, QuotaPacer, int]:
    """The credential with the most room left for ``plan``'s reads, from the quota log the runs keep,
    the pacer that granted it, and the requests explaining a refusal it kept room for."""
    reads, follow_ups = max(sheets_requests(plan), 1), explaining_requests(plan)
    pacer = command_pacer(config, location, saved)
    try:
        credential, wait, kept = pacer.acquire_with_room(clock.time(), reads, follow_ups)
    except StateError:  # a Redis log that stops answering mid-way: the config's quotas alone
        pacer = QuotaPacer.from_config(config)
        credential, wait, kept = pacer.acquire_with_room(clock.time(), reads, follow_ups)
    if credential is None:
        raise NoQuotaLeft(wait)
    return credential, pacer, kept


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
