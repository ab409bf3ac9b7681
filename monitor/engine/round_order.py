"""Which spreadsheets a new round reads, in which order, and how far it has got.

Apart from the run (monitor.engine.run) because both are plain functions of the state: the order is
decided once per round, by the one runner that starts it (monitor.engine.sharing).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from monitor.engine.health import record_skip
from monitor.engine.heartbeat import RoundProgress
from monitor.engine.inspect import SheetPlan
from monitor.engine.runner_state import RunnerState
from monitor.engine.tasks import DONE, FAILED, PENDING, PROCESSING, Round

_NEVER = datetime.min.replace(tzinfo=UTC)  # "last checked" of a spreadsheet never checked: first in line


def round_order(state: RunnerState, plans: Mapping[str, SheetPlan], now: datetime) -> list[str]:
    """Configured, unmuted spreadsheets: those `dlq retry` asked for first, then those lending a
    range to cross-sheet checks, then never-checked and longest-unchecked first. Marks the muted
    ones skipped."""
    muted = {sid for sid, mute in state.active_mutes(now).items() if mute.skips_reads}
    for plan_id in muted & plans.keys():
        state.health[plan_id] = record_skip(state.health.get(plan_id), "muted")
    first = set(state.retry_first.spreadsheet_ids)

    def order(plan_id: str) -> tuple[bool, bool, datetime]:
        record = state.health.get(plan_id)
        # Spreadsheets that lend a range to others' cross-sheet checks before those: a dependent
        # read later in the round then compares with this round's other side at once.
        lends = bool(plans[plan_id].links.lends)
        return plan_id not in first, not lends, (record.last_checked_at if record else None) or _NEVER

    return sorted((plan_id for plan_id in plans if plan_id not in muted), key=order)


def progress_of(rnd: Round) -> RoundProgress:
    counts = rnd.counts()
    return RoundProgress(rnd.id, pending=counts[PENDING], processing=counts[PROCESSING], done=counts[DONE],
                         failed=counts[FAILED])
