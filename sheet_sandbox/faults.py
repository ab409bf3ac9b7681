"""Injected faults: what Google's front end does on a bad day, per spreadsheet or for all.

A fault spec (JSON, from the control API, start-up flags or a dataset)::

    {"spreadsheet": "ID" or "*" or "/token",   # required; a spreadsheet's own faults win over "*"
     "statuses": [503, 503],       # answered in order, one per request; 200 = answer normally
     "legacy_errors": false,       # 500 and 503 bodies carry Google's legacy "errors" list
     "repeat": false,              # true: cycle through statuses forever
     "latency_ms": 0,              # added before each answer this spec affects
     "hang": false,                # hold the request until the client gives up
     "reset": false,               # abort the TCP connection without answering
     "probability": 1.0,           # chance that a request is affected (seeded, deterministic)
     "html": false,                # true: a 429 is the front end's anti-abuse HTML page, not JSON
     "times": null}                # how many requests it affects; default: len(statuses), or
                                   # forever for repeat, hang, reset and latency-only specs

Specs for one target form a queue: the first unexhausted one decides, and is dropped once spent.
A request that a spec's probability spares is answered normally and uses up nothing.

``"/token"`` targets the token endpoint (``POST /token``) alone: Google's token service fails on its own
(an HTML 502 page, a hang, an intermittent ``invalid_grant``), and ``"*"`` never reaches it, so faults
meant for the APIs leave tokens alone. Its statuses answer in the token endpoint's flat OAuth shape
(``auth.token_fault_answer``).

A spec that answers one spreadsheet 403 forever (``removes_access``) is how the sandbox models an
account that lost access to it; the plan tells its ``on_access`` listener when such a spec is added
and when it is cleared, so Drive's change feed can report the file removed and back.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass

from . import errors
from .auth import TOKEN_FAULT_STATUSES, token_fault_answer
from .http import Response

WILDCARD = "*"
TOKEN = "/token"  # the target of faults on the token endpoint (no spreadsheet id starts with "/")
_KEYS = ("spreadsheet", "statuses", "repeat", "latency_ms", "hang", "reset", "probability", "times",
         "legacy_errors", "html")
NORMAL = 200  # in a status sequence: let this request through


@dataclass
class _Fault:
    statuses: list[int]
    repeat: bool
    latency_seconds: float
    hang: bool
    reset: bool
    probability: float
    remaining: int | None  # requests still to affect; None = forever
    position: int = 0
    spec: dict | None = None
    answer: Callable[[int], Response | None] | None = None  # a status's body; None: the APIs'

    def next_outcome(self) -> Response | None:
        """Consume one request's worth of this fault: its answer, or None to answer normally."""
        if self.remaining is not None:
            self.remaining -= 1
        if self.hang:
            return Response(hang=True)
        if self.reset:
            return Response(reset=True)
        if not self.statuses:
            return None  # latency only
        status = self.statuses[self.position % len(self.statuses)]
        self.position += 1
        return (self.answer or error_response)(status)

    @property
    def spent(self) -> bool:
        return self.remaining is not None and self.remaining <= 0


def error_response(status: int, legacy_errors: bool = False, html: bool = False) -> Response | None:
    """The body Google sends with ``status`` (None for 200: the normal answer); ``legacy_errors``
    adds the ``errors`` list some of Google's 500 and 503 bodies still carry; ``html``: a 429 is
    the front end's anti-abuse page rather than the API's quota body."""
    if status == NORMAL:
        return None
    if status == 502:
        return errors.html_bad_gateway()
    if status == 429:
        return errors.html_sorry() if html else errors.quota_exceeded("Read", "user", 60)
    if legacy_errors and status in errors.LEGACY_SERVER_ERRORS:
        return errors.google_error(status, legacy_reason=errors.LEGACY_SERVER_ERRORS[status])
    return errors.google_error(status)


