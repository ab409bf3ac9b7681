"""The sandbox's own control API under ``/_sandbox/``: data, faults, quotas, latency, the feed
delay, stats, clock.

Not part of Google's API, so it needs no token and meets no quota or fault. Every answer is JSON;
bad input gets a Google-shaped 400 naming the problem, an unknown path 404, a wrong method 405.

    GET    /_sandbox/spreadsheets            {"spreadsheets": [{id, title, stored, breakage, faults}]}
    PUT    /_sandbox/spreadsheets/{id}       seed one spreadsheet (see SpreadsheetStore.put_control);
                                             ?touch=false: new values, same modifiedTime, no change
    GET    /_sandbox/spreadsheets/{id}       what is stored, in the same shape
    DELETE /_sandbox/spreadsheets/{id}
    GET    /_sandbox/faults                  the faults in force
    POST   /_sandbox/faults                  one fault spec or a list of them (all or none are added)
    DELETE /_sandbox/faults[?spreadsheet=ID] all faults, or one target's
    GET    /_sandbox/stats                   requests by endpoint/status/user, 429s, quota windows,
                                             delayed answers, the first request's time
    DELETE /_sandbox/stats                   forget the counts alone (data, faults, quotas stay)
    POST   /_sandbox/reset                   forget data, faults, quota windows, stats
    GET    /_sandbox/quota                   limits and current usage
    PUT    /_sandbox/quota                   {"read_per_user": 10, ...} change limits at runtime
    GET    /_sandbox/drive_quota             Drive's limits and current usage
    PUT    /_sandbox/drive_quota             {"per_user": 10, "per_project": 100}
    GET    /_sandbox/latency                 the latency model in force and what it delayed
    PUT    /_sandbox/latency                 {"model": "google"|"off", "scale": 0.1, "seed": 3}
    GET    /_sandbox/feed_delay              Drive's change-feed delay in force, what it holds
    PUT    /_sandbox/feed_delay              {"model": "google"|"off", "scale": 0.1, "seed": 3}
    GET    /_sandbox/clock                   the sandbox's time
    POST   /_sandbox/clock                   {"advance_seconds": N}, only on a ManualClock
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import errors, faults
from .http import BadJSON, Request, Response
from .store import UnknownSpreadsheet

_Handler = Callable[[Any, Request, str | None], Response]


def handle(sandbox, request: Request) -> Response:
    """Answer one ``/_sandbox/...`` request against ``sandbox`` (a GoogleSandbox)."""
    segments = request.segments()[1:]  # drop "_sandbox"
    resource = segments[0] if segments else ""
    item = "/".join(segments[1:]) or None
    methods = _ROUTES.get((resource, item is not None))
    if methods is None:
        return errors.google_error(404, f"Unknown sandbox control path: {request.path}")
    handler = methods.get(request.method)
    if handler is None:
        allowed = ", ".join(sorted(methods))
        return errors.google_error(
            405, f"Method {request.method} is not allowed on {request.path}; use {allowed}."
        )
    try:
        return handler(sandbox, request, item)
    except BadJSON as exc:
        return errors.invalid_argument(f"Invalid JSON payload received. {exc}")
    except ValueError as exc:  # validation errors from the store, fault plan and quota meter
        return errors.invalid_argument(str(exc))


def _json_object(request: Request, what: str) -> dict:
    payload = request.json()
    if not isinstance(payload, dict):
        raise ValueError(f"{what} must be a JSON object")
    return payload


# -- spreadsheets ----------------------------------------------------------------------------


def _list_spreadsheets(sandbox, request: Request, item: None) -> Response:
    """Every stored spreadsheet with its title, then those a loaded dataset names but never stored
    (its "missing" ones, which answer 404); each with what the dataset broke in it (None when
    nothing is known) and the faults in force that target it."""
    faults = sandbox.faults.active()
    stored = {sheet.id: sheet.title for sheet in sandbox.store.all()}
    missing = {sid: entry["title"] for sid, entry in sandbox.breakages.items() if sid not in stored}
    listed = [
        {"id": sid, "title": title, "stored": sid in stored, "breakage": _breakage(sandbox, sid),
         "faults": sum(1 for fault in faults if fault.get("spreadsheet") == sid)}
        for sid, title in [*stored.items(), *missing.items()]
    ]
    return Response.json(200, {"spreadsheets": listed})


def _breakage(sandbox, spreadsheet_id: str) -> dict | None:
    entry = sandbox.breakages.get(spreadsheet_id)
    return None if entry is None else {key: entry[key] for key in ("kind", "expect", "note")}


def _put_spreadsheet(sandbox, request: Request, spreadsheet_id: str) -> Response:
    touch = (request.arg("touch") or "true").lower()
    if touch not in ("true", "false"):
        raise ValueError(f"touch must be true or false, got {request.arg('touch')!r}")
    payload = _json_object(request, "a spreadsheet")
    try:
        sandbox.store.put_control(spreadsheet_id, payload, touch=touch == "true")
    except UnknownSpreadsheet:
        return errors.google_error(
            404, f"No spreadsheet with id {spreadsheet_id!r} in the sandbox; touch=false changes "
                 f"an existing one (leave it out to create it).")
    return Response.json(200, sandbox.store.get_control(spreadsheet_id))


def _get_spreadsheet(sandbox, request: Request, spreadsheet_id: str) -> Response:
    payload = sandbox.store.get_control(spreadsheet_id)
    if payload is None:
        return errors.google_error(404, f"No spreadsheet with id {spreadsheet_id!r} in the sandbox.")
    return Response.json(200, payload)


def _delete_spreadsheet(sandbox, request: Request, spreadsheet_id: str) -> Response:
    if sandbox.store.get_control(spreadsheet_id) is None:
        return errors.google_error(404, f"No spreadsheet with id {spreadsheet_id!r} in the sandbox.")
    sandbox.store.delete(spreadsheet_id)
    return Response.json(200, {"deleted": spreadsheet_id})


# -- faults ----------------------------------------------------------------------------------


def _list_faults(sandbox, request: Request, item: None) -> Response:
    return Response.json(200, {"faults": sandbox.faults.active()})


def _add_faults(sandbox, request: Request, item: None) -> Response:
    payload = request.json()
    specs = payload if isinstance(payload, list) else [payload]
    if not specs:
        raise ValueError("expected a fault spec or a non-empty list of them")
    # Validate every spec before adding any, so a bad list leaves the plan untouched.
    for index, spec in enumerate(specs):
        try:
            faults.validate(spec)
        except ValueError as exc:
            raise ValueError(f"fault {index}: {exc}" if len(specs) > 1 else str(exc)) from exc
    added = [sandbox.faults.add(spec) for spec in specs]
    return Response.json(200, {"added": added})


def _clear_faults(sandbox, request: Request, item: None) -> Response:
    target = request.arg("spreadsheet")
    sandbox.faults.clear(target or None)
    return Response.json(200, {"cleared": target or "all"})


# -- stats, reset, quota, clock --------------------------------------------------------------


def _stats(sandbox, request: Request, item: None) -> Response:
    return Response.json(200, {
        **sandbox.stats.snapshot(),
        "quota": sandbox.quota.usage(),
        "drive_quota": sandbox.drive_quota.usage(),
        "latency": sandbox.latency.snapshot(),
        "feed_delay": sandbox.feed_delay.snapshot(),
    })


def _clear_stats(sandbox, request: Request, item: None) -> Response:
    sandbox.stats.reset()
    return Response.json(200, {"cleared": "stats"})


def _reset(sandbox, request: Request, item: None) -> Response:
    sandbox.reset()
    return Response.json(200, {"reset": True})


def _get_quota(sandbox, request: Request, item: None) -> Response:
    return Response.json(200, sandbox.quota.usage())


def _put_quota(sandbox, request: Request, item: None) -> Response:
    limits = _json_object(request, "quota limits")
    if not limits:
        raise ValueError("give at least one of read_per_user, read_per_project, "
                         "write_per_user, write_per_project")
    sandbox.quota.set_limits(**limits)
    return Response.json(200, sandbox.quota.usage())


def _get_drive_quota(sandbox, request: Request, item: None) -> Response:
    return Response.json(200, sandbox.drive_quota.usage())


def _put_drive_quota(sandbox, request: Request, item: None) -> Response:
    limits = _json_object(request, "Drive quota limits")
    if not limits:
        raise ValueError("give at least one of per_user, per_project")
    sandbox.drive_quota.set_limits(**limits)
    return Response.json(200, sandbox.drive_quota.usage())


_SWITCH_KEYS = ("model", "scale", "seed")


def _get_latency(sandbox, request: Request, item: None) -> Response:
    return Response.json(200, sandbox.latency.snapshot())


def _put_latency(sandbox, request: Request, item: None) -> Response:
    return _configured(sandbox.latency, request, "latency")


def _get_feed_delay(sandbox, request: Request, item: None) -> Response:
    return Response.json(200, sandbox.feed_delay.snapshot())


def _put_feed_delay(sandbox, request: Request, item: None) -> Response:
    return _configured(sandbox.feed_delay, request, "feed_delay")


def _configured(model, request: Request, what: str) -> Response:
    """A model's switches (the latency, the feed delay) changed from a JSON body; its snapshot."""
    settings = _json_object(request, f"{what} settings")
    unknown = sorted(set(settings) - set(_SWITCH_KEYS))
    if unknown:
        raise ValueError(f"unknown {what} key {unknown[0]!r}; allowed: {', '.join(_SWITCH_KEYS)}")
    if not settings:
        raise ValueError(f"give at least one of {', '.join(_SWITCH_KEYS)}")
    if any(value is None for value in settings.values()):
        raise ValueError(f"{what} settings must not be null; leave a key out to keep it as it is")
    model.configure(**settings)
    return Response.json(200, model.snapshot())


