"""One event -> the line it contributes to an alert, chosen by the event's class.

Each kind of event has one small renderer below (``render.register``). An event people need not hear
about (a first check that found the spreadsheet ok) renders as None. The line's ``rank`` orders the
alert (what needs a human most goes on top) and its ``category`` is counted in the headline and
decides what the alert memory remembers (see ``monitor.notify.memory``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import singledispatch

from monitor.core.remedies import problem, remedy
from monitor.core.wording import counted
from monitor.engine.events import (
    ApiDegraded,
    ApiRecovered,
    BreakerClosed,
    BreakerOpened,
    ChangeFeedFailing,
    ChangeFeedRecovered,
    CrashRecovered,
    CredentialRefused,
    CredentialWorksAgain,
    DeadLettered,
    DeliveryHalted,
    Event,
    FallingBehind,
    FolderSheetsAdded,
    FolderSheetsLeft,
    FolderUnlisted,
    HealthChanged,
    MaintenanceBegan,
    MaintenanceEnded,
    NoLongerMonitored,
    ReadableAgain,
    RunsFinishAgain,
    SheetEvent,
    SpreadsheetRestored,
    SpreadsheetTrashed,
    StateEntryDamaged,
    StateMemoryLost,
    StateRestored,
)
from monitor.engine.health import BAD, FAIL, OK, WARN
from monitor.notify.messages import duration_text, error_text, esc, findings_text, sheet_link, utc_text

# A hashtag ends at the first character that is not a letter, a digit or "_".
_HASHTAG_UNSAFE = re.compile(r"\W")

# Categories: counted in the headline ("2 new failures, 1 recovered"). The first three also change the
# alert memory: a spreadsheet people were told is failing is reminded about until it recovers.
FAILING = "failing"
WARNING = "warning"
RECOVERED = "recovered"
PAUSED = "paused"
RESUMED = "resumed"
IN_TRASH = "in trash"
RESTORED = "restored from trash"
GONE = "no longer monitored"
FOLDER_ADDED = "folder added spreadsheets"
FOLDER_LEFT = "folder lost spreadsheets"
FOLDER_UNLISTED = "folder not listed"
DELIVERY_RESUMED = "delivery resumed"
MAINTENANCE_BEGINS = "maintenance begins"
MAINTENANCE_OVER = "maintenance over"
# How the headline counts a category, singular and plural: what changed in this message, beside the
# fleet's "Failing now: 5 of 49 spreadsheets" under it. Categories not here are counted by their name.
_HEADLINE = {FAILING: ("new failure", "new failures"), WARNING: ("new warning", "new warnings"),
             IN_TRASH: ("in Drive's trash", "in Drive's trash"),
             RESTORED: ("out of Drive's trash", "out of Drive's trash"),
             MAINTENANCE_BEGINS: ("maintenance window begins", "maintenance windows begin"),
             MAINTENANCE_OVER: ("maintenance window over", "maintenance windows over"),
             FOLDER_ADDED: ("folder with new spreadsheets", "folders with new spreadsheets"),
             FOLDER_LEFT: ("folder with spreadsheets gone", "folders with spreadsheets gone"),
             FOLDER_UNLISTED: ("folder Drive would not list", "folders Drive would not list")}


@dataclass(frozen=True, slots=True)
class Item:
    """One line of an alert."""

    rank: int  # lower first: what needs a human most goes on top
    category: str
    html: str


def headline(items: Iterable[Item]) -> str:
    """'2 new failures, 1 recovered, 1 paused': each category once, in the order the items come."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item.category] = counts.get(item.category, 0) + 1
    return ", ".join(counted(count, *_HEADLINE.get(category, (category, category)))
                     for category, count in counts.items())


@singledispatch
def render(event: Event) -> Item | None:
    """The line ``event`` contributes to an alert, or None for events people need not hear about."""
    return None


def _link(event: SheetEvent) -> str:
    # Its tags as Telegram hashtags (a tap lists the chat's other messages with the tag).
    tags = "".join(f" #{esc(_HASHTAG_UNSAFE.sub('_', tag))}" for tag in event.tags)
    return sheet_link(event.spreadsheet_id, event.name) + tags


def _found(event: HealthChanged | ReadableAgain) -> str:
    return findings_text(event.findings, spreadsheet_id=event.spreadsheet_id)


