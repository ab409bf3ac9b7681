"""The status page as one self-contained HTML file, drawn from ``build_report``'s data.

No script, no network: styles and charts are inline, so the file opens from a disk, a static host or a
mail attachment alike, and nothing on it can run. Every text that comes from a spreadsheet or the
config (names, findings, errors, tags) goes through ``html.escape`` here, at the one place it becomes
HTML.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any

from monitor.admin.reports import edit_lag_text
from monitor.core.durations import human_duration
from monitor.core.timefmt import parse_utc
from monitor.core.wording import counted
from monitor.report.charts import Guide, Series, line_chart, strip
from monitor.report.style import CSS

CARD_LABELS = {"ok": "ok", "warn": "warning", "fail": "failing", "error": "unreadable", "skipped": "skipped",
               "muted": "muted", "maintenance": "in maintenance", "unknown": "not checked yet"}


def render_page(data: dict[str, Any]) -> str:
    """The page for ``data`` (as ``monitor.report.page_data.build_report`` makes it)."""
    body = "".join((
        _header(data), _fleet(data), _charts(data), _problems(data["problems"]), _attention(data),
        _timelines(data["timelines"]), _monitor(data["monitor"]),
    ))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>sheet-monitor status</title><style>{CSS}</style></head><body>{body}</body></html>\n")


def _header(data: dict[str, Any]) -> str:
    watchdog = data["monitor"]["watchdog"]
    css = "healthy" if watchdog["status"] == "healthy" else "bad"
    keep = human_duration(data["keep_seconds"])
    start, end = (parse_utc(data["timelines"][side]) for side in ("start", "end"))
    history = (f"history of the last {keep}" if (end - start).total_seconds() >= data["keep_seconds"]
               else f'history since {_when(data["timelines"]["start"])} (up to {keep} are kept)')
    return (f'<header><h1>sheet-monitor status</h1><div class="soft">generated {_when(data["generated_at"])}'
            f" &middot; {history}</div>"
            f'<div id="verdict">monitor: <span class="verdict {css}">{escape(watchdog["status"])}</span> '
            f'<span class="soft">{escape(watchdog["reason"])}</span></div></header>')


def _fleet(data: dict[str, Any]) -> str:
    fleet = data["fleet"]
    cards = "".join(f'<div class="card {name}"><b>{count}</b>{CARD_LABELS.get(name, escape(name))}</div>'
                    for name, count in fleet["by_health"].items()
                    if count or name in ("ok", "fail", "warn"))
    return (f'<section id="fleet"><h2>{counted(fleet["total"], "spreadsheet")}</h2>'
            f'<div class="cards">{cards}</div></section>')


def _problems(problems: dict[str, Any]) -> str:
    if not problems["listed"]:
        return '<section id="problems"><h2>Problems</h2><p>None: every spreadsheet is ok.</p></section>'
    items = [_problem(problem) for problem in problems["listed"]]
    if problems["more"]:
        items.append(f'<p class="soft">and {counted(problems["more"], "more spreadsheet")} '
                     "(<code>sheet-monitor sheets --status fail</code> lists them all)</p>")
    return f'<section id="problems"><h2>Problems</h2>{"".join(items)}</section>'


def _problem(problem: dict[str, Any]) -> str:
    findings = [f'<li>{_link(finding["url"], ", ".join(finding["cells"]) or "open")} '
                f'{escape(finding["check"])}: {escape(finding["message"])}</li>'
                for finding in problem["findings"]]
    if problem["more_findings"]:
        findings.append(f'<li class="soft">and {counted(problem["more_findings"], "more finding")}</li>')
    if problem["unreadable"]:
        findings.append(f"<li>{_unreadable(problem['unreadable'])}</li>")
    since = f' &middot; since {_when(problem["since"])}' if problem["since"] else ""
    tags = "".join(f' <span class="tag">#{escape(tag)}</span>' for tag in problem["tags"])
    owner = f' &middot; {escape(problem["owner"])}' if problem["owner"] else ""
    label = CARD_LABELS.get(problem["health"], "")
    name = _link(problem["url"], problem["name"])
    drawn = "".join(_anomaly_chart(series) for series in problem.get("series", ()))
    return (f'<div class="problem {escape(problem["health"])}"><b>{name}</b> '
            f'<span class="soft">{label}{since}{owner}</span>{tags}<ul>{"".join(findings)}</ul>{drawn}</div>')


def _anomaly_chart(series: dict[str, Any]) -> str:
    """An anomaly check's recent values and the band its baseline allowed at each (a bucket's time is
    its wall-clock start on the spreadsheet's clock, drawn as it reads)."""
    def line(field: str) -> list[tuple[float, float]]:
        return [(datetime.fromisoformat(point["at"]).replace(tzinfo=UTC).timestamp(), float(point[field]))
                for point in series["points"] if point[field] is not None]

    values = line("value")
    if not values:
        return ""
    drawn = [Series("value", "s0", values), Series("usual: low", "band", line("low")),
             Series("usual: high", "band", line("high"))]
    svg = line_chart(series["check"], drawn,
                     start=values[0][0], end=max(values[-1][0], values[0][0] + 1))
    caption = f"{escape(series['check'])}: the value and its band"
    return f'<figure class="anomaly"><figcaption>{caption}</figcaption>{svg}</figure>'


