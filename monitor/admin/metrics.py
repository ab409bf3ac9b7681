"""The monitor as Prometheus sees it: the state and the config -> metric families, in a fresh registry.

A pure function of the state (``now`` comes in), like the other reports: the run writes it after
each run, ``sheet-monitor metrics`` on demand (``monitor.app.metrics_step`` writes and pushes it).
The families are prometheus_client's, so the text format is the library's, never hand-written; each
call builds its own ``CollectorRegistry``, never the process-wide one.

Counters (``_total``) are the totals every run adds to in the state (``monitor.engine.totals``), so
they only grow, across runs too, and ``rate()`` works on them. What one run did (its duration, its
tasks done) are gauges named ``last_run``: Prometheus reads a per-run figure that falls from one run
to the next as a counter reset, and loses the increase. Labels are bounded: outcomes, stop reasons,
health states and error classes by the code; credentials and projects by the config. A label per
spreadsheet only with ``[metrics] per_sheet`` (at most ``config.PER_SHEET_MAX`` spreadsheets).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime

from prometheus_client import CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.utils import floatToGoString

from monitor.admin.reports import edit_lag_report
from monitor.config import UNREAD_PROJECT, Config
from monitor.engine.fleet import SHOWN_ORDER, Fleet
from monitor.engine.heartbeat import Heartbeat, RunOutcome
from monitor.engine.incidents import INCIDENT_KINDS
from monitor.engine.pacer import QuotaLog
from monitor.engine.run_counts import READ_SECONDS_BUCKETS, RunCounts
from monitor.engine.tasks import DONE, FAILED, PENDING, PROCESSING, Round
from monitor.engine.totals import RunTotals
from monitor.state import State

PREFIX = "sheet_monitor_"
QUEUE_STATES = ("pending", "waiting_retry", "processing", "done", "failed")


def metrics_registry(state: State, config: Config, now: datetime) -> CollectorRegistry:
    """A new registry holding every family the monitor exposes, as ``state`` is at ``now``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_StateCollector(state, config, now))
    return registry


class _StateCollector:
    """A prometheus_client custom collector: yields the families when the registry is written."""

    def __init__(self, state: State, config: Config, now: datetime) -> None:
        self.state, self.config, self.now = state, config, now

    def collect(self) -> Iterator[Metric]:
        state, config, now = self.state, self.config, self.now
        yield from run_families(state.heartbeat, state.totals)
        yield from queue_families(state.round, now)
        yield from google_families(state, config, now)
        yield from fleet_families(state, config, now)
        yield from notification_families(state)
        yield from watchdog_families(state, now)
        yield from edit_lag_families(state, now)
        if config.metrics.per_sheet:
            yield from sheet_families(state, config, now)


def _gauge(name: str, documentation: str, value: float | None = None, **kwargs) -> GaugeMetricFamily:
    return GaugeMetricFamily(PREFIX + name, documentation, value=value, **kwargs)


def _counter(name: str, documentation: str, value: float | None = None, **kwargs) -> CounterMetricFamily:
    return CounterMetricFamily(PREFIX + name, documentation, value=value, **kwargs)


def _labelled(family: GaugeMetricFamily | CounterMetricFamily, values: Mapping[str, float]):
    for label, value in sorted(values.items()):
        family.add_metric([label], value)
    return family


# -- runs -------------------------------------------------------------------------------------------


def run_families(heartbeat: Heartbeat | None, totals: RunTotals) -> Iterable[Metric]:
    yield _labelled(_counter("runs", "Runs finished, by outcome.", labels=["outcome"]),
                    totals.runs_by_outcome)
    yield _counter("tasks_done", "Spreadsheets read and judged, all runs told.", totals.counts.tasks_done)
    yield _counter("tasks_dead_lettered", "Tasks dead-lettered, all runs told.", totals.counts.dead_lettered)
    if heartbeat is None:
        return
    yield _gauge("last_run_start_timestamp_seconds", "When the latest run started (Unix time).",
                 heartbeat.started_at.timestamp())
    if heartbeat.finished_at is not None:
        yield _gauge("last_run_finish_timestamp_seconds", "When the latest finished run finished.",
                     heartbeat.finished_at.timestamp())
    yield _gauge("last_run_budget_seconds", "The time budget of the latest run.", heartbeat.budget_seconds)
    outcome = _gauge("last_run_outcome", "1 for the latest run's outcome (running until it finishes).",
                     labels=["outcome"])
    for value in RunOutcome:
        outcome.add_metric([value.value], float(heartbeat.outcome is value))
    yield outcome
    stats = heartbeat.stats
    if stats is None:
        return
    yield _gauge("last_run_duration_seconds", "How long the latest finished run worked.",
                 stats.duration_seconds)
    reason = _gauge("last_run_stop_reason", "1 for why the latest run stopped taking tasks.",
                    labels=["reason"])
    reason.add_metric([stats.stop_reason or "none"], 1.0)
    yield reason
    yield _gauge("last_run_tasks_done", "Spreadsheets read and judged by the latest run.",
                 stats.counts.tasks_done)
    yield _gauge("last_run_reads", "Sheets requests the latest run sent.",
                 sum(stats.counts.reads_by_credential.values()))


