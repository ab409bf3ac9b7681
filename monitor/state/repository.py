"""The one mapping between the typed ``State`` and a ``PropertyStore``: loading, saving what changed.

Loading validates every document on its own (a metric history when it is first used: see
``_UNREAD_UNTIL_USED``). One that cannot be read (not JSON, a field missing or extra, a time that is
not a time, a task of another round) is a :class:`Damage`: it is left out of the state, and a writer
sets it aside (``set_aside``: moved to ``damaged/<key>``, kept for inspection) so that one bad entry
never takes the monitor down. Saving writes, in one atomic store update, only
the documents changed since the last save (``monitor.core.tracking``): its cost does not grow with the
number of spreadsheets.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from monitor.core.timefmt import format_utc
from monitor.core.tracking import Documents
from monitor.engine.heartbeat import RunHistory
from monitor.engine.runner_state import is_event_key
from monitor.engine.tasks import Round, RoundInfo, Task, task_number
from monitor.engine.totals import RunTotals
from monitor.state import legacy
from monitor.state.schema import (
    DAMAGED_PREFIX,
    DLQ,
    EVENT,
    FAMILIES,
    KINDS,
    LAYOUT,
    PER_RUNNER,
    ROUND,
    RUNNER_HEARTBEAT,
    RUNNER_RUNS,
    SCHEMA_KEY,
    SINGLES,
    TASK,
    DocumentError,
    Kind,
    kind_of,
    schema_document,
    upgraded,
)
from monitor.state.whole import Damage, State
from monitor.storage import PropertyStore, StateVersionError

# A runner's own documents that a fresh state holds empty rather than not at all.
_FRESH = {"runs": RunHistory, "totals": RunTotals}
# Documents read when first used rather than when the state opens (``Documents.hold_unread``): a
# spreadsheet's metric history is needed only when it is judged, and a run's start-up at 20,000
# spreadsheets decoded 20,000 of them before its first read. One found damaged then is told and set
# aside by the next save, as one found at the opening is (``StateSession.save``). Once saved they
# are held as their stored text again (``Documents.release``): a round judges each spreadsheet once,
# and its history decoded beside the store's text of it was ~1 KB a spreadsheet to the run's end.
_UNREAD_UNTIL_USED = ("history",)
_ATTRIBUTE_OF = {kind.name: attribute for attribute, kind in FAMILIES.items()}
# Keys whose loss (as damaged entries) makes the next writer save the whole state: see ``load``.
SINGLE_KEYS = frozenset(kind.key() for kind in SINGLES.values())
_WHOLE_SAVE_KEYS = frozenset({SCHEMA_KEY, ROUND.key(), *SINGLE_KEYS})


class StateRepository:
    def __init__(self, store: PropertyStore, runner: str | None = None) -> None:
        """``runner``: this process is one of several runners sharing the store, by that name; its
        heartbeat, run history and quota log are its own (``heartbeat/<runner>``...). ``""``: a
        process beside such runners that has none (an admin command): it never writes them."""
        self.store = store
        self.runner = runner
        self._task_keys: set[str] = set()  # the task documents on the store, for replacing a round
        # Entries set aside: written (and their keys removed) by the next save, in the same update.
        self._staged: dict[str, str] = {}
        self._staged_removals: set[str] = set()
        self.found_empty = False  # the last load found nothing stored: a fresh state

    # -- loading -----------------------------------------------------------------------------------

    def load(self, only: Iterable[str] | None = None, damage_to: State | None = None) -> State:
        """The state; a store with nothing in it is a fresh state. ``only``: the kinds of document to
        read (see ``schema.KINDS``), for readers that need a few; the rest stays empty (a "round"
        read without "task" shows every task fresh: ask for both). Raises
        StateVersionError for a state written by a newer sheet-monitor; anything else wrong is in
        ``state.damaged``, and what is found damaged when first used (a metric history) joins the
        ``damaged`` of ``damage_to`` (default: the state returned; a runner that re-reads the state
        and takes its documents into its own names its own)."""
        properties = self.store.get_properties()
        self.found_empty = not properties
        wanted = None if only is None else set(only)
        if legacy.written_by_first_release(properties):
            state = legacy.load_legacy(properties)
            state.needs_full_save = True
            return state
        damaged: list[Damage] = []
        versions = self._versions(properties, damaged)
        found: dict[str, dict[str | None, Any]] = {name: {} for name in KINDS}
        # Kinds read when first used (see ``_UNREAD_UNTIL_USED``), stored in today's version: an older
        # one is read and upgraded now, as the whole save that follows writes it in today's shape
        # (its reader is still given: what later saves write of it is let go as today's is).
        unread: dict[str, dict[str, str]] = {name: {} for name in _UNREAD_UNTIL_USED}
        current = {name for name in unread if versions.get(name, KINDS[name].version) == KINDS[name].version}
        for key, raw in properties.items():
            if key == SCHEMA_KEY or key.startswith(DAMAGED_PREFIX):
                continue
            kind, id = kind_of(key)
            if wanted is not None and (kind is None or kind.name not in wanted):
                continue
            if kind is None:
                damaged.append(Damage(key, "not a key this version of sheet-monitor stores", raw))
                continue
            id = id if id is None else sys.intern(id)  # one object with the documents' own copies of it
            if kind.name in current:
                unread[kind.name][id] = raw
                continue
            try:
                found[kind.name][id] = _decode(kind, raw, versions.get(kind.name, kind.version))
            except DocumentError as exc:
                damaged.append(Damage(key, str(exc), raw))
        state = self._assemble(found, properties, damaged)
        for name, texts in unread.items():
            getattr(state, _ATTRIBUTE_OF[name]).hold_unread(texts, _reader(KINDS[name], damage_to or state))
        state.set_aside = sorted(key.removeprefix(DAMAGED_PREFIX) for key in properties
                                 if key.startswith(DAMAGED_PREFIX))
        # A damaged single document (the heartbeat, the outbox, the round's own...) is replaced in
        # memory by a fresh or rebuilt one that no change marks to be saved: the writer that sets the
        # entry aside writes the whole state, so the store holds what the state holds again.
        # Documents of an older version are read upgraded, and written in today's shape with today's
        # schema by the next writer (a save of changes only would leave the schema saying "older").
        older = any(versions.get(name, kind.version) < kind.version for name, kind in KINDS.items())
        state.needs_full_save = SCHEMA_KEY not in properties or older or any(
            damage.key in _WHOLE_SAVE_KEYS for damage in damaged
        )
        if not properties:
            # A fresh store has nothing to rewrite: its first save writes the schema and what changed,
            # no more. Whole, it would write this writer's empty documents over what others sharing
            # the store saved since (runners started by a new deployment's first cron tick all open
            # it empty); a document never written reads as its default.
            state.needs_full_save = False
            self._staged[SCHEMA_KEY] = schema_document()
        return state

    def _versions(self, properties: dict[str, str], damaged: list[Damage]) -> dict[str, int]:
        raw = properties.get(SCHEMA_KEY)
        if raw is None:
            return {}
        try:
            schema = json.loads(raw)
            layout, versions = schema["layout"], dict(schema["documents"])
            if not all(isinstance(number, int) for number in (layout, *versions.values())):
                raise TypeError("versions are whole numbers")
        except (ValueError, KeyError, TypeError):
            # Every other key says what it is; a lost schema only loses the versions: assume ours.
            damaged.append(Damage(SCHEMA_KEY, "not a schema document", raw))
            return {}
        newer = [name for name, version in versions.items()
                 if name not in KINDS or version > KINDS[name].version]
        if layout > LAYOUT or newer:
            raise StateVersionError(
                f"the state was written by a newer sheet-monitor (layout {layout}, documents "
                f"{', '.join(newer) or 'all'} newer than this version knows): upgrade this installation; "
                "the state is unchanged"
            )
        return versions

    def _assemble(self, found: dict[str, dict], properties: dict[str, str], damaged: list[Damage]) -> State:
        rnd = self._round(found["round"].get(None), found["task"], properties, damaged)
        events = {}
        for id, event in found["event"].items():
            if is_event_key(id):
                events[id] = event
            else:
                key = EVENT.key(id)
                damaged.append(Damage(key, "an event key must be a number (and a runner's name)",
                                      properties[key]))
        dlq = {}
        for id, entry in found["dlq"].items():
            if entry.id == id:
                dlq[id] = entry
            else:
                key = DLQ.key(id)
                damaged.append(Damage(key, f"holds the entry of {entry.id!r}", properties[key]))
        state = State(
            round=rnd,
            health=found["health"],
            breakers=found["breaker"],
            dlq=dlq,
            mutes=found["mute"],
            history=found["history"],
            runlog=found["runlog"],
            incidents=found["incident"],
            events=events,
            **{attribute: found[kind.name].get(None) for attribute, kind in SINGLES.items()},
        )
        state.damaged = damaged
        state.runner_heartbeats = dict(found[RUNNER_HEARTBEAT.name])
        state.runner_runs = dict(found[RUNNER_RUNS.name])
        if self.runner:
            self._own_documents(state, found)
        return state

    def _own_documents(self, state: State, found: dict[str, dict]) -> None:
        """A runner's own heartbeat, run history and quota log. The first runner to share a state
        written by a single runner takes over its documents (and removes the single-runner keys), so
        the watchdog sees one runner that went on, not one that stopped."""
        taken_over = set()
        for attribute, kind in PER_RUNNER.items():
            own = found[kind.name].get(self.runner)
            single_key = SINGLES[attribute].key()
            if own is None and self.store.get_property(single_key) is not None:
                taken_over.add(attribute)  # kept in memory; saved under this runner's key
                self._staged_removals.add(single_key)
            elif own is not None:
                setattr(state, attribute, own)
            elif attribute in _FRESH:
                setattr(state, attribute, _FRESH[attribute]())
                taken_over.add(attribute)  # written, empty, by the first save
            else:
                setattr(state, attribute, None)
        state.changed_singles.clear()
        state.changed_singles |= taken_over

    def _round(self, info: RoundInfo | None, tasks: dict[str, Task], properties: dict[str, str],
               damaged: list[Damage]) -> Round | None:
        if info is None:
            # Without its own document a round's fresh tasks are unknown: the round is lost (the next
            # one checks every spreadsheet), and its stored tasks go with it (a full save, which the
            # round's damage asks for, removes them).
            if tasks and not any(damage.key == ROUND.key() for damage in damaged):
                damaged.append(Damage(ROUND.key(), f"missing; the {len(tasks)} stored tasks of its round "
                                                   "are dropped", ""))
            return None
        kept = []
        for id, task in tasks.items():
            key, number = TASK.key(id), task_number(id)
            belongs = (task.id == id and task.round_id == info.id and number is not None
                       and 0 < number <= len(info.targets) and info.targets[number - 1] == task.target)
            if belongs:
                kept.append(task)
                self._task_keys.add(key)
            elif self.runner is not None and task.round_id != info.id:
                # Beside other runners: a runner still reading when another started this round
                # saved its last result of the old one. Not damage: the next save removes it.
                self._staged_removals.add(key)
            else:
                problem = f"task {task.id} (of {task.target}) is not part of round {info.id}"
                damaged.append(Damage(key, problem, properties[key]))
        return Round(info, kept)

    # -- saving ------------------------------------------------------------------------------------

    def save(self, state: State) -> None:
        """Write what changed since the last save, atomically; nothing when nothing changed. A state
        that must first be written whole (``needs_full_save``) is written whole."""
        if state.needs_full_save:
            self.save_all(state)
            return
        values: dict[str, str] = {}
        deleted: set[str] = set()
        written_tasks = self._round_changes(state, values, deleted)
        for attribute, kind in FAMILIES.items():
            _collect(kind, getattr(state, attribute), values, deleted)
        _collect(EVENT, state.events.documents, values, deleted)
        self._single_changes(state, values, deleted)
        values.update(self._staged)
        deleted |= self._staged_removals
        deleted -= values.keys()
        if values or deleted:
            self.store.update(values, deleted)
        self._staged, self._staged_removals = {}, set()
        # In place: a new set per save would cost as much as the round is long.
        self._task_keys -= deleted
        self._task_keys |= written_tasks
        _mark_saved(state)
        self._release(state, values)

    def _round_changes(self, state: State, values: dict[str, str], deleted: set[str]) -> set[str]:
        """The round's and its tasks' changes into ``values`` and ``deleted``; the task keys written."""
        written_tasks: set[str] = set()
        rnd = state.round
        if "round" in state.changed_singles:  # a new round replaces every task of the old one
            deleted |= set(self._task_keys)
            if rnd is None:
                deleted.add(ROUND.key())
            else:
                rnd.mark_all_changed()  # only those not fresh are written: see below
                values[ROUND.key()] = ROUND.encode(rnd.info)
        if rnd is None:
            return written_tasks
        info, tasks, removed = rnd.pending_changes()
        if info is not None:
            values[ROUND.key()] = ROUND.encode(info)
        for id, task in tasks.items():
            key = TASK.key(id)
            if not task.fresh:
                values[key] = TASK.encode(task)
                written_tasks.add(key)
            elif key in self._task_keys:  # fresh again (never, today): its round implies it
                deleted.add(key)
        deleted |= {TASK.key(id) for id in removed}
        return written_tasks

    def _single_changes(self, state: State, values: dict[str, str], deleted: set[str]) -> None:
        """The single documents that changed (heartbeat, quota log...) into ``values`` and ``deleted``."""
        for attribute in state.changed_singles & SINGLES.keys():
            if self.runner == "" and attribute in PER_RUNNER:
                continue  # the runners' own, not this process's
            kind, key = self._single(attribute)
            value = getattr(state, attribute)
            if value is None:
                deleted.add(key)
            else:
                values[key] = kind.encode(value)

    def _single(self, attribute: str) -> tuple[Kind, str]:
        """The kind and key of a single document: a runner's own ones under its name."""
        if self.runner and attribute in PER_RUNNER:
            return PER_RUNNER[attribute], PER_RUNNER[attribute].key(self.runner)
        return SINGLES[attribute], SINGLES[attribute].key()

    def save_all(self, state: State) -> None:
        """Write the whole state in the current layout, and remove every key it no longer has: after a
        layout upgrade, or when the schema document was lost (a fresh store has nothing to rewrite).
        Other runners' own documents are theirs: kept."""
        values = encode_all(state, self.runner)
        values[SCHEMA_KEY] = schema_document()
        values.update(self._staged)
        others = tuple(kind.prefix for kind in PER_RUNNER.values())
        deleted = [key for key in self.store.get_keys()
                   if key not in values and not key.startswith((DAMAGED_PREFIX, *others))]
        self.store.update(values, deleted)
        self._staged, self._staged_removals = {}, set()
        self._task_keys = {key for key in values if key.startswith(TASK.prefix)}
        _mark_saved(state)
        state.needs_full_save = False

    def _release(self, state: State, written: Iterable[str]) -> None:
        """The documents held unread until used (``_UNREAD_UNTIL_USED``) that this save wrote, or that
        were read since the last one, held as their text again: the store's own string, so the text
        is held once. (Not after a whole save, rare: an upgrade or a repair; its documents are let
        go as each is next saved.)"""
        for name in _UNREAD_UNTIL_USED:
            kind = KINDS[name]
            saved = [key[len(kind.prefix):] for key in written if key.startswith(kind.prefix)]
            getattr(state, _ATTRIBUTE_OF[name]).release(
                saved, lambda id, kind=kind: self.store.get_property(kind.key(id)))

    def note_stored(self, key: str) -> None:
        """A task document written outside ``save`` (a runner's claim): a new round removes it too."""
        self._task_keys.add(key)

    def adopt_task_keys(self, other: StateRepository) -> None:
        """The task documents ``other`` found, after a re-read of a store other runners write."""
        self._task_keys = set(other._task_keys)

    def set_aside(self, damages: Iterable[Damage], now: datetime) -> list[tuple[Damage, str]]:
        """Move each damaged entry to ``damaged/<key>`` (with why and when) at the next save, in the
        same atomic update as whatever reports it; returns (damage, where it will be) pairs."""
        moved = []
        for damage in damages:
            target = DAMAGED_PREFIX + damage.key
            self._staged[target] = set_aside_value(damage, now)
            self._staged_removals.add(damage.key)
            moved.append((damage, target))
        return moved

    def unsaved(self, state: State) -> list[str]:
        """Keys whose stored document differs from the state's (a full comparison, for tests: after a
        save it must be empty, or some change escaped the tracking)."""
        expected = encode_all(state, self.runner)
        others = tuple(kind.prefix for kind in PER_RUNNER.values())
        stored = {key: value for key, value in self.store.get_properties().items()
                  if key != SCHEMA_KEY and not key.startswith(DAMAGED_PREFIX)
                  and (key in expected or not key.startswith(others))}
        # A single document never written reads as its default (a fresh shared store's: see load).
        defaults = {key: value for key, value in encode_all(State(), self.runner).items()
                    if key in SINGLE_KEYS and key not in stored}
        return sorted(key for key in expected.keys() | stored.keys()
                      if expected.get(key) != stored.get(key, defaults.get(key)))


