"""Events: what the run (and the admin commands) tell the notifier. Produced on changes of state only.

One class per kind, each with its own fields. Events wait in the state until the notifier has turned
them into a message, so a crash between producing and delivering loses nothing. ``KIND`` is the name
stored with each event; the notifier chooses how to word an event by its class.
"""

from __future__ import annotations

from typing import ClassVar

from monitor.core.errors import ErrorInfo
from monitor.core.timefmt import UtcTime
from monitor.core.tracking import document
from monitor.engine.health import Finding, Health


@document(kw_only=True)
class Event:
    KIND: ClassVar[str]
    at: UtcTime
    run_id: str  # the run, or "admin-<command>", that noticed it


@document(kw_only=True)
class SheetEvent(Event):
    spreadsheet_id: str
    name: str  # the spreadsheet's name from the config, for people
    tags: tuple[str, ...] = ()  # its tags from the config, shown beside the name (none before they were)


@document(kw_only=True)
class HealthChanged(SheetEvent):
    """A spreadsheet's verdict moved in a way people hear about (see health.is_alerting), or stayed
    with a new finding (``previous == current``)."""

    KIND: ClassVar[str] = "health_changed"
    previous: Health
    current: Health
    findings: tuple[Finding, ...] = ()
    down_for_seconds: float | None = None  # set when a bad episode ends


@document(kw_only=True)
class DeadLettered(SheetEvent):
    """A spreadsheet could not be read and opened a dead-letter episode."""

    KIND: ClassVar[str] = "dead_lettered"
    error: ErrorInfo
    attempts: int


@document(kw_only=True)
class ReadableAgain(SheetEvent):
    """A dead-lettered spreadsheet was read again; ``health`` is what its checks say now."""

    KIND: ClassVar[str] = "recovered"
    down_for_seconds: float
    health: Health
    findings: tuple[Finding, ...] = ()
    last_error: ErrorInfo | None = None


@document(kw_only=True)
class BreakerOpened(SheetEvent):
    KIND: ClassVar[str] = "breaker_opened"
    opened_at: UtcTime
    consecutive_failures: int
    cooldown_seconds: float
    probe_at: UtcTime


@document(kw_only=True)
class BreakerClosed(SheetEvent):
    KIND: ClassVar[str] = "breaker_closed"
    first_opened_at: UtcTime | None = None
    down_seconds: float | None = None


@document(kw_only=True)
class SpreadsheetTrashed(SheetEvent):
    """Drive reported the spreadsheet in its trash: still readable, deleted for good 30 days later."""

    KIND: ClassVar[str] = "trashed"


@document(kw_only=True)
class SpreadsheetRestored(SheetEvent):
    """Drive reported a spreadsheet told as trashed out of the trash again."""

    KIND: ClassVar[str] = "restored_from_trash"
    trashed_at: UtcTime


@document(kw_only=True)
class NoLongerMonitored(SheetEvent):
    """A spreadsheet with something open (failing, warning, dead-lettered, paused, muted) left the
    config: everything the state kept of it is forgotten, and people hear it once.

    ``name`` is what the state remembered of it (its dead-letter entry's or its mute's; empty when
    neither had one: the notifier names it as people were last told)."""

    KIND: ClassVar[str] = "no_longer_monitored"
    was: str  # its standing when it left (monitor.engine.fleet: "fail", "muted", ...)


@document(kw_only=True)
class ApiDegraded(Event):
    """Many different spreadsheets failed in a row: Google, not them. The run stopped early.

    ``last_error`` is the failure that made the count: whether Sheets, the token endpoint or the
    credential itself is refused tells people what to look at (docs/operations.md)."""

    KIND: ClassVar[str] = "api_degraded"
    failing_in_a_row: int
    last_error: ErrorInfo | None = None


@document(kw_only=True)
class ApiRecovered(Event):
    """Google answered again after ApiDegraded."""

    KIND: ClassVar[str] = "api_recovered"
    degraded_since: UtcTime | None = None


@document(kw_only=True)
class CredentialRefused(Event):
    """A credential cannot read at all (its key does not load, or Google refuses the account or
    the key for good): the run stopped using it (``monitor.engine.credentials``)."""

    KIND: ClassVar[str] = "credential_refused"
    credential: str  # the key file's path
    email: str | None
    problem: str
    fix: str


@document(kw_only=True)
class CredentialWorksAgain(Event):
    """A read with a credential told as refused was answered again."""

    KIND: ClassVar[str] = "credential_works_again"
    credential: str
    email: str | None
    refused_since: UtcTime


@document(kw_only=True)
class ChangeFeedFailing(Event):
    """Google Drive's change feed could not be read: rounds read every spreadsheet until it can."""

    KIND: ClassVar[str] = "change_feed_failing"
    error: str


@document(kw_only=True)
class ChangeFeedRecovered(Event):
    """Drive's change feed answered again after ChangeFeedFailing."""

    KIND: ClassVar[str] = "change_feed_recovered"
    failing_since: UtcTime


@document(kw_only=True)
class FallingBehind(Event):
    """A round still unfinished after ``behind_after_intervals`` round intervals (once per round)."""

    KIND: ClassVar[str] = "falling_behind"
    round_id: str
    round_started_at: UtcTime
    done: int
    total: int


