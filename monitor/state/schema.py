"""The state's layout: which key holds which typed document, at which version, and how it is encoded.

One document per key, as Apps Script's PropertiesService holds JSON strings::

    schema                 {"layout": 2, "documents": {"task": 1, "health": 1, ...}}
    heartbeat/<runner>, runs/<runner>, quota/<runner>: the same, per runner, when runners share a state
    round                  RoundInfo          task/<task id>       Task
    heartbeat              Heartbeat          health/<sheet id>    SheetHealth
    runs                   RunHistory         breaker/<sheet id>   BreakerState
    api                    ApiState           dlq/<sheet id>       DeadLetter
    quota                  QuotaLog           mute/<sheet id>      Mute
    retry_first            RetryFirst         event/<sequence>     an Event (with its "kind")
    feed                   FeedState          damaged/<key>        an entry set aside (see repository)
    credentials            CredentialsState   history/<sheet id>   SheetHistory (monitor.engine.history)
    maintenance            Maintenance (monitor.engine.maintenance)
    folders                FolderListings (monitor.engine.folder_listing)
                                              runlog/<UTC hour>    RunHour (monitor.engine.runlog)
                                              incident/<sheet id>  Incident (monitor.engine.incidents)
    outbox                 Outbox
    alerts                 AlertMemory
    conversation           ChatPosition (the chat's updates read so far: monitor.chat)
    totals                 RunTotals

Every kind of document has a version, recorded under ``schema``; the first change to a document's
shape bumps its version here and adds an upgrade step to ``UPGRADES``. Encoding and validation are
pydantic's (built once per type, on first use). A field at its default is left out of the stored
text (most of a healthy spreadsheet's record is nulls and empty lists: at 20,000 spreadsheets that
was a third of the state) and read back as its default; a document that does not match its type
otherwise (a required field missing, an extra field, a time that is not a time) is damaged.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from monitor.core.a1 import A1Error, parse_a1
from monitor.engine.api_health import ApiState
from monitor.engine.breaker import BreakerState
from monitor.engine.change_detection import FeedState
from monitor.engine.credentials import CredentialsState
from monitor.engine.dlq import DeadLetter
from monitor.engine.events import BY_KIND, Event
from monitor.engine.folder_listing import FolderListings
from monitor.engine.health import SheetHealth
from monitor.engine.heartbeat import Heartbeat, RunHistory
from monitor.engine.history import SheetHistory
from monitor.engine.incidents import Incident
from monitor.engine.maintenance import Maintenance
from monitor.engine.mutes import Mute
from monitor.engine.pacer import QuotaLog
from monitor.engine.runlog import RunHour
from monitor.engine.runner_state import RetryFirst
from monitor.engine.tasks import RoundInfo, Task
from monitor.engine.totals import RunTotals
from monitor.notify.documents import AlertMemory, ChatPosition, Outbox

LAYOUT = 2  # 1: thirteen keys each holding a whole collection (see monitor.state.legacy)
SCHEMA_KEY = "schema"
DAMAGED_PREFIX = "damaged/"


class DocumentError(ValueError):
    """A stored document that cannot be read as its kind; the message says what is wrong, briefly."""


@dataclass
class Kind:
    """One kind of document: where it is stored, its type and its version."""

    name: str
    type: Any
    version: int = 1
    prefix: str | None = None  # "task/" for a family of documents; None: one document at key ``name``

    def key(self, id: str | None = None) -> str:
        return self.name if self.prefix is None else self.prefix + id

    @property
    def adapter(self) -> TypeAdapter:
        return _adapter(self.type)

    def encode(self, document: Any) -> str:
        return self.adapter.dump_json(document, exclude_defaults=True).decode()

    def decode(self, text: str) -> Any:
        try:
            return self.adapter.validate_json(text)
        except ValidationError as exc:
            raise DocumentError(_brief(exc)) from None

    def validate(self, value: Any) -> Any:
        """A document from already-parsed JSON (the legacy layout's nested values)."""
        try:
            return self.adapter.validate_python(value)
        except ValidationError as exc:
            raise DocumentError(_brief(exc)) from None


class EventKind(Kind):
    """Events are stored with their ``kind`` beside their fields; the class is chosen by it."""

    def encode(self, document: Event) -> str:
        fields = _adapter(type(document)).dump_python(document, mode="json")
        return json.dumps({"kind": document.KIND, **fields}, ensure_ascii=False, separators=(",", ":"))

    def decode(self, text: str) -> Event:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DocumentError(f"not JSON ({exc.msg})") from None
        return self.validate(value)

    def validate(self, value: Any) -> Event:
        if not isinstance(value, dict) or value.get("kind") not in BY_KIND:
            kind = value.get("kind") if isinstance(value, dict) else None
            raise DocumentError(f"not an event of a known kind (kind {kind!r})")
        fields = {name: item for name, item in value.items() if name != "kind"}
        try:
            return _adapter(BY_KIND[value["kind"]]).validate_python(fields)
        except ValidationError as exc:
            raise DocumentError(_brief(exc)) from None


@functools.cache
def _adapter(document_type: Any) -> TypeAdapter:
    # Built on first use, once per type: building one costs milliseconds, using one microseconds.
    return TypeAdapter(document_type)


# Version 2 added ``unread`` (spreadsheets the round judged without a read: Drive said unchanged).
ROUND = Kind("round", RoundInfo, version=2)
# Version 2 added ``quarantined_at`` (read alone after a run died with it in flight among others);
# version 3 an error's ``account`` and ``tabs`` (what a person needs to act on a refusal); version 4
# the leasing run's ``run_id`` (runners sharing one state); version 5 ``overdue`` (its read in flight
# out longer than its answers take: the poison guard's evidence).
TASK = Kind("task", Task, version=5, prefix="task/")
# Version 2 added the last read (``read_at``, ``checks``, ``moments``) and Drive's ``changed_at``;
# version 3 the spreadsheet's time zone (``time_zone``, ``zone_due``); version 4 its ``tabs`` and a
# finding's ``gid`` (links to a tab's bad cell); version 5 its failing reads (``unreadable``); version
# 6 a finding's ``owner`` (its check's own); version 7 its verdict ``changes`` and ``read_seconds``;
# version 8 a finding's ``tab`` (its check's range's: the line's lead when no cell names a tab).
HEALTH = Kind("health", SheetHealth, version=8, prefix="health/")
BREAKER = Kind("breaker", BreakerState, prefix="breaker/")
# Version 2: an error's ``account`` and ``tabs``.
DLQ = Kind("dlq", DeadLetter, version=2, prefix="dlq/")
# Version 2 added the spreadsheet's ``name`` (said when it leaves the config while muted); version 3
# who muted it (``by``) and mutes ``until_fixed``.
MUTE = Kind("mute", Mute, version=3, prefix="mute/")
INCIDENT = Kind("incident", Incident, prefix="incident/")
HISTORY = Kind("history", SheetHistory, prefix="history/")
# Version 2 added each run's ``edit_lags`` (how long after each edit it judged its verdict came);
# version 3 holds its ``counts`` as its heartbeat's stats and the totals do (monitor.engine.run_counts).
RUNLOG = Kind("runlog", RunHour, version=3, prefix="runlog/")
# Version 2 added ``last_error`` to ``api_degraded`` (what failed: Sheets, the token endpoint, the key);
# version 3 an error's ``account`` and ``tabs``, and a finding's ``gid``; version 4 a finding's ``owner``;
# version 5 the kind ``no_longer_monitored`` (an older release would set it aside as damaged); version 6
# the folders' kinds (``folder_sheets_added``, ``folder_sheets_left``, ``folder_unlisted``); version 7 a
# finding's ``tab``.
EVENT = EventKind("event", Event, version=7, prefix="event/")
# Version 3 added to the run's stats its quota refusals, retries by error class and read times;
# version 4 holds the stats' counts as ``counts``, as the run log and the totals do.
HEARTBEAT = Kind("heartbeat", Heartbeat, version=4)
RUNS = Kind("runs", RunHistory)
API = Kind("api", ApiState)
QUOTA = Kind("quota", QuotaLog, version=2)
RETRY_FIRST = Kind("retry_first", RetryFirst)
# Version 2 added ``trashed`` (configured spreadsheets Drive reported in its trash, since when).
FEED = Kind("feed", FeedState, version=2)
CREDENTIALS = Kind("credentials", CredentialsState)
# Version 2 added ``sending`` (the message whose request may have reached Telegram); version 3 each
# message's destination (``chat_id``, ``thread_id``: routes) and the routed chats' halts (``halts``).
# version 4 ``delivered`` (messages Telegram accepted, all told: the metrics' counter); version 5
# ``last_delivered_at`` (when Telegram last accepted one: the status page's delivery line); version 6
# each message's ``keyboard`` (the buttons under it).
OUTBOX = Kind("outbox", Outbox, version=6)
# Version 2 added ``warned`` (warnings people were told of) and ``crashes`` (runs dying, folded);
# version 3 ``relearning`` (the first round after the state was lost); version 4 dropped the Google
# reads counted for the digest (``reads_since_digest``, ``counted_run``: the metrics count them);
# version 5 ``maintenance`` (the maintenance windows told as begun).
ALERTS = Kind("alerts", AlertMemory, version=5)
# Version 2 holds the counts as ``counts``, as a run's heartbeat and its record in the run log do.
TOTALS = Kind("totals", RunTotals, version=2)
CONVERSATION = Kind("conversation", ChatPosition)
MAINTENANCE = Kind("maintenance", Maintenance)  # windows started from the chat
FOLDERS = Kind("folders", FolderListings)  # the [[folders]] folders as Drive last listed them

# Runners sharing one state (monitor.state.shared) keep these each under its own name:
# heartbeat/<runner>, runs/<runner>, quota/<runner> (each runner paces its own reads), totals/<runner>
# (each runner's metrics are a group of their own).
RUNNER_HEARTBEAT = Kind("runner_heartbeat", Heartbeat, version=2, prefix="heartbeat/")  # 2: heartbeat's 4
RUNNER_RUNS = Kind("runner_runs", RunHistory, prefix="runs/")
RUNNER_QUOTA = Kind("runner_quota", QuotaLog, prefix="quota/")
RUNNER_TOTALS = Kind("runner_totals", RunTotals, version=2, prefix="totals/")  # each runner's metrics
PER_RUNNER: Mapping[str, Kind] = {"heartbeat": RUNNER_HEARTBEAT, "runs": RUNNER_RUNS, "quota": RUNNER_QUOTA,
                                  "totals": RUNNER_TOTALS}

# RunnerState/State attribute -> kind, for the collections and the single documents.
FAMILIES: Mapping[str, Kind] = {"health": HEALTH, "breakers": BREAKER, "dlq": DLQ, "mutes": MUTE,
                                "history": HISTORY, "runlog": RUNLOG, "incidents": INCIDENT}
SINGLES: Mapping[str, Kind] = {
    "heartbeat": HEARTBEAT, "runs": RUNS, "api": API, "quota": QUOTA, "retry_first": RETRY_FIRST,
    "feed": FEED, "credentials": CREDENTIALS, "outbox": OUTBOX, "alerts": ALERTS,
    "totals": TOTALS, "conversation": CONVERSATION, "maintenance": MAINTENANCE, "folders": FOLDERS,
}
KINDS: Mapping[str, Kind] = {
    kind.name: kind for kind in (ROUND, TASK, EVENT, *FAMILIES.values(), *SINGLES.values(),
                                 *PER_RUNNER.values())
}
BY_PREFIX: Mapping[str, Kind] = {kind.prefix: kind for kind in KINDS.values() if kind.prefix}



def _round_unread(value: Any) -> Any:
    """round 1 -> 2 added ``unread``: before it, every round read every spreadsheet."""
    return {"unread": 0, **value} if isinstance(value, dict) else value


def _health_last_read(value: Any) -> Any:
    """health 1 -> 2 added the last read and Drive's last change. Which checks an older record's read
    judged is not known: the first round reads the spreadsheet again, as a round before did anyway."""
    last_read = {"read_at": None, "checks": None, "moments": (), "changed_at": None}
    return {**last_read, **value} if isinstance(value, dict) else value


def _health_time_zone(value: Any) -> Any:
    """health 2 -> 3 added the spreadsheet's time zone. An older record's dates were read in the
    config's zone, not the spreadsheet's: with none known, its next round reads it (and its zone)
    instead of judging it again from moments that may be off by hours (monitor.engine.change_detection)."""
    return {"time_zone": None, "zone_due": None, **value} if isinstance(value, dict) else value


def _health_unreadable(value: Any) -> Any:
    """health 4 -> 5 added ``unreadable``, the streak of failing reads: an older record's streak is not
    known, so it starts at the next failed read."""
    return {"unreadable": None, **value} if isinstance(value, dict) else value


def _task_quarantine(value: Any) -> Any:
    """task 1 -> 2 added ``quarantined_at``: no task of a run before it was read alone after a crash."""
    return {"quarantined_at": None, **value} if isinstance(value, dict) else value


def _quota_per_project(value: Any) -> Any:
    """quota 1 -> 2: one log for "the project" became one per Google Cloud project. Which project
    each old send went to is not known, so each counts against every project. The first release's
    log kept no project log at all: its sends per credential are all there is to count."""
    if not isinstance(value, dict) or "projects" in value:
        return value  # already the newer shape, or not the expected one (validation says what)
    upgraded = {name: item for name, item in value.items() if name != "project"}
    old = value.get("project")
    if old is None:
        sent = value.get("sent")
        old = sorted(t for times in sent.values() for t in times) if isinstance(sent, dict) else ()
    return {**upgraded, "projects": {}, "every_project": old}


def _heartbeat_read_measures(value: Any) -> Any:
    """heartbeat 2 added to the run's stats its reads per project, mean read time and peak reads in
    flight; a run before them measured none."""
    stats = value.get("stats") if isinstance(value, dict) else None
    if not isinstance(stats, dict):
        return value
    measures = {"reads_by_project": {}, "mean_read_seconds": None, "concurrency": None}
    return {**value, "stats": {**measures, **stats}}


# The counts a run's stats, its record in the run log and the totals held as their own fields before
# they became one value (monitor.engine.run_counts.RunCounts), by the names they had there.
_COUNTS_AS_NAMED = {
    "ok": "tasks_done", "failed": "dead_lettered",
    **{name: name for name in ("tasks", "tasks_done", "dead_lettered", "retries_scheduled", "quota_refusals",
                               "reads_by_credential", "reads_by_project", "retries_by_class",
                               "read_seconds_buckets", "read_seconds_sum")},
}


def _counts_nested(value: Any) -> Any:
    """A document's counts moved into ``counts``, each by its one name (``ok`` is ``tasks_done``,
    ``failed`` ``dead_lettered``)."""
    if not isinstance(value, dict) or "counts" in value:
        return value
    counts = {_COUNTS_AS_NAMED[name]: item for name, item in value.items() if name in _COUNTS_AS_NAMED}
    return {**{name: item for name, item in value.items() if name not in _COUNTS_AS_NAMED}, "counts": counts}


def _heartbeat_counts(value: Any) -> Any:
    """heartbeat 3 -> 4: the stats' counts as ``counts``."""
    if not isinstance(value, dict) or not isinstance(value.get("stats"), dict):
        return value
    return {**value, "stats": _counts_nested(value["stats"])}


def _runlog_counts(value: Any) -> Any:
    """runlog 2 -> 3: each run's counts as ``counts``."""
    if not isinstance(value, dict) or not isinstance(value.get("runs"), list):
        return value
    return {**value, "runs": [_counts_nested(run) for run in value["runs"]]}


def _event_last_error(value: Any) -> Any:
    """event 1 -> 2 added ``last_error`` to ``api_degraded``: an older one did not say what failed."""
    if isinstance(value, dict) and value.get("kind") == "api_degraded":
        return {"last_error": None, **value}
    return value


def _feed_trash(value: Any) -> Any:
    """feed 1 -> 2 added ``trashed``: a feed before it told no spreadsheet as trashed."""
    return {"trashed": {}, **value} if isinstance(value, dict) else value


def _optional_fields_added(value: Any) -> Any:
    """Fields added with a default, nested where a step cannot name them all (an error's ``account``
    and ``tabs`` in a task's history, a finding's ``gid``, a health record's ``tabs``), or a kind of
    event added: the older document reads as it is, each field taking its default (None, or no
    tabs). The version is bumped so that an older release refuses the newer state rather than set
    its entries aside as damaged."""
    return value


def _findings_tab(value: Any) -> Any:
    """health 7 -> 8 and event 5 -> 6 added a finding's ``tab``, its check's range's. An older
    finding kept it only in its check's name when the check was named after its range ("threshold
    min Stock!F2:F"), the one case a line is told under it: read from there, once."""
    findings = value.get("findings") if isinstance(value, dict) else None
    if not isinstance(findings, list):
        return value
    return {**value, "findings": [_with_tab(finding) for finding in findings]}


def _with_tab(finding: Any) -> Any:
    if not isinstance(finding, dict) or "tab" in finding:
        return finding
    check, kind = finding.get("check"), finding.get("kind")
    if not (isinstance(check, str) and isinstance(kind, str) and check.startswith(kind + " ")):
        return finding
    where = check[len(kind) + 1:]  # "<kind> [aggregate] <range>": a quoted tab may hold spaces
    # Only a threshold names an aggregate ("threshold min Stock!F2:F"), one word before its range.
    where = where.partition(" ")[2] if kind == "threshold" else where
    try:
        tab = parse_a1(where).sheet if "!" in where else None
    except A1Error:
        tab = None
    return {**finding, "tab": tab} if tab is not None else finding


def _outbox_destinations(value: Any) -> Any:
    """outbox 2 -> 3 added routes: every message went to the default chat, no routed chat halted."""
    if not isinstance(value, dict):
        return value
    pending = [
        {"chat_id": None, "thread_id": None, **entry} if isinstance(entry, dict) else entry
        for entry in value.get("pending", [])
    ]
    return {"halts": {}, **value, "pending": pending}


def _outbox_sending(value: Any) -> Any:
    """outbox 1 -> 2 added ``sending``: a release before it marked no message as being sent."""
    return {"sending": None, **value} if isinstance(value, dict) else value


def _alerts_without_reads(value: Any) -> Any:
    """alerts 3 -> 4 dropped the digest's count of Google reads: the team's messages no longer show
    it (``sheet-monitor metrics`` and `status` do)."""
    if not isinstance(value, dict):
        return value
    return {name: item for name, item in value.items() if name not in ("reads_since_digest", "counted_run")}


def _alerts_warned(value: Any) -> Any:
    """alerts 1 -> 2 added ``warned`` and ``crashes``: before it, no warning was remembered as told
    and no crash was being folded."""
    return {"warned": {}, "crashes": None, **value} if isinstance(value, dict) else value


# UPGRADES[(kind name, n)] turns the JSON value of a version-n document into version n + 1. Each step
# leaves a value already in the newer shape as it is, so a document saved in it under a schema that
# still said n (saved before the next whole save rewrote the schema) reads the same.
UPGRADES: Mapping[tuple[str, int], Callable[[Any], Any]] = {
    ("round", 1): _round_unread,
    ("health", 1): _health_last_read,
    ("health", 2): _health_time_zone,
    ("health", 3): _optional_fields_added,
    ("health", 4): _health_unreadable,
    ("health", 5): _optional_fields_added,
    ("health", 6): _optional_fields_added,
    ("health", 7): _findings_tab,
    ("runlog", 1): _optional_fields_added,
    ("runlog", 2): _runlog_counts,
    ("task", 1): _task_quarantine,
    ("task", 2): _optional_fields_added,
    ("task", 3): _optional_fields_added,
    ("task", 4): _optional_fields_added,
    ("dlq", 1): _optional_fields_added,
    ("event", 2): _optional_fields_added,
    ("event", 3): _optional_fields_added,
    ("event", 4): _optional_fields_added,
    ("event", 5): _optional_fields_added,
    ("event", 6): _findings_tab,
    ("mute", 1): _optional_fields_added,
    ("mute", 2): _optional_fields_added,
    ("quota", 1): _quota_per_project,
    ("heartbeat", 1): _heartbeat_read_measures,
    ("heartbeat", 2): _optional_fields_added,
    ("heartbeat", 3): _heartbeat_counts,
    ("runner_heartbeat", 1): _heartbeat_counts,
    ("totals", 1): _counts_nested,
    ("runner_totals", 1): _counts_nested,
    ("event", 1): _event_last_error,
    ("feed", 1): _feed_trash,
    ("outbox", 1): _outbox_sending,
    ("outbox", 2): _outbox_destinations,
    ("outbox", 3): _optional_fields_added,
    ("outbox", 4): _optional_fields_added,
    ("outbox", 5): _optional_fields_added,
    ("alerts", 1): _alerts_warned,
    ("alerts", 2): _optional_fields_added,
    ("alerts", 3): _alerts_without_reads,
    ("alerts", 4): _optional_fields_added,
}


def upgraded(kind: Kind, value: Any, version: int) -> Any:
    """The JSON value of a version-``version`` document of ``kind`` in today's shape."""
    for step in range(version, kind.version):
        value = UPGRADES[(kind.name, step)](value)
    return value


def schema_document() -> str:
    return json.dumps({"layout": LAYOUT, "documents": {name: kind.version for name, kind in KINDS.items()}},
                      separators=(",", ":"))


def kind_of(key: str) -> tuple[Kind | None, str | None]:
    """(kind, id) for a stored key; (None, None) for a key this layout does not know."""
    if "/" in key:
        prefix, _, id = key.partition("/")
        kind = BY_PREFIX.get(prefix + "/")
        return (kind, id) if kind is not None and id else (None, None)
    kind = KINDS.get(key)
    return (kind, None) if kind is not None and kind.prefix is None else (None, None)


def _brief(exc: ValidationError) -> str:
    """The first problems pydantic found, one line: "target: Field required; ..."."""
    problems = []
    for error in exc.errors()[:3]:
        where = ".".join(str(part) for part in error["loc"]) or "the document"
        problems.append(f"{where}: {error['msg']}")
    more = exc.error_count() - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")