# Drive does not tell a file the caller may not see from one that does not exist: files.get answers
# both with 404 notFound "File not found: {id}." (Drive's "Resolve errors" page, 404 "File not
# found"). A fault that refuses a spreadsheet 403 (no access) or 404 therefore reaches a Drive
# request for that file as Drive's 404, not as the Sheets API's 403 PERMISSION_DENIED.
_DRIVE_NOT_FOUND = frozenset({403, 404})


def as_drive_answers(response: Response, file_id: str | None) -> Response:
    """``response``, a fault's answer to a Drive request about ``file_id``, as Drive words it."""
    if file_id is not None and not response.hang and not response.reset \
            and response.status in _DRIVE_NOT_FOUND:
        return errors.drive_file_not_found(file_id)
    return response


def validate(spec: object) -> dict:
    """The spec with defaults filled in; ValueError naming the key for anything malformed."""
    if not isinstance(spec, dict):
        raise ValueError(f"a fault must be a JSON object, got {type(spec).__name__}")
    unknown = sorted(set(spec) - set(_KEYS))
    if unknown:
        raise ValueError(f"unknown fault key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(_KEYS)}")
    target = spec.get("spreadsheet")
    if not isinstance(target, str) or not target:
        raise ValueError('fault key "spreadsheet" is required: a spreadsheet id or "*"')
    statuses = _statuses(spec, target)
    flags = {key: _flag(spec, key) for key in ("repeat", "hang", "reset", "legacy_errors", "html")}
    latency = spec.get("latency_ms", 0)
    if isinstance(latency, bool) or not isinstance(latency, int | float) or latency < 0:
        raise ValueError(f'fault key "latency_ms" must be a number >= 0, got {latency!r}')
    probability = spec.get("probability", 1.0)
    if isinstance(probability, bool) or not isinstance(probability, int | float) or not 0 < probability <= 1:
        raise ValueError(f'fault key "probability" must be in (0, 1], got {probability!r}')
    times = spec.get("times")
    if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 1):
        raise ValueError(f'fault key "times" must be a positive integer, got {times!r}')
    _check_outcome(statuses, flags, latency)
    return {"spreadsheet": target, "statuses": statuses, "repeat": flags["repeat"], "latency_ms": latency,
            "hang": flags["hang"], "reset": flags["reset"], "probability": float(probability),
            "times": times, "legacy_errors": flags["legacy_errors"], "html": flags["html"]}


def _statuses(spec: dict, target: str) -> list[int]:
    statuses = spec.get("statuses", [])
    if not isinstance(statuses, list) or not all(_is_status(s) for s in statuses):
        raise ValueError(
            f'fault key "statuses" must be a list of HTTP statuses (200 or 400-599), got {statuses!r}'
        )
    if target == TOKEN and not set(statuses) <= TOKEN_FAULT_STATUSES:
        allowed = ", ".join(map(str, sorted(TOKEN_FAULT_STATUSES)))
        raise ValueError(f'the token endpoint\'s "statuses" may be {allowed} (the failures Google\'s '
                         f"token service is seen to answer), got {statuses!r}")
    return list(statuses)


def _flag(spec: dict, key: str) -> bool:
    value = spec.get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f'fault key "{key}" must be true or false, got {value!r}')
    return value


def _check_outcome(statuses: list[int], flags: dict[str, bool], latency: float) -> None:
    """A fault does one thing, and its flags fit it."""
    if sum([bool(statuses), flags["hang"], flags["reset"]]) > 1:
        raise ValueError('a fault has one kind of outcome: "statuses", "hang" or "reset", not several')
    if flags["repeat"] and not statuses:
        raise ValueError('fault key "repeat" needs a non-empty "statuses" list to cycle through')
    if flags["html"] and 429 not in statuses:
        raise ValueError('fault key "html" (the anti-abuse HTML page) needs 429 among "statuses"')
    if not (statuses or flags["hang"] or flags["reset"] or latency > 0):
        raise ValueError('a fault must do something: give "statuses", "hang", "reset" or "latency_ms"')


def removes_access(spec: dict) -> bool:
    """True for a normalised spec that refuses one spreadsheet with 403 every time, for good."""
    return (spec["spreadsheet"] not in (WILDCARD, TOKEN) and spec["repeat"]
            and set(spec["statuses"]) == {403}
            and spec["times"] is None and spec["probability"] == 1.0)