@document(kw_only=True)
class CrashRecovered(Event):
    """The previous run died holding tasks: they were taken over, or given up as poison."""

    KIND: ClassVar[str] = "crash_recovered"
    previous_run_id: str | None
    reclaimed: int
    poisoned: int


@document(kw_only=True)
class RunsFinishAgain(Event):
    """Runs have finished for a while after several died mid-round; only the first death was told
    (the notifier folds them: ``monitor.notify.crashes``)."""

    KIND: ClassVar[str] = "runs_finish_again"
    first_at: UtcTime
    last_at: UtcTime
    runs: int
    reclaimed: int
    poisoned: int


@document(kw_only=True)
class StateRestored(Event):
    """The state file was unreadable; its last good copy was used."""

    KIND: ClassVar[str] = "state_restored"
    reason: str


@document(kw_only=True)
class StateMemoryLost(Event):
    """The state's Redis no longer holds the generation this host saw there: it lost its data
    (restarted without persistence, or flushed), so breakers, dead letters and the alert memory
    start empty."""

    KIND: ClassVar[str] = "state_memory_lost"
    generation: str  # the generation that was lost


@document(kw_only=True)
class StateEntryDamaged(Event):
    """One entry of the state could not be read; it was set aside (kept under ``set_aside_as``)."""

    KIND: ClassVar[str] = "state_entry_damaged"
    key: str
    problem: str
    set_aside_as: str


@document(kw_only=True)
class DeliveryHalted(Event):
    """Telegram refused the chat as a whole (token revoked, bot removed); told once it works again.
    Recorded by older releases only: held messages now carry that note themselves
    (``monitor.notify.held``); the kind stays so that a stored one is still read and told."""

    KIND: ClassVar[str] = "delivery_halted"
    since: UtcTime | None
    status: int | None
    description: str


# Made by the notifier as it composes (monitor.notify.maintenance), from the windows in force then and
# those it told before: never stored, so not among EVENT_TYPES (a stored one would be read by kind).


@document(kw_only=True)
class MaintenanceBegan(Event):
    """A maintenance window began: what it covers in one chat (the first of them by name), until when,
    why, and who started it from the chat (None: the config)."""

    KIND: ClassVar[str] = "maintenance_began"
    window: str  # the window's key: two windows beginning at once are two lines
    until: UtcTime
    reason: str
    covered: int  # spreadsheets it covers in this chat
    named: tuple[tuple[str, str], ...] = ()  # (id, name) of the first few of them
    everything: bool = False  # it covers every spreadsheet
    tags: tuple[str, ...] = ()
    by: str | None = None


@document(kw_only=True)
class MaintenanceEnded(Event):
    """A maintenance window ended (its time came, it was ended from the chat, or its table left the
    config): how many spreadsheets it covered in one chat, and which of them fail or warn now."""

    KIND: ClassVar[str] = "maintenance_ended"
    window: str
    reason: str
    covered: int
    everything: bool = False
    tags: tuple[str, ...] = ()
    failing: tuple[tuple[str, str], ...] = ()  # (id, name), the first few
    failing_count: int = 0
    warning: tuple[tuple[str, str], ...] = ()
    warning_count: int = 0


@document(kw_only=True)
class FolderEvent(Event):
    """Something about a ``[[folders]]`` folder: its id and its name (the config's, else Drive's)."""

    folder_id: str
    folder: str


@document(kw_only=True)
class FolderSheetsAdded(FolderEvent):
    """Spreadsheets found in a configured folder that were not monitored: monitored from now on.
    ``sheets`` names the first few (id, name); ``count`` is how many there are."""

    KIND: ClassVar[str] = "folder_sheets_added"
    sheets: tuple[tuple[str, str], ...]
    count: int


@document(kw_only=True)
class FolderSheetsLeft(FolderEvent):
    """Monitored spreadsheets of a folder that left it (moved out, trashed, deleted, unshared):
    forgotten, as a spreadsheet removed from the config is."""

    KIND: ClassVar[str] = "folder_sheets_left"
    sheets: tuple[tuple[str, str], ...]
    count: int


@document(kw_only=True)
class FolderUnlisted(FolderEvent):
    """Drive would not list a configured folder (not shared with the account, deleted, not a
    folder): told once until it lists again; what it held before stays monitored."""

    KIND: ClassVar[str] = "folder_unlisted"
    error: str
    account: str | None = None  # the service account to share it with


EVENT_TYPES: tuple[type[Event], ...] = (
    HealthChanged, DeadLettered, ReadableAgain, BreakerOpened, BreakerClosed, ApiDegraded,
    ApiRecovered, ChangeFeedFailing, ChangeFeedRecovered, FallingBehind, CrashRecovered, StateRestored,
    StateEntryDamaged, DeliveryHalted, SpreadsheetTrashed, SpreadsheetRestored, RunsFinishAgain,
    CredentialRefused, CredentialWorksAgain, StateMemoryLost, NoLongerMonitored, FolderSheetsAdded,
    FolderSheetsLeft, FolderUnlisted,
)
BY_KIND: dict[str, type[Event]] = {event_type.KIND: event_type for event_type in EVENT_TYPES}


def sheet_of(event: Event) -> str | None:
    """The spreadsheet an event is about, None for events about the monitor or Google."""
    return event.spreadsheet_id if isinstance(event, SheetEvent) else None
