"""Collections that remember what changed since the last save, so a checkpoint writes only that.

The state is stored one document per key (a task, a spreadsheet's health, a breaker...). A run
checkpoints after every task; rewriting tens of thousands of unchanged documents each time made a
checkpoint cost grow with the number of spreadsheets. Instead every stored collection records the keys
it changed, and the state layer writes those and nothing else.

The rule that makes this safe: **documents are values**. To change one, store a new one
(``health[sid] = new_record``); a stored document is never changed in place. The few aggregates that do
change their members in place (the round's task queue) call :meth:`Documents.touch` themselves.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

from pydantic import AfterValidator, ConfigDict

T = TypeVar("T")


class Documents(Generic[T]):
    """Documents of one kind by id, with the ids changed or removed since the last save.

    Some may be held *unread*: as the stored text, read (decoded and validated) when first used
    (:meth:`hold_unread`). A run uses a few hundred spreadsheets' metric histories before its first
    read, of 20,000, and decoding them all cost its start-up ~0.1 s. Looking one up reads that one;
    counting, iterating or listing the documents reads them all first, so what they show is exactly
    what could be read. One that cannot be read is not there (``read`` reported it as damage).

    Those held so may be let go again once saved (:meth:`release`): a document is then held in one
    form, its stored text (the very string the store keeps), until it is used again. A run reads each
    spreadsheet's history once, and keeping every one it had judged decoded beside its text was a
    twentieth of a run's memory at 5,000 spreadsheets."""

    __slots__ = ("_items", "_changed", "_removed", "_unread", "_read", "_read_since")

    def __init__(self, items: Mapping[str, T] | None = None) -> None:
        self._items: dict[str, T] = dict(items or {})
        self._changed: set[str] = set()
        self._removed: set[str] = set()
        self._unread: dict[str, str] = {}
        self._read: Callable[[str, str], T | None] | None = None
        # The documents read from their text since the last release (and not replaced since).
        self._read_since: set[str] = set()

    def hold_unread(self, texts: Mapping[str, str], read: Callable[[str, str], T | None]) -> None:
        """Hold ``texts`` (id -> stored text) as saved, to be read by ``read(id, text)`` when first
        used; ``read`` returns None for a text that cannot be read, having reported why."""
        self._unread.update(texts)
        self._read = read

    def _read_one(self, key: str) -> bool:
        """Read the unread document at ``key``; whether there is one now."""
        text = self._unread.pop(key, None)
        if text is None:
            return False
        document = self._read(key, text)
        if document is None:
            return False
        self._items[key] = document
        self._read_since.add(key)
        return True

    def _read_all(self) -> None:
        for key in list(self._unread):
            self._read_one(key)

    def __getitem__(self, key: str) -> T:
        try:
            return self._items[key]
        except KeyError:
            if self._unread and self._read_one(key):
                return self._items[key]
            raise

    def __setitem__(self, key: str, document: T) -> None:
        self._unread.pop(key, None)
        self._read_since.discard(key)
        self._items[key] = document
        self._changed.add(key)
        self._removed.discard(key)

    def __delitem__(self, key: str) -> None:
        if key not in self._items and self._unread:
            self._read_one(key)  # one that cannot be read is not there: KeyError, as for none
        del self._items[key]
        self._read_since.discard(key)
        self._changed.discard(key)
        self._removed.add(key)

    def __contains__(self, key: object) -> bool:
        return key in self._items or (bool(self._unread) and self._read_one(key))

    def __iter__(self) -> Iterator[str]:
        self._read_all()
        return iter(self._items)

    def __len__(self) -> int:
        self._read_all()
        return len(self._items)

    def __repr__(self) -> str:
        return (f"Documents({len(self._items)} items, {len(self._unread)} unread, "
                f"{len(self._changed)} changed)")

    def get(self, key: str, default: T | None = None) -> T | None:
        document = self._items.get(key)
        if document is None and self._unread and self._read_one(key):
            return self._items[key]
        return default if document is None else document

    def pop(self, key: str, default: T | None = None) -> T | None:
        if key not in self:
            return default
        document = self._items[key]
        del self[key]
        return document

    def keys(self):
        self._read_all()
        return self._items.keys()

    def values(self):
        self._read_all()
        return self._items.values()

    def items(self):
        self._read_all()
        return self._items.items()

    def ids(self) -> set[str]:
        """Every id held, without reading the unread documents: one that turns out unreadable when
        used is among them (and is not there then)."""
        return self._items.keys() | self._unread.keys()

    def read_items(self):
        """(id, document) for the documents read so far, leaving the unread ones unread."""
        return self._items.items()

    def unread(self) -> Mapping[str, str]:
        """The documents not read yet, as their stored text: unchanged since they were saved."""
        return self._unread

    def load(self, key: str, document: T | None) -> None:
        """Hold ``document`` at ``key`` (None: none) as another writer saved it: not a change of ours,
        so nothing is written back for it (runners sharing one state, monitor.engine.sharing)."""
        self._unread.pop(key, None)
        self._read_since.discard(key)
        if document is None:
            self._items.pop(key, None)
        else:
            self._items[key] = document
        self._changed.discard(key)
        self._removed.discard(key)

    def changed(self, key: str) -> bool:
        """Was the document at ``key`` changed or removed since the last save?"""
        return key in self._changed or key in self._removed

    def touch(self, key: str) -> None:
        """Record that the document at ``key`` was changed in place (aggregates only; see module doc)."""
        if key in self._items:
            self._changed.add(key)
            self._read_since.discard(key)

    def pending_changes(self) -> tuple[dict[str, T], set[str]]:
        """(changed documents by id, removed ids) since the last :meth:`mark_saved`."""
        return {key: self._items[key] for key in self._changed}, set(self._removed)

    def mark_saved(self) -> None:
        """The pending changes are on disk: forget them. (Called only after a successful write, so a
        failed save is retried whole by the next one.)"""
        self._changed.clear()
        self._removed.clear()

    def release(self, saved: Iterable[str], stored: Callable[[str], str | None]) -> None:
        """Hold as their stored text again (``stored(id)``: the text the store holds now), to be read
        when next used, the documents ``saved`` just wrote and those read since the last release.
        Only for documents held unread (:meth:`hold_unread` gave the reader), and only once a save
        wrote every pending change: one changed since is never let go."""
        if self._read is None:
            return
        for key in (*saved, *self._read_since):
            if key in self._items and key not in self._changed and (text := stored(key)) is not None:
                del self._items[key]
                self._unread[key] = text
        self._read_since.clear()

    def mark_all_changed(self) -> None:
        """Treat every document as changed (a new layout or a fresh store writes everything)."""
        self._read_all()
        self._changed = set(self._items)


class Single:
    """One stored document as an attribute: assigning it records the change in the owner's
    ``changed_singles`` (a set of attribute names the owner keeps)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.attribute = "_" + name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return self if instance is None else getattr(instance, self.attribute)

    def __set__(self, instance: Any, value: Any) -> None:
        setattr(instance, self.attribute, value)
        instance.changed_singles.add(self.name)


# A string that many documents hold alike (a spreadsheet's id in its task, its round's targets and
# the keys of its records; a round's id in each of its tasks; a profile's checks' fingerprint), read
# back as one shared object: at 20,000 spreadsheets, copies of ids alone were ~7 MB of a run's memory.
Interned = Annotated[str, AfterValidator(sys.intern)]


def document(cls: type | None = None, /, *, frozen: bool = True, **options: Any):
    """Declare a type that is stored in the state: a slotted dataclass (frozen unless said otherwise)
    read back strictly, so that a missing or an extra field makes the stored entry damaged rather than
    being silently dropped or defaulted (``monitor.state`` validates documents with pydantic)."""

    def declare(cls: type) -> type:
        cls.__pydantic_config__ = ConfigDict(extra="forbid")
        return dataclass(cls, frozen=frozen, slots=True, **options)

    return declare if cls is None else declare(cls)
