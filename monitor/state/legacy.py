"""Reading a state written by the first release (layout 1): thirteen keys, each a whole collection.

Layout 1 kept the round with all its tasks under ``round``, every health record under ``sheets``,
and so on, as untyped JSON. Each entry is converted to its typed document on its own, so one damaged
entry (a task missing its target, a mute whose ``until`` is "tomorrow") is set aside like any damaged
document while the rest loads. The writer that opens such a state saves it in the current layout at
once (a whole save: ``StateRepository.save_all``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from monitor.engine.runner_state import RetryFirst
from monitor.engine.tasks import Round, task_id
from monitor.state.schema import (
    ALERTS,
    API,
    BREAKER,
    DLQ,
    EVENT,
    HEALTH,
    HEARTBEAT,
    MUTE,
    OUTBOX,
    QUOTA,
    ROUND,
    RUNS,
    TASK,
    DocumentError,
    Kind,
    upgraded,
)
from monitor.state.whole import Damage, State

# Task fields layout 1 stored that no code consulted: the type (always one) and a fixed attempt limit
# (the limit applied was always the error class's).
_DROPPED_TASK_FIELDS = ("type", "max_attempts")


def written_by_first_release(properties: dict[str, str]) -> bool:
    """The first release wrote all thirteen of its keys at every save, among them these, which no later
    layout uses (later layouts also write a ``schema`` key)."""
    return "schema" not in properties and bool(_FIRST_RELEASE_ONLY & properties.keys())


def load_legacy(properties: dict[str, str]) -> State:
    damaged: list[Damage] = []
    values = {key: _json(key, raw, damaged) for key, raw in properties.items()}
    flags = values.get("flags") if isinstance(values.get("flags"), dict) else {}
    state = State(
        round=_round(values.get("round"), flags, damaged),
        health=_collection(values, "sheets", HEALTH, damaged),
        breakers=_collection(values, "breakers", BREAKER, damaged),
        dlq=_collection(values, "dlq", DLQ, damaged, _dead_letter),
        mutes=_collection(values, "mutes", MUTE, damaged),
        events=_events(values.get("events"), damaged),
        heartbeat=_single(values, "heartbeat", HEARTBEAT, damaged, empty_is_none=True),
        runs=_single(values, "runs", RUNS, damaged, lambda runs: {"runs": runs}),
        api=_single(values, "api", API, damaged),
        quota=_single(values, "quota", QUOTA, damaged, empty_is_none=True),
        outbox=_single(values, "outbox", OUTBOX, damaged),
        alerts=_single(values, "alerts", ALERTS, damaged),
    )
    first = flags.get("retry_first")
    if isinstance(first, list) and all(isinstance(sid, str) for sid in first):
        state.retry_first = RetryFirst(tuple(first))
    for key in properties.keys() - _KNOWN:
        damaged.append(Damage(key, "not a key of the first release's layout", properties[key]))
    state.damaged = damaged
    state.changed_singles.clear()
    return state


def _json(key: str, raw: str, damaged: list[Damage]) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        damaged.append(Damage(key, f"not JSON ({exc.msg})", raw))
        return None


def _convert(kind: Kind, value: Any, where: str, damaged: list[Damage]) -> Any:
    try:
        # The first release's documents are the first version of each kind.
        return kind.validate(upgraded(kind, value, 1))
    except DocumentError as exc:
        damaged.append(Damage(where, str(exc), json.dumps(value, ensure_ascii=False)))
        return None


def _collection(values: dict, key: str, kind: Kind, damaged: list[Damage],
                adapt: Callable[[Any], Any] = lambda value: value) -> dict[str, Any]:
    collection = values.get(key)
    if collection is None:
        return {}
    if not isinstance(collection, dict):
        damaged.append(Damage(key, f"expected an object, found a JSON {type(collection).__name__}",
                              json.dumps(collection)))
        return {}
    converted = {sid: _convert(kind, _adapt(adapt, value), f"{key}.{sid}", damaged)
                 for sid, value in collection.items()}
    return {sid: document for sid, document in converted.items() if document is not None}


def _single(values: dict, key: str, kind: Kind, damaged: list[Damage],
            adapt: Callable[[Any], Any] = lambda value: value, empty_is_none: bool = False) -> Any:
    value = values.get(key)
    if value is None or (empty_is_none and value == {}):
        return None
    return _convert(kind, _adapt(adapt, value), key, damaged)


def _adapt(adapt: Callable[[Any], Any], value: Any) -> Any:
    try:
        return adapt(value)
    except (AttributeError, TypeError, KeyError):
        return value  # not the expected shape: validation says what is wrong


def _task(value: Any) -> Any:
    if isinstance(value, dict):
        return {name: item for name, item in value.items() if name not in _DROPPED_TASK_FIELDS}
    return value


def _dead_letter(value: Any) -> Any:
    return {**value, "task": _task(value.get("task"))} if isinstance(value, dict) else value


def _round(value: Any, flags: dict, damaged: list[Damage]) -> Round | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("tasks"), list):
        damaged.append(Damage("round", "expected a round with a list of tasks", json.dumps(value)))
        return None
    round_id = value.get("id")
    tasks = []
    for index, task in enumerate(value["tasks"]):
        converted = _convert(TASK, _task(task), f"round.tasks[{index}]", damaged)
        if converted is not None:
            tasks.append(converted)
    # Layout 1 stored every task; today a round lists its targets and stores only tasks that changed,
    # each named by its place in that list.
    targets = tuple(task.target for task in tasks)
    behind = flags.get("behind_round") == round_id
    info = _convert(ROUND, {"id": round_id, "started_at": value.get("started_at"), "targets": targets,
                            "behind_reported": behind}, "round", damaged)
    if info is None:
        return None
    renamed = [replace(task, id=task_id(info.id, number)) for number, task in enumerate(tasks, start=1)]
    return Round(info, [task for task in renamed if not task.fresh])


# Layout 1 kept an event's own fields in a "details" object, and one kind for two meanings.
_RENAMED_DETAILS = {"health_changed": {"from": "previous", "to": "current"}}
_UNUSED_DETAILS = {"breaker_closed": ("closed_at",)}


def _events(value: Any, damaged: list[Damage]) -> dict[int, Any]:
    if value is None:
        return {}
    if not isinstance(value, list):
        damaged.append(Damage("events", "expected a list of events", json.dumps(value)))
        return {}
    events = {}
    for index, event in enumerate(value):
        converted = _convert(EVENT, _event(event), f"events[{index}]", damaged)
        if converted is not None:
            events[len(events) + 1] = converted
    return events


def _event(value: Any) -> Any:
    if not isinstance(value, dict) or not isinstance(value.get("details", {}), dict):
        return value
    kind = value.get("kind")
    details = dict(value.get("details") or {})
    if kind == "recovered" and details.pop("api", False):
        kind = "api_recovered"
    for old, new in _RENAMED_DETAILS.get(kind, {}).items():
        if old in details:
            details[new] = details.pop(old)
    for unused in _UNUSED_DETAILS.get(kind, ()):
        details.pop(unused, None)
    if kind == "state_restored":
        details.setdefault("reason", "")
    common = {"kind": kind, "at": value.get("at"), "run_id": value.get("run_id")}
    if value.get("spreadsheet_id") is not None:
        sid = value["spreadsheet_id"]
        common.update(spreadsheet_id=sid, name=value.get("name") or sid)
    return {**common, **details}


_KNOWN = frozenset({
    "round", "sheets", "breakers", "dlq", "events", "heartbeat", "runs", "api", "quota", "mutes",
    "flags", "outbox", "alerts",
})
_FIRST_RELEASE_ONLY = frozenset({"sheets", "breakers", "dlq", "events", "mutes", "flags"})