# -- the queue --------------------------------------------------------------------------------------


def queue_families(rnd: Round | None, now: datetime) -> Iterable[Metric]:
    states = dict.fromkeys(QUEUE_STATES, 0)
    oldest_age = 0.0
    if rnd is not None:
        counts = rnd.counts()
        waiting = sum(1 for task in rnd.tasks.values() if task.status is PENDING and task.next_attempt_at)
        states.update(pending=counts[PENDING] - waiting, waiting_retry=waiting,
                      processing=counts[PROCESSING], done=counts[DONE], failed=counts[FAILED])
        oldest = rnd.oldest_pending()
        oldest_age = (now - oldest.created_at).total_seconds() if oldest else 0.0
    yield _labelled(_gauge("queue_tasks", "The current round's tasks by state (they add up to the round).",
                           labels=["state"]), states)
    yield _gauge("queue_oldest_pending_task_age_seconds",
                 "Age of the oldest pending task of the round (0: none).", max(oldest_age, 0.0))
    if rnd is None:
        return
    total = len(rnd)
    yield _gauge("round_spreadsheets", "Spreadsheets the current round reads.", total)
    yield _gauge("round_unread_spreadsheets", "Spreadsheets the current round judged without a read "
                 "(Drive reported no change).", rnd.info.unread)
    yield _gauge("round_progress_ratio", "Share of the current round's tasks finished (1 when empty).",
                 rnd.finished() / total if total else 1.0)
    yield _gauge("round_start_timestamp_seconds", "When the current round started.",
                 rnd.started_at.timestamp())
    yield _gauge("round_age_seconds", "How long ago the current round started.",
                 max((now - rnd.started_at).total_seconds(), 0.0))


# -- Google -----------------------------------------------------------------------------------------


def google_families(state: State, config: Config, now: datetime) -> Iterable[Metric]:
    totals, google = state.totals.counts, config.google
    credentials = [str(path) for path in google.credentials]
    projects = _projects(state, config)
    yield _labelled(_counter("google_reads", "Sheets requests sent, by credential (key file).",
                             labels=["credential"]), _only(totals.reads_by_credential, credentials))
    yield _labelled(_counter("google_project_reads", "Sheets requests sent, by Google Cloud project.",
                             labels=["project"]), totals.reads_by_project)
    window = _last_minute(state.quota, now)
    yield _labelled(_gauge("google_last_minute_reads", "Sheets requests in the rolling minute before the "
                           "latest save, by credential: what the per-user quota counts.",
                           labels=["credential"]), {c: window.get(c, 0) for c in credentials})
    by_project = _project_window(state.quota, now, projects)
    yield _labelled(_gauge("google_project_last_minute_reads", "Sheets requests in the rolling minute "
                           "before the latest save, by project: what the per-project quota counts.",
                           labels=["project"]), by_project)
    yield _labelled(_gauge("google_quota_reads_per_minute", "The read quota the monitor paces each "
                           "credential to ([google] read_requests_per_minute).", labels=["credential"]),
                    dict.fromkeys(credentials, google.read_requests_per_minute))
    yield _labelled(_gauge("google_project_quota_reads_per_minute", "The read quota of each project "
                           "([google] project_read_requests_per_minute).", labels=["project"]),
                    dict.fromkeys(projects, google.project_read_requests_per_minute))
    yield _counter("google_quota_refusals", "Reads Google refused for quota (429), all runs told.",
                   totals.quota_refusals)
    yield _labelled(_counter("google_retries", "Retries scheduled after a failed read, by error class.",
                             labels=["error_class"]), totals.retries_by_class)
    yield _read_time_histogram(totals)
    yield _gauge("google_api_degraded", "1 while the whole-API breaker holds Google for failing.",
                 float(state.api.degraded))


def _projects(state: State, config: Config) -> set[str]:
    """The Cloud projects of the configured credentials; when the key files were not read (a command
    that needs no secrets), the projects the runs found in them, as the state keeps them."""
    google = config.google
    projects = {google.project_of(path) for path in google.credentials}
    if UNREAD_PROJECT not in projects:
        return projects
    return set(state.totals.counts.reads_by_project) | set(state.quota.projects if state.quota else ())


def _only(counts: Mapping[str, int], credentials: list[str]) -> dict[str, int]:
    """Counts of the configured credentials (a key removed from the config leaves the series)."""
    return {credential: counts.get(credential, 0) for credential in credentials}


def _last_minute(log: QuotaLog | None, now: datetime) -> dict[str, int]:
    if log is None:
        return {}
    since = now.timestamp() - log.window_seconds
    return {credential: sum(1 for sent in times if sent > since) for credential, times in log.sent.items()}


def _project_window(log: QuotaLog | None, now: datetime, projects: Iterable[str]) -> dict[str, int]:
    counts = dict.fromkeys(projects, 0)
    if log is None:
        return counts
    since = now.timestamp() - log.window_seconds
    every = sum(1 for sent in log.every_project if sent > since)
    for project in projects:
        counts[project] = every + sum(1 for sent in log.projects.get(project, ()) if sent > since)
    return counts


