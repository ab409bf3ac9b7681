"""The fleet as every view counts it: each configured spreadsheet's standing at one moment.

`status`, `sheets`, the Telegram alert's "Failing now", the round summary, the digest, the status
page and the metrics all count a ``Fleet``, so no two of them can disagree: each spreadsheet has
one standing, a muted one or one under maintenance (``monitor.engine.maintenance``) whatever its
verdict. Spreadsheets the state still holds but the config no longer lists are not part of it (the
next run forgets them: ``monitor.engine.unconfigured``). Pure: ``now`` comes in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from monitor.config import MaintenanceWindow
from monitor.engine.health import ERROR, FAIL, OK, SKIPPED, UNKNOWN, WARN, SheetHealth
from monitor.engine.maintenance import Window, covering, in_force
from monitor.engine.mutes import Mute
from monitor.engine.runner_state import RunnerState

MUTED = "muted"
MAINTENANCE = "maintenance"
# Every standing a spreadsheet can have, the worst first: the order of tables and of counts.
SHOWN_ORDER = (ERROR, FAIL, WARN, SKIPPED, MUTED, MAINTENANCE, UNKNOWN, OK)
FAILING_NOW = frozenset({ERROR, FAIL})  # what "failing now" counts: muted ones are not
SILENCED = frozenset({MUTED, MAINTENANCE})  # told to nobody, whatever their verdict


def standing(record: SheetHealth | None, mute: Mute | None, window: Window | None = None) -> str:
    """One spreadsheet's standing: muted while a mute is in force (its own, and it may outlast any
    window), under maintenance while a window covers it, unknown before its first verdict, else what
    its record shows (a failing one paused by its breaker is still failing)."""
    if mute is not None:
        return MUTED
    if window is not None:
        return MAINTENANCE
    return UNKNOWN if record is None else record.shown


@dataclass(frozen=True)
class Fleet:
    """The configured spreadsheets' standings (in the config's order), which of them are
    dead-lettered and which have their checks paused by an open breaker, and the maintenance window
    each one under maintenance is in."""

    standings: Mapping[str, str]
    dead_lettered: frozenset[str] = frozenset()
    paused: frozenset[str] = frozenset()
    windows: Mapping[str, Window] = field(default_factory=dict)
    acknowledged: frozenset[str] = frozenset()  # with an open incident someone acknowledged

    @classmethod
    def of(cls, state: RunnerState, configured: Iterable[str], now: datetime,
           maintenance: Sequence[MaintenanceWindow] = ()) -> Fleet:
        """``maintenance``: the config's windows (``Config.maintenance``); the chat's are the state's."""
        configured = list(configured)
        mutes = state.active_mutes(now)
        windows = covering(in_force(maintenance, state.maintenance, now), configured)
        standings = {sid: standing(state.health.get(sid), mutes.get(sid), windows.get(sid))
                     for sid in configured}
        return cls(standings,
                   frozenset(sid for sid in state.dlq if sid in standings),
                   frozenset(sid for sid in state.open_breakers() if sid in standings),
                   {sid: window for sid, window in windows.items() if standings[sid] == MAINTENANCE},
                   frozenset(sid for sid, incident in state.incidents.items()
                             if sid in standings and incident.is_open and incident.acknowledged))

    def __len__(self) -> int:
        return len(self.standings)

    def __contains__(self, spreadsheet_id: object) -> bool:
        return spreadsheet_id in self.standings

    def part(self, spreadsheet_ids: Collection[str]) -> Fleet:
        """The fleet of only these spreadsheets (a route's chat counts its own)."""
        ids = set(spreadsheet_ids)
        return Fleet({sid: shown for sid, shown in self.standings.items() if sid in ids},
                     self.dead_lettered & ids, self.paused & ids,
                     {sid: window for sid, window in self.windows.items() if sid in ids},
                     self.acknowledged & ids)

    def counts(self) -> dict[str, int]:
        """How many spreadsheets have each standing, every standing present, in SHOWN_ORDER."""
        counted = Counter(self.standings.values())
        return {shown: counted.get(shown, 0) for shown in SHOWN_ORDER}

    def with_standing(self, *shown: str) -> list[str]:
        """The spreadsheets standing so, in the config's order."""
        return [sid for sid, standing_now in self.standings.items() if standing_now in shown]

    @property
    def failing(self) -> list[str]:
        """Failing or unreadable now, not muted: what "Failing now" counts and reminders are for."""
        return self.with_standing(*FAILING_NOW)

    @property
    def muted(self) -> list[str]:
        return self.with_standing(MUTED)

    @property
    def in_maintenance(self) -> list[str]:
        return self.with_standing(MAINTENANCE)

    @property
    def silenced(self) -> frozenset[str]:
        """Muted or under maintenance: their events, reminders and escalations go to nobody."""
        return frozenset(self.with_standing(*SILENCED))


def configured_ids(names: Mapping[str, str] | None, state: RunnerState) -> Iterable[str]:
    """The configured spreadsheets' ids, from the config's names by id; without a config (``None``:
    tests, tools), every spreadsheet the state holds a record of."""
    return names.keys() if names is not None else state.health.keys()