def _colon(text: str) -> str:
    return f": {text}" if text else ""


# ---- about one spreadsheet -----------------------------------------------------------------------


@render.register(HealthChanged)
def _health_changed(event: HealthChanged) -> Item | None:
    found = _found(event)
    if event.current in BAD:
        verb = "is failing" if event.current == FAIL else "could not be checked"
        return Item(10, FAILING, f"🔴 {_link(event)} {verb}{_colon(found)}")
    if event.previous in BAD:
        after = f"after {duration_text(event.down_for_seconds)}"
        still = f", still warns: {found}" if event.current == WARN and found else ""
        return Item(50, RECOVERED, f"✅ {_link(event)} recovered {after}{still}")
    if event.current == WARN:
        return Item(20, WARNING, f"🟡 {_link(event)} warns: {found}")
    if event.current == OK and event.previous == WARN:
        return Item(50, RECOVERED, f"✅ {_link(event)} is ok again")
    return None


@render.register(DeadLettered)
def _dead_lettered(event: DeadLettered) -> Item:
    # What is wrong and what to do lead, in words; Google's own words follow for whoever digs.
    tries = f" after {counted(event.attempts, 'attempt')}" if event.attempts else ""
    what, fix = problem(event.error), remedy(event.error, after_problem=True)
    if what is None:
        text = f"🔴 {_link(event)} could not be read{tries}: {error_text(event.error)}"
        return Item(10, FAILING, text + (f". To fix: {esc(fix)}" if fix else ""))
    to_fix = f" To fix: {esc(fix)}." if fix else ""
    google = f" (Google: {error_text(event.error)})"
    return Item(10, FAILING, f"🔴 {_link(event)} cannot be read: {esc(what)}.{to_fix}{google}")


@render.register(ReadableAgain)
def _readable_again(event: ReadableAgain) -> Item:
    after = f"after {duration_text(event.down_for_seconds)}"
    found = _found(event)
    if event.health == FAIL:  # readable again, but its checks fail: still bad
        return Item(10, FAILING, f"🔴 {_link(event)} can be read again {after} but is failing: {found}")
    warns = f", still warns: {found}" if event.health == WARN and found else ""
    return Item(50, RECOVERED, f"✅ {_link(event)} can be read again {after}{warns}")


@render.register(BreakerOpened)
def _breaker_opened(event: BreakerOpened) -> Item:
    failures = counted(event.consecutive_failures, "failure")
    text = f"⏸ {_link(event)}: checks paused after {failures} in a row"
    if event.probe_at:
        text += f", next try {utc_text(event.probe_at)}"
    return Item(30, PAUSED, text)


@render.register(BreakerClosed)
def _breaker_closed(event: BreakerClosed) -> Item:
    return Item(50, RESUMED, f"▶ {_link(event)}: checks resumed after {duration_text(event.down_seconds)}")


@render.register(SpreadsheetTrashed)
def _trashed(event: SpreadsheetTrashed) -> Item:
    # Drive's help: files in the trash are deleted forever after 30 days. The Sheets API still
    # serves a trashed spreadsheet, so its checks go on passing until the day it is gone.
    text = (f"🗑 {_link(event)} is in Google Drive's trash: still checked, but Drive deletes it for "
            "good 30 days after it was trashed. Restore it (drive.google.com > Trash > Restore), or "
            "remove it from the config if it is no longer used")
    return Item(10, IN_TRASH, text)


@render.register(SpreadsheetRestored)
def _restored(event: SpreadsheetRestored) -> Item:
    text = f"♻️ {_link(event)} is out of Google Drive's trash (told trashed {utc_text(event.trashed_at)})"
    return Item(50, RESTORED, text)


_WAS = {"fail": "failing", "error": "unreadable", "warn": "warning", "skipped": "paused by its breaker",
        "muted": "muted"}


@render.register(NoLongerMonitored)
def _no_longer_monitored(event: NoLongerMonitored) -> Item:
    was = _WAS.get(event.was)
    while_ = f" while it was {was}" if was else ""
    text = (f"➖ {_link(event)} is no longer monitored: it was removed from the config{while_}. "
            "Nothing more is said of it; add it back to the config to watch it again")
    return Item(40, GONE, text)


# ---- folders ---------------------------------------------------------------------------------------