def _read_time_histogram(totals: RunCounts) -> HistogramMetricFamily:
    cumulative, buckets = 0, []
    for bound, count in zip((*READ_SECONDS_BUCKETS, float("inf")), totals.read_seconds_buckets, strict=True):
        cumulative += count
        buckets.append((floatToGoString(bound), cumulative))
    return HistogramMetricFamily(PREFIX + "google_read_duration_seconds",
                                 "Sheets requests' time, request to answer, all runs told.",
                                 buckets=buckets, sum_value=totals.read_seconds_sum)


# -- the fleet --------------------------------------------------------------------------------------


def fleet_families(state: State, config: Config, now: datetime) -> Iterable[Metric]:
    fleet = Fleet.of(state, config.sheets_by_id, now, config.maintenance)
    yield _labelled(_gauge("spreadsheets", "Configured spreadsheets by their standing now (as `status` "
                           "counts them: muted, under maintenance and paused ones apart).",
                           labels=["health"]), fleet.counts())
    yield _gauge("spreadsheets_muted", "Configured spreadsheets muted now.", len(fleet.muted))
    yield _gauge("breakers_open", "Configured spreadsheets whose breaker is open or half-open.",
                 len(fleet.paused))
    yield _gauge("dlq_entries", "Configured spreadsheets in the dead-letter queue.", len(fleet.dead_lettered))
    kinds = Counter(incident.kind for sid, incident in state.incidents.items()
                    if sid in fleet and incident.is_open)
    yield _labelled(_gauge("incidents_open", "Configured spreadsheets in trouble now, by its kind.",
                           labels=["kind"]), {kind: kinds.get(kind, 0) for kind in INCIDENT_KINDS})
    yield _gauge("incidents_acknowledged", "Open incidents someone acknowledged (no reminders for them).",
                 len(fleet.acknowledged))


# -- notification -----------------------------------------------------------------------------------


def notification_families(state: State) -> Iterable[Metric]:
    outbox = state.outbox
    yield _gauge("outbox_messages", "Messages waiting for Telegram.", len(outbox.pending))
    yield _counter("telegram_messages_sent", "Messages Telegram accepted, all told.", outbox.delivered)
    halted = int(outbox.halted is not None) + len(outbox.halts)
    yield _gauge("delivery_halted", "1 while Telegram refuses a chat (nobody hears the alerts there).",
                 float(halted > 0))
    yield _gauge("delivery_halted_chats", "Chats Telegram refuses now.", halted)


# -- the watchdog's view ----------------------------------------------------------------------------


def watchdog_families(state: State, now: datetime) -> Iterable[Metric]:
    heartbeat = state.heartbeat
    moments = [state.runs.runs[-1].finished_at] if state.runs.runs else []
    if heartbeat is not None and heartbeat.finished_at is not None:
        moments.append(heartbeat.finished_at)
    finished = max(moments, default=None)
    if finished is not None:
        # As of when this was written: a run writes it at its end (about 0), so rules compare
        # time() with last_run_finish_timestamp_seconds instead; `sheet-monitor metrics` shows it.
        yield _gauge("seconds_since_last_finished_run", "Seconds from the last finished run to when "
                     "these metrics were written.", max((now - finished).total_seconds(), 0.0))
    yield _gauge("metrics_written_timestamp_seconds", "When these metrics were written.", now.timestamp())


# -- per spreadsheet (opt-in) -----------------------------------------------------------------------


def sheet_families(state: State, config: Config, now: datetime) -> Iterable[Metric]:
    health = _gauge("spreadsheet_health", "1 for each spreadsheet's standing now (its latest verdict, "
                    "or muted, or paused).", labels=["spreadsheet_id", "name", "health"])
    read = _gauge("spreadsheet_last_read_timestamp_seconds", "When each spreadsheet's last read worked.",
                  labels=["spreadsheet_id", "name"])
    fleet = Fleet.of(state, config.sheets_by_id, now, config.maintenance)
    for sheet in config.sheets:
        for shown in SHOWN_ORDER:
            health.add_metric([sheet.id, sheet.name, shown], float(fleet.standings[sheet.id] == shown))
        record = state.health.get(sheet.id)
        if record is not None and record.read_at is not None:
            read.add_metric([sheet.id, sheet.name], record.read_at.timestamp())
    yield health
    yield read


def edit_lag_families(state: State, now: datetime) -> Iterable[Metric]:
    """How long the last hour's edits took to be judged (``monitor.admin.reports.edit_lag_report``)."""
    lag = edit_lag_report(state, now)
    yield _gauge("edits_judged_last_hour", "Edits Drive reported that were judged in the last hour.",
                 lag["edits"] if lag else 0)
    family = _gauge("edit_lag_seconds", "Seconds from an edit (its modifiedTime) to its verdict over the "
                    "last hour, by quantile (none without an edit judged).", labels=["quantile"])
    if lag is not None:
        for quantile, key in (("0.5", "p50_seconds"), ("0.95", "p95_seconds"), ("1", "max_seconds")):
            family.add_metric([quantile], lag[key])
    yield family