def set_aside_value(damage: Damage, now: datetime) -> str:
    """What ``damaged/<key>`` holds: the entry as it was, why it was set aside, and when."""
    return json.dumps({"problem": damage.problem, "found_at": format_utc(now), "value": damage.raw},
                      ensure_ascii=False, separators=(",", ":"))


def _reader(kind: Kind, state: State) -> Callable[[str, str], Any]:
    """How an unread document of ``kind`` is read when first used: one that cannot be is a
    :class:`Damage` of ``state`` (left out, as at the opening), for the next save to set aside."""

    def read(id: str, raw: str) -> Any:
        try:
            return kind.decode(raw)
        except DocumentError as exc:
            state.damaged.append(Damage(kind.key(id), str(exc), raw))
            return None

    return read


def _decode(kind: Kind, raw: str, stored_version: int) -> Any:
    if stored_version == kind.version:
        return kind.decode(raw)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"not JSON ({exc.msg})") from None
    return kind.validate(upgraded(kind, value, stored_version))


def _collect(kind: Kind, documents: Documents, values: dict[str, str], deleted: set[str]) -> None:
    changed, removed = documents.pending_changes()
    for id, document in changed.items():
        values[kind.key(id)] = kind.encode(document)
    deleted |= {kind.key(id) for id in removed}