def _folder_link(folder_id: str, name: str) -> str:
    return f'<a href="https://drive.google.com/drive/folders/{esc(folder_id)}">{esc(name)}</a>'


@render.register(FolderSheetsAdded)
def _folder_added(event: FolderSheetsAdded) -> Item:
    sheets = _listed_sheets(event.sheets, event.count)
    text = f"📂 Folder {_folder_link(event.folder_id, event.folder)}: now monitoring {sheets}"
    return Item(60, FOLDER_ADDED, text)


@render.register(FolderSheetsLeft)
def _folder_left(event: FolderSheetsLeft) -> Item:
    sheets = _listed_sheets(event.sheets, event.count)
    verb = "is" if event.count == 1 else "are"
    text = (f"📂 Folder {_folder_link(event.folder_id, event.folder)}: {sheets} {verb} no longer in the "
            "folder (moved out, trashed, deleted or unshared) and no longer monitored")
    return Item(40, FOLDER_LEFT, text)


@render.register(FolderUnlisted)
def _folder_unlisted(event: FolderUnlisted) -> Item:
    share = f"share it with {esc(event.account)} (Viewer is enough)" if event.account else \
        "share it with the service account"
    text = (f"📂 Google Drive would not list the folder {_folder_link(event.folder_id, event.folder)}: "
            f"{esc(event.error)}. Check its id in the config and {share}; what it held before stays "
            "monitored. Recheck with: sheet-monitor check-config --access")
    return Item(20, FOLDER_UNLISTED, text)


# ---- maintenance windows -------------------------------------------------------------------------


def _listed_sheets(named: tuple[tuple[str, str], ...], total: int) -> str:
    """"Store 014, Store 015 and 3 more": the names given, and how many more there are."""
    shown = ", ".join(sheet_link(sid, name) for sid, name in named)
    more = total - len(named)
    return f"{shown} and {more} more" if shown and more > 0 else shown or counted(total, "spreadsheet")


def _scope(everything: bool, tags: tuple[str, ...]) -> str:
    """How a window was chosen: "(tag #moscow)", "(tags #a, #b)", "" when by name or everything."""
    if everything or not tags:
        return ""
    hashtags = ", ".join(f"#{esc(_HASHTAG_UNSAFE.sub('_', tag))}" for tag in tags)
    return f" ({'tag' if len(tags) == 1 else 'tags'} {hashtags})"


@render.register(MaintenanceBegan)
def _maintenance_began(event: MaintenanceBegan) -> Item:
    what = (f"every spreadsheet ({event.covered})" if event.everything
            else _listed_sheets(event.named, event.covered))
    by = f", started by {esc(event.by, 100)}" if event.by else ""
    text = (f"🛠 Maintenance until {utc_text(event.until)}: {what}{_scope(event.everything, event.tags)}{by}: "
            f"{esc(event.reason, 200)} (silenced until then, still checked)")
    return Item(4, MAINTENANCE_BEGINS, text)


@render.register(MaintenanceEnded)
def _maintenance_ended(event: MaintenanceEnded) -> Item:
    what = "every spreadsheet" if event.everything else counted(event.covered, "spreadsheet")
    stands = []
    if event.failing_count:
        stands.append(f"failing now: {_listed_sheets(event.failing, event.failing_count)}")
    if event.warning_count:
        stands.append(f"warning: {_listed_sheets(event.warning, event.warning_count)}")
    now = "; ".join(stands) if stands else "none of them fails or warns now"
    text = (f"🛠 Maintenance over ({esc(event.reason, 200)}): {what}"
            f"{_scope(event.everything, event.tags)}; {now}")
    # What fails after a window is what nobody was told of while it lasted: it leads the alert.
    return Item(9 if event.failing_count else 45, MAINTENANCE_OVER, text)


# ---- about Google and the monitor itself ---------------------------------------------------------


@render.register(ApiDegraded)
def _api_degraded(event: ApiDegraded) -> Item:
    text = (
        f"🟠 Google API degraded: {counted(event.failing_in_a_row, 'spreadsheet')} failed "
        "in a row; the run stopped early and the next one probes first"
    )
    if event.last_error is not None:  # a token or credential refused reads differently from Sheets down
        text += f" (last: {error_text(event.last_error)})"
    return Item(0, "API degraded", text)