def _answers_for(spec: dict) -> Callable[[int], Response | None]:
    """How the spec's statuses are answered: the token endpoint's OAuth bodies, or the APIs'."""
    if spec["spreadsheet"] == TOKEN:
        return token_fault_answer
    legacy, html = spec["legacy_errors"], spec["html"]
    return lambda status: error_response(status, legacy, html)


def _is_status(value: object) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and (value == NORMAL or 400 <= value <= 599)
    )


class FaultPlan:
    """The faults in force, consumed request by request. Thread-safe and deterministic for a seed."""

    def __init__(self, seed: int = 0,
                 on_access: Callable[[str, bool], None] | None = None) -> None:
        """``on_access(spreadsheet_id, removed)`` hears of access-removing specs (see module doc):
        removed=True when one is added, False when its target's faults are cleared."""
        self._on_access = on_access
        self._lock = threading.Lock()
        self._seed = seed
        self._random = random.Random(seed)
        self._queues: dict[str, list[_Fault]] = {}

    def add(self, spec: dict) -> dict:
        """Validate and append one spec to its target's queue; returns the normalised spec."""
        clean = validate(spec)
        statuses = clean["statuses"]
        if clean["times"] is not None:
            remaining = clean["times"]
        elif statuses and not clean["repeat"]:
            remaining = len(statuses)
        else:
            remaining = None
        fault = _Fault(
            statuses=statuses,
            repeat=clean["repeat"],
            latency_seconds=clean["latency_ms"] / 1000,
            hang=clean["hang"],
            reset=clean["reset"],
            probability=clean["probability"],
            remaining=remaining,
            spec=clean,
            answer=_answers_for(clean),
        )
        with self._lock:
            self._queues.setdefault(clean["spreadsheet"], []).append(fault)
        if self._on_access is not None and removes_access(clean):
            self._on_access(clean["spreadsheet"], True)
        return clean

    def clear(self, spreadsheet: str | None = None) -> None:
        """Remove every fault, or only those targeting ``spreadsheet`` (which may be "*")."""
        with self._lock:
            if spreadsheet is None:
                cleared = list(self._queues.items())
                self._queues.clear()
                self._random = random.Random(self._seed)  # a cleared plan replays the same draws
            else:
                cleared = [(spreadsheet, self._queues.pop(spreadsheet, []))]
        if self._on_access is not None:
            for target, queue in cleared:
                if any(removes_access(fault.spec) for fault in queue):
                    self._on_access(target, False)

    def active(self) -> list[dict]:
        """The specs still in force, in queue order, each with how many requests it still affects."""
        with self._lock:
            return [
                {**fault.spec, "remaining": fault.remaining}
                for queue in self._queues.values()
                for fault in queue
            ]

    def take(self, spreadsheet_id: str | None) -> tuple[float, Response | None]:
        """(added delay in seconds, the fault's answer or None to answer normally) for one request.

        ``spreadsheet_id`` is None for requests that name no spreadsheet (Drive lists, creates):
        only "*" faults apply to them. ``TOKEN`` is the token endpoint: only its own faults apply.
        """
        with self._lock:
            fault = self._first(spreadsheet_id)
            if fault is None and spreadsheet_id != TOKEN:
                fault = self._first(WILDCARD)
            if fault is None:
                return 0.0, None
            if fault.probability < 1 and self._random.random() >= fault.probability:
                return 0.0, None
            response = fault.next_outcome()
            if fault.spent:
                self._drop(fault)
            return fault.latency_seconds, response

    def _first(self, target: str | None) -> _Fault | None:
        if target is None:
            return None
        queue = self._queues.get(target)
        return queue[0] if queue else None

    def _drop(self, fault: _Fault) -> None:
        target = fault.spec["spreadsheet"]
        queue = self._queues[target]
        queue.pop(0)  # only the front fault is ever consumed
        if not queue:
            del self._queues[target]