def _attention(data: dict[str, Any]) -> str:
    """Muted spreadsheets, those under maintenance, open breakers, the dead-letter queue: tables, each
    only when not empty."""
    parts = []
    if data["muted"]:
        parts.append(_table("Muted", ("spreadsheet", "until", "reason"), [
            (_link(row["url"], row["name"]), _when(row["until"]), escape(row["reason"]))
            for row in data["muted"]]))
    if data["maintenance"]:
        parts.append(_table("Under maintenance", ("spreadsheet", "until", "reason"), [
            (_link(row["url"], row["name"]), _when(row["until"]), escape(row["reason"]))
            for row in data["maintenance"]]))
    if data["breakers"]:
        parts.append(_table("Open breakers", ("spreadsheet", "state", "failures", "next probe"), [
            (escape(row["name"]), escape(row["state"]), str(row["consecutive_failures"]),
             _when(row["next_probe_at"])) for row in data["breakers"]]))
    if data["dlq"]:
        headers = ("spreadsheet", "error", "since", "times")
        parts.append(_table("Could not be read (dead-letter queue)", headers, [
            (escape(row["name"] or row["id"]), _unreadable(row["unreadable"]), _when(row["first_failed_at"]),
             str(row["occurrences"])) for row in data["dlq"]]))
    return f'<section id="attention">{"".join(parts)}</section>' if parts else ""


def _unreadable(error: dict[str, Any]) -> str:
    """A read refused for good, as its alert says it (monitor.notify.render): what is wrong and what
    to do lead, Google's own words follow for whoever digs."""
    fix = escape(error["fix"]) if error["fix"] else None
    if error["problem"] is None:
        return f"could not be read: {escape(error['google'])}" + (f". To fix: {fix}" if fix else "")
    to_fix = f" To fix: {fix}." if fix else ""
    return f"cannot be read: {escape(error['problem'])}.{to_fix} (Google: {escape(error['google'])})"


def _charts(data: dict[str, Any]) -> str:
    runs = data["runs"]
    if not runs:
        return '<section id="charts"><h2>History</h2><p>No run recorded yet.</p></section>'
    span = {"start": parse_utc(data["timelines"]["start"]).timestamp(),
            "end": parse_utc(data["generated_at"]).timestamp()}
    at = [parse_utc(run["started_at"]).timestamp() for run in runs]

    def over_time(value) -> list[tuple[float, float]]:
        return [(t, float(value(run))) for t, run in zip(at, runs, strict=True)]

    duration = line_chart(
        "Run duration (s)", [Series("duration", "s0", over_time(lambda run: run["duration_seconds"]))],
        [Guide("budget", runs[-1]["budget_seconds"]),
         Guide("interval", data["round_interval_seconds"], "guide2")],
        **span)
    projects = sorted({project for run in runs for project in run["reads_per_minute"]})
    reads = line_chart(
        "Reads per minute",
        [Series(project, f"s{n % 4}", over_time(lambda run, p=project: run["reads_per_minute"].get(p, 0.0)))
         for n, project in enumerate(projects)],
        [Guide(f"quota {project}", limit) for project, limit in data["quota_per_minute"].items()], **span)
    bad = line_chart("Failing and warning spreadsheets", [
        Series("failing", "lfail", over_time(lambda run: run["health"].get("fail", 0)
                                             + run["health"].get("error", 0))),
        Series("warning", "lwarn", over_time(lambda run: run["health"].get("warn", 0))),
    ], **span)
    refusals = sum(run["quota_refusals"] for run in runs)
    figures = "".join(f"<figure><figcaption>{caption}</figcaption>{svg}</figure>" for caption, svg in (
        ("Round duration against budget and interval", duration),
        (f"Reads per minute against the quota ({counted(refusals, '429')} met)", reads),
        ("Failing and warning over time", bad)))
    return (f'<section id="charts"><h2>History: {counted(len(runs), "run")}</h2>'
            f'<div class="charts">{figures}</div></section>')