@render.register(ApiRecovered)
def _api_recovered(event: ApiRecovered) -> Item:
    since = f" (degraded since {utc_text(event.degraded_since)})"
    return Item(50, RECOVERED, f"✅ Google API answers again{since}")


@render.register(CredentialRefused)
def _credential_refused(event: CredentialRefused) -> Item:
    account = f" ({esc(event.email)})" if event.email else ""
    text = (f"🔑 Credential {esc(event.credential)}{account} cannot read: {esc(event.problem)}. "
            f"The runs read with the other credentials meanwhile. To fix: {esc(event.fix)}")
    return Item(0, "credential refused", text)


@render.register(CredentialWorksAgain)
def _credential_works_again(event: CredentialWorksAgain) -> Item:
    since = f" (refused since {utc_text(event.refused_since)})"
    return Item(50, RECOVERED, f"✅ Credential {esc(_file_name(event.credential))} reads again{since}")


def _file_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


@render.register(ChangeFeedFailing)
def _change_feed_failing(event: ChangeFeedFailing) -> Item:
    text = (f"🟠 Google Drive's change feed cannot be read ({esc(event.error)}): every spreadsheet is "
            "read each round until it can, which costs more of the read quota")
    return Item(1, "change feed failing", text)


@render.register(ChangeFeedRecovered)
def _change_feed_recovered(event: ChangeFeedRecovered) -> Item:
    since = f" (failing since {utc_text(event.failing_since)})"
    return Item(50, RECOVERED, f"✅ Google Drive's change feed answers again{since}")


@render.register(FallingBehind)
def _falling_behind(event: FallingBehind) -> Item:
    text = (
        f"🐢 Falling behind: the round started {utc_text(event.round_started_at)} "
        f"has {event.done} of {counted(event.total, 'spreadsheet')} done"
    )
    return Item(1, "falling behind", text)


@render.register(CrashRecovered)
def _crash_recovered(event: CrashRecovered) -> Item:
    text = (
        f"♻️ The previous run died mid-round: {counted(event.reclaimed, 'task')} taken "
        f"over, {event.poisoned} given up as poison"
    )
    return Item(2, "crash recovered", text)


@render.register(RunsFinishAgain)
def _runs_finish_again(event: RunsFinishAgain) -> Item:
    poison = f", {event.poisoned} given up as poison" if event.poisoned else ""
    text = (
        f"✅ Runs finish again: {counted(event.runs, 'run')} died mid-round between "
        f"{utc_text(event.first_at)} and {utc_text(event.last_at)} "
        f"({counted(event.reclaimed, 'task')} taken over{poison})"
    )
    return Item(50, RECOVERED, text)


@render.register(StateRestored)
def _state_restored(event: StateRestored) -> Item:
    return Item(2, "state restored", "♻️ The state file was unreadable; the last good copy was used")


@render.register(StateMemoryLost)
def _state_memory_lost(event: StateMemoryLost) -> Item:
    text = (
        f"🧠 Redis lost the monitor's state (generation {esc(event.generation, 40)} is missing): breakers,"
        " dead letters, mutes and the alert memory start empty. What fails is told once, as a list,"
        " when the first round ends, not as new problems one by one. Keep Redis's data with"
        " appendonly yes (docs/operations.md, \"State on Redis\")"
    )
    return Item(1, "state lost", text)


@render.register(StateEntryDamaged)
def _state_entry_damaged(event: StateEntryDamaged) -> Item:
    # What was lost with it (a spreadsheet's health, a breaker, a queued message) is in the key;
    # the entry itself is kept under ``set_aside_as`` for whoever investigates.
    text = (
        f"🧩 One entry of the state could not be read and was set aside: {esc(event.key, 120)} "
        f"({esc(event.problem, 200)}); kept as {esc(event.set_aside_as, 120)}"
    )
    return Item(2, "state entry damaged", text)


@render.register(DeliveryHalted)
def _delivery_halted(event: DeliveryHalted) -> Item:
    # No run records this event any more (held messages now go with a note saying why they came
    # late: monitor.notify.held); one an older release stored is still told.
    text = (
        f"📵 Telegram refused messages since {utc_text(event.since)}: "
        f"{esc(event.description, 200)}; the messages held meanwhile came late, above this one"
    )
    return Item(3, DELIVERY_RESUMED, text)