def _mark_saved(state: State) -> None:
    if state.round is not None:
        state.round.mark_saved()
    for attribute in FAMILIES:
        getattr(state, attribute).mark_saved()
    state.events.documents.mark_saved()
    state.changed_singles.clear()


def encode_all(state: State, runner: str | None = None) -> dict[str, str]:
    """Every document of ``state`` by its key, encoded as it would be stored (by ``runner``: see
    ``StateRepository``)."""
    encoded = {}
    if state.round is not None:
        encoded[ROUND.key()] = ROUND.encode(state.round.info)
        encoded.update({TASK.key(id): TASK.encode(task) for id, task in state.round.tasks.items()
                        if not task.fresh})
    for attribute, kind in FAMILIES.items():
        documents = getattr(state, attribute)
        # Not read yet, so unchanged since saved: their stored text is their encoding.
        encoded.update({kind.key(id): text for id, text in documents.unread().items()})
        encoded.update({kind.key(id): kind.encode(doc) for id, doc in documents.read_items()})
    encoded.update({EVENT.key(id): EVENT.encode(doc) for id, doc in state.events.documents.items()})
    for attribute, kind in SINGLES.items():
        if runner == "" and attribute in PER_RUNNER:
            continue  # see StateRepository: a process beside runners has none of its own
        if (value := getattr(state, attribute)) is not None:
            own = PER_RUNNER.get(attribute) if runner else None
            encoded[own.key(runner) if own else kind.key()] = (own or kind).encode(value)
    return encoded