def _timelines(timelines: dict[str, Any]) -> str:
    start = parse_utc(timelines["start"]).timestamp()
    end = parse_utc(timelines["end"]).timestamp()
    rows = []
    for row in timelines["strips"]:
        segments = [(parse_utc(s["from"]).timestamp(), parse_utc(s["from"]).timestamp() + s["seconds"],
                     s["health"]) for s in row["segments"]]
        rows.append(f'<tr><td class="name">{_link(row["url"], row["name"])}</td>'
                    f'<td>{strip(segments, start=start, end=end, label=row["name"])}</td></tr>')
    rest = f'{counted(timelines["ok_all_the_time"], "spreadsheet")} ok all the time'
    if timelines["not_checked_yet"]:
        rest += f', {timelines["not_checked_yet"]} not checked yet'
    if timelines["more"]:
        rest += f', {counted(timelines["more"], "more strip")} not drawn'
    return (f'<section id="timelines"><h2>Spreadsheets that warned or failed</h2>'
            f'<div class="soft">{_when(timelines["start"])} to {_when(timelines["end"])}: green ok, orange '
            f'warning, red failing, grey not known</div><table class="strips">{"".join(rows)}</table>'
            f'<p class="soft">{rest}</p></section>')


def _monitor(monitor: dict[str, Any]) -> str:
    telegram = monitor["telegram"]
    delivery = _delivery(telegram)
    halts = "".join(f"<li>chat {escape(chat)} halted since {_when(h['at'])}: {escape(h['description'])}</li>"
                    for chat, h in telegram["route_halts"].items())
    runs = _table("Last runs", ("started", "finished", "outcome"), [
        (_when(run["started_at"]), _when(run["finished_at"]),
         f'<span class="outcome-{escape(run["outcome"])}">{escape(run["outcome"])}</span>')
        for run in monitor["last_runs"][:10]])
    google = "degraded (the whole-API breaker is open)" if monitor["api_degraded"] else "answering"
    return (f'<section id="monitor"><h2>The monitor itself</h2><ul>'
            f'<li>watchdog: {escape(monitor["watchdog"]["status"])}: '
            f'{escape(monitor["watchdog"]["reason"])}</li>'
            f"<li>Google: {google}</li><li>Edits: {escape(edit_lag_text(monitor['edit_lag']))}</li>"
            f"<li>Telegram: {delivery}; outbox: "
            f'{counted(telegram["outbox"], "message")} waiting</li>{halts}</ul>{runs}</section>')


def _delivery(telegram: dict[str, Any]) -> str:
    """Telegram's delivery as the state records it: a halt, else the last message Telegram took."""
    halted, last = telegram["halted"], telegram["last_delivered_at"]
    delivered = f"last message delivered {_when(last)}" if last else ""
    if halted:
        before = f"; {delivered}" if delivered else ""
        return f'halted since {_when(halted["at"])}: {escape(halted["description"])}{before}'
    if delivered:
        return delivered
    if not telegram["configured"]:
        return "no chat in the config (messages are printed)"
    return "no message delivered yet"


def _table(title: str, headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(header)}</th>" for header in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<h2>{escape(title)}</h2><div class="scroll"><table><tr>{head}</tr>{body}</table></div>'


def _link(url: str, text: str) -> str:
    return f'<a href="{escape(url)}">{escape(text)}</a>'


def _when(iso: str | None) -> str:
    if not iso:
        return "&mdash;"
    moment: datetime = parse_utc(iso)
    return f'<time datetime="{escape(iso)}">{moment.strftime("%Y-%m-%d %H:%M")} UTC</time>'