def _get_clock(sandbox, request: Request, item: None) -> Response:
    return Response.json(200, _clock_state(sandbox.clock))


def _advance_clock(sandbox, request: Request, item: None) -> Response:
    advance = getattr(sandbox.clock, "advance", None)
    if advance is None:
        return errors.google_error(
            400, "The sandbox runs on the real clock; only a manual clock can be advanced."
        )
    seconds = _json_object(request, "the clock request").get("advance_seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        raise ValueError(f'"advance_seconds" must be a number >= 0, got {seconds!r}')
    advance(seconds)
    return Response.json(200, _clock_state(sandbox.clock))


def _clock_state(clock) -> dict:
    return {
        "now": clock.now().isoformat().replace("+00:00", "Z"),
        "manual": hasattr(clock, "advance"),
    }


# (resource, has an item) -> {method: handler}
_ROUTES: dict[tuple[str, bool], dict[str, _Handler]] = {
    ("spreadsheets", False): {"GET": _list_spreadsheets},
    ("spreadsheets", True): {
        "GET": _get_spreadsheet,
        "PUT": _put_spreadsheet,
        "DELETE": _delete_spreadsheet,
    },
    ("faults", False): {"GET": _list_faults, "POST": _add_faults, "DELETE": _clear_faults},
    ("stats", False): {"GET": _stats, "DELETE": _clear_stats},
    ("reset", False): {"POST": _reset},
    ("quota", False): {"GET": _get_quota, "PUT": _put_quota},
    ("drive_quota", False): {"GET": _get_drive_quota, "PUT": _put_drive_quota},
    ("latency", False): {"GET": _get_latency, "PUT": _put_latency},
    ("feed_delay", False): {"GET": _get_feed_delay, "PUT": _put_feed_delay},
    ("clock", False): {"GET": _get_clock, "POST": _advance_clock},
}
