"""The time-boxed run (SPEC 5): recover, maybe start a round, then one task per step until the budget.

``Run`` is the whole algorithm over injected parts: a clock, a reader of spreadsheets, a quota
pacer, and a ``save`` callback that writes the state atomically. It never prints, never exits and
never sleeps while another task is due; it sleeps only until the earliest due time, and never past
the point where enough budget is left to save and hand events over.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import Protocol

from monitor.checks import ValuesStillLoading, evaluate_all, health_of
from monitor.core.errors import ErrorClass, SheetReadError
from monitor.core.logs import log_event
from monitor.core.timefmt import format_utc, parse_utc
from monitor.engine import breaker, retry
from monitor.engine.health import ERROR, is_alerting, record_verdict
from monitor.engine.quota import QuotaPacer
from monitor.engine.tasks import DONE, FAILED, PROCESSING, Round, Task
from monitor.state import events
from monitor.state.runner_state import RunnerState


@dataclass(frozen=True)
class SheetPlan:
    """One configured spreadsheet as the run needs it."""

    id: str
    name: str
    checks: tuple
    ranges: tuple[str, ...]  # every range its checks read, fetched in one batchGet
    timezone: tzinfo
    needs_modified_time: bool = False  # a freshness check on the file's modifiedTime (one Drive request)


@dataclass(frozen=True)
class RunSettings:
    budget: timedelta
    round_interval: timedelta
    request_timeout: float
    failure_threshold: int = 3
    cooldown: timedelta = timedelta(minutes=15)
    max_cooldown: timedelta = timedelta(hours=4)
    # Left at the end of the budget to save the state, hand events over and exit.
    reserve_seconds: float = 3.0
    # No task starts with less usable budget than this (Google answers healthy reads well within it).
    min_request_seconds: float = 1.0
    # Consecutive transient failures on different spreadsheets that mean "Google, not them".
    api_degraded_after: int = 8
    # A round still unfinished after this many round intervals is "falling behind".
    behind_after_intervals: int = 3
    # Checkpoints closer together than this are merged (see docs/architecture.md, "Checkpoints").
    # A save rewrites the whole state: ~7 ms at 700 spreadsheets, ~45 ms at 5,000. Unmerged, the two
    # saves per task would be ~90 ms of overhead per task at 5,000 against a zero-latency sandbox;
    # merged at 0.2 s the whole overhead is 3.6 ms (bench/run_overhead.py). 0.2 s is one read at the
    # project quota's most (300/min): at production pace each task is saved (never more than one
    # task's work lost), and a lease before any request that lasts (see Run._lease_saved).
    checkpoint_every: float = 0.2


class SheetReader(Protocol):
    """What the run needs from the Sheets adapter (monitor.sheets.GspreadReader implements it)."""

    def read(
        self, spreadsheet_id: str, ranges: Sequence[str], credential: str, timeout: float
    ) -> list[dict]: ...

    def modified_time(self, spreadsheet_id: str, credential: str, timeout: float) -> str: ...


@dataclass
class RunReport:
    run_id: str
    outcome: str  # "ok" | "degraded" | "nothing_to_do"
    stop_reason: str
    tasks: int = 0
    ok: int = 0
    failed: int = 0
    retries_scheduled: int = 0
    reads_by_credential: dict[str, int] = field(default_factory=dict)
    duration_seconds: float = 0.0
    events: int = 0


class Run:
    def __init__(
        self,
        *,
        run_id: str,
        settings: RunSettings,
        plans: Sequence[SheetPlan],
        state: RunnerState,
        reader: SheetReader,
        pacer: QuotaPacer,
        clock,
        save: Callable[[RunnerState], None],
        rng: random.Random | None = None,
        state_restored: bool = False,
    ) -> None:
        self.run_id = run_id
        self.settings = settings
        self.plans = {plan.id: plan for plan in plans}
        self.state = state
        self.reader = reader
        self.pacer = pacer
        self.clock = clock
        self._save = save
        self.rng = rng or random.Random()
        self.state_restored = state_restored
        self.started_monotonic = clock.monotonic()
        self.deadline = self.started_monotonic + settings.budget.total_seconds()
        self.report = RunReport(run_id=run_id, outcome="ok", stop_reason="")
        self._last_checkpoint = float("-inf")
        self._lease_save_failure: list[BaseException] = []  # from _lease_saved's timer thread
        self.api = breaker.ApiHealth.from_dict(state.api, threshold=settings.api_degraded_after)

    # -- the whole run ---------------------------------------------------------------------------

    def execute(self) -> RunReport:
        self.begin()
        while self.step():
            pass
        self.end()
        return self.report

    def begin(self) -> None:
        now = self.clock.now()
        previous = self.state.heartbeat
        self.state.heartbeat = {
            "run_id": self.run_id,
            "started_at": format_utc(now),
            "finished_at": None,
            "outcome": "running",
            "budget_seconds": self.settings.budget.total_seconds(),
            "previous_run_id": previous.get("run_id"),
        }
        if self.state_restored:
            self._emit(events.STATE_RESTORED, now)
        self._recover_abandoned(now)
        self._drop_unconfigured()
        self._checkpoint(force=True)
        log_event("run_started", run_id=self.run_id, budget_s=self.settings.budget.total_seconds())

    def end(self) -> None:
        now = self.clock.now()
        report = self.report
        report.duration_seconds = round(self.clock.monotonic() - self.started_monotonic, 3)
        if report.outcome == "ok" and report.tasks and not report.ok:
            # Not one spreadsheet could be read: too short a run to trip the whole-API breaker, but
            # the watchdog must still see runs that achieve nothing.
            report.outcome = "degraded"
        self.state.dlq.prune(now)
        rnd = self.state.round
        stats = {
            "tasks": report.tasks,
            "ok": report.ok,
            "failed": report.failed,
            "retries_scheduled": report.retries_scheduled,
            "reads_by_credential": report.reads_by_credential,
            "duration_seconds": report.duration_seconds,
            "stop_reason": report.stop_reason,
            "round": {"id": rnd.id, **rnd.counts()} if rnd else None,
        }
        self.state.heartbeat.update(finished_at=format_utc(now), outcome=report.outcome, stats=stats)
        self.state.add_run(
            {
                "run_id": self.run_id,
                "started_at": self.state.heartbeat["started_at"],
                "finished_at": format_utc(now),
                "outcome": report.outcome,
            }
        )
        self.state.quota = self.pacer.to_dict(self.clock.time())
        self.state.api = self.api.to_dict()
        self._checkpoint(force=True)
        log_event(
            "run_finished",
            run_id=self.run_id,
            outcome=report.outcome,
            stop_reason=report.stop_reason,
            tasks=report.tasks,
            duration_ms=int(report.duration_seconds * 1000),
        )

    # -- one step ----------------------------------------------------------------------------------

    def step(self) -> bool:
        """Do one unit of progress (a task, a skip, or a wait); False when the run should end."""
        if self.report.stop_reason:
            return False
        now = self.clock.now()
        usable = self._usable_seconds()
        if usable < self.settings.min_request_seconds:
            # A request cut shorter than this would mostly time out and be blamed on the spreadsheet.
            return self._stop("budget")
        rnd = self._current_round(now)
        if rnd is None:
            if self.report.tasks == 0:
                self.report.outcome = "nothing_to_do"
            return self._stop("round_done")
        self._watch_progress(rnd, now)

        task = rnd.next_due(now)
        if task is None:
            due = rnd.next_retry_at()
            if due is None:
                return self._stop("round_done")
            return self._wait((due - now).total_seconds(), usable)

        plan = self.plans[task.target]
        if plan.id in self.state.active_mutes(now):
            task.status = DONE
            task.record_attempt(now, "skipped_muted")
            self.state.health(plan.id).skipped = "muted"
            return True
        if self._breaker_blocks(plan, now):
            task.status = DONE
            task.record_attempt(now, "skipped_breaker_open")
            self.state.health(plan.id).skipped = "breaker_open"
            log_event("task_skipped", task_id=task.id, spreadsheet_id=plan.id, status="breaker_open")
            self._checkpoint()
            return True

        credential, wait = self.pacer.acquire(self.clock.time())
        if credential is None:
            return self._wait(wait, usable)
        # Only now, with a request certain to go out, may an open breaker's probe be spent.
        breaker_before = self._breaker_let_through(plan, now)
        self._process(rnd, task, plan, credential, breaker_before)
        return True

    def _process(
        self, rnd: Round, task: Task, plan: SheetPlan, credential: str, breaker_before: dict | None
    ) -> None:
        """Read and judge one spreadsheet; ``breaker_before`` is its breaker before this request."""
        task.status = PROCESSING
        started = self.clock.monotonic()
        now = self.clock.now()
        self.report.tasks += 1
        self.report.reads_by_credential[credential] = self.report.reads_by_credential.get(credential, 0) + 1
        try:
            with self._lease_saved():
                value_ranges = (
                    self.reader.read(plan.id, plan.ranges, credential, self._request_timeout())
                    if plan.ranges else []
                )
                modified = (
                    self.reader.modified_time(plan.id, credential, self._request_timeout())
                    if plan.needs_modified_time else None
                )
            by_range = dict(zip(plan.ranges, value_ranges, strict=True))
            results = evaluate_all(plan.checks, by_range, now, plan.timezone, modified_time=modified)
        except SheetReadError as error:
            if error.error_class is ErrorClass.QUOTA and breaker_before is not None:
                # A refusal for quota says nothing about the spreadsheet: a probe it used up is
                # given back, or the sheet would be skipped for another cooldown (SPEC 7).
                self.state.breakers[plan.id] = breaker_before
            self._on_failure(rnd, task, plan, credential, error, now, started)
        except ValuesStillLoading:
            error = SheetReadError(ErrorClass.LOADING, None, None, "cells still show Loading...")
            self._on_failure(rnd, task, plan, credential, error, now, started)
        except Exception as exc:  # noqa: BLE001 - one odd spreadsheet must never stop the other 699
            log_event("task_crashed", logging.ERROR, exc_info=True, task_id=task.id, spreadsheet_id=plan.id)
            error = SheetReadError(ErrorClass.UNCERTAIN, None, None, f"could not evaluate: {exc!r}"[:300])
            self._on_failure(rnd, task, plan, credential, error, now, started)
        else:
            self._on_success(task, plan, results, now, started)
        self._checkpoint()

    # -- outcomes ----------------------------------------------------------------------------------

    def _on_success(self, task: Task, plan: SheetPlan, results, now: datetime, started: float) -> None:
        self.report.ok += 1
        task.status = DONE
        task.attempts += 1
        task.next_attempt_at = None
        task.record_attempt(now, "ok")
        self._api_outcome(plan.id, ok=True, now=now)
        self._breaker_success(plan, now)

        findings = [_finding(result) for result in results if result.is_finding]
        verdict = health_of(results)
        record = self.state.health(plan.id)
        change = record_verdict(record, verdict, now, findings)
        entry = self.state.dlq.resolve(plan.id)
        if entry is not None:
            down = (now - parse_utc(entry.first_failed_at)).total_seconds()
            self._emit(
                events.RECOVERED,
                now,
                plan,
                details={
                    "down_for_seconds": down,
                    "health": verdict,
                    "findings": findings[:5],
                    "last_error": entry.last_error,
                },
            )
        elif change is not None and is_alerting(change):
            self._emit(
                events.HEALTH_CHANGED,
                now,
                plan,
                details={
                    "from": change.previous,
                    "to": change.current,
                    "findings": findings[:5],
                    "down_for_seconds": change.down_for_seconds,
                },
            )
        log_event(
            "task_done",
            task_id=task.id,
            spreadsheet_id=plan.id,
            attempt=task.attempts,
            status=verdict,
            findings=len(findings),
            duration_ms=self._ms_since(started),
        )

    def _on_failure(
        self,
        rnd: Round,
        task: Task,
        plan: SheetPlan,
        credential: str,
        error: SheetReadError,
        now: datetime,
        started: float,
    ) -> None:
        error_info = error.to_dict()
        if error.error_class is ErrorClass.QUOTA:
            wait = self.pacer.record_quota_error(credential, self.clock.time())
            rnd.schedule_retry(task, now + timedelta(seconds=wait))
            task.record_attempt(now, "quota", error_info)
            self._log_failure(
                "task_quota_wait", logging.WARNING, task, error, started, retry_in_s=round(wait, 1)
            )
            return
        decision = retry.decide(error.error_class, task.attempts, now, self.rng)
        task.attempts = decision.attempts
        task.last_error = error_info
        task.record_attempt(now, error.error_class.value, error_info)
        opened = False
        if decision.counts_for_breaker:
            opened = self._breaker_failure(plan, now)
        if self._api_outcome(plan.id, ok=not decision.counts_for_breaker, now=now):
            # Google itself is failing: this task is not the spreadsheet's fault; keep it for later.
            rnd.schedule_retry(task, decision.next_attempt_at or now)
            self._log_failure("task_retry", logging.WARNING, task, error, started, reason="api_degraded")
            return
        if not decision.retry:
            self._dead_letter(task, plan, error_info, now)
            self._log_failure("task_failed", logging.ERROR, task, error, started)
            return
        if not opened:
            rnd.schedule_retry(task, decision.next_attempt_at)
            self.report.retries_scheduled += 1
            retry_in = round((decision.next_attempt_at - now).total_seconds(), 1)
            self._log_failure("task_retry", logging.WARNING, task, error, started, retry_in_s=retry_in)
            return
        # Attempts remain but the breaker now guards the spreadsheet: skip it; the next round probes
        # it after the cooldown.
        task.status = DONE
        self.state.health(plan.id).skipped = "breaker_open"

    def _log_failure(
        self, event: str, level: int, task: Task, error: SheetReadError, started: float, **extra
    ) -> None:
        log_event(
            event,
            level,
            task_id=task.id,
            spreadsheet_id=task.target,
            attempt=task.attempts,
            status=error.http_status,
            error=error.message,
            duration_ms=self._ms_since(started),
            **extra,
        )

    def _dead_letter(self, task: Task, plan: SheetPlan, error_info: dict, now: datetime) -> None:
        self.report.failed += 1
        task.status = FAILED
        task.next_attempt_at = None
        record_verdict(self.state.health(plan.id), ERROR, now, [])
        is_new = self.state.dlq.record(plan.id, plan.name, task.to_dict(), error_info, now)
        if is_new:
            self._emit(
                events.DEAD_LETTERED, now, plan, details={"error": error_info, "attempts": task.attempts}
            )

    # -- breakers ----------------------------------------------------------------------------------

    def _breaker_blocks(self, plan: SheetPlan, now: datetime) -> bool:
        """True while the spreadsheet's breaker is open and its probe is not yet due (no state change)."""
        stored = self.state.breakers.get(plan.id)
        if stored is None:
            return False
        probe_at = breaker.BreakerState.from_dict(stored).next_probe_at()
        return probe_at is not None and now < probe_at

    def _breaker_let_through(self, plan: SheetPlan, now: datetime) -> dict | None:
        """Record that a request goes out (an open breaker's probe is now in flight); returns the
        stored breaker as it was, None when there was none."""
        stored = self.state.breakers.get(plan.id)
        if stored is not None:
            _, state = breaker.allow(breaker.BreakerState.from_dict(stored), now)
            self.state.breakers[plan.id] = state.to_dict()
        return stored

    def _breaker_success(self, plan: SheetPlan, now: datetime) -> None:
        stored = self.state.breakers.get(plan.id)
        if stored is None:
            return
        state, transitions = breaker.record_success(breaker.BreakerState.from_dict(stored), now)
        self._breaker_events(plan, transitions, now)
        if state.state == breaker.CLOSED and state.consecutive_failures == 0:
            del self.state.breakers[plan.id]  # a healthy breaker needs no storage
        else:
            self.state.breakers[plan.id] = state.to_dict()

    def _breaker_failure(self, plan: SheetPlan, now: datetime) -> bool:
        stored = self.state.breakers.get(plan.id)
        current = breaker.BreakerState.from_dict(stored) if stored else breaker.BreakerState()
        state, transitions = breaker.record_failure(
            current,
            now,
            threshold=self.settings.failure_threshold,
            base_cooldown=self.settings.cooldown,
            max_cooldown=self.settings.max_cooldown,
        )
        self.state.breakers[plan.id] = state.to_dict()
        self._breaker_events(plan, transitions, now)
        return state.state == breaker.OPEN

    def _breaker_events(self, plan: SheetPlan, transitions, now: datetime) -> None:
        kinds = {breaker.BreakerOpened: events.BREAKER_OPENED, breaker.BreakerClosed: events.BREAKER_CLOSED}
        for transition in transitions:
            kind = kinds[type(transition)]
            self._emit(kind, now, plan, details=transition.to_dict())
            log_event(kind, logging.WARNING, spreadsheet_id=plan.id)

    def _api_outcome(self, spreadsheet_id: str, ok: bool, now: datetime) -> bool:
        """Feed the whole-API breaker; True when the run must stop because Google itself is failing."""
        stop = self.api.record(spreadsheet_id, ok, now)
        for change in self.api.take_events():
            if isinstance(change, breaker.ApiDegraded):
                self._emit(
                    events.API_DEGRADED, now, details={"failing_in_a_row": len(change.failed_spreadsheets)}
                )
                log_event("api_degraded", logging.ERROR, failing_in_a_row=len(change.failed_spreadsheets))
            else:
                self._emit(
                    events.RECOVERED,
                    now,
                    details={
                        "api": True,
                        "degraded_since": format_utc(change.degraded_since)
                        if change.degraded_since
                        else None,
                    },
                )
        if stop:
            self.report.outcome = "degraded"
            self._stop("api_degraded")
        return stop

    # -- rounds, recovery, progress ----------------------------------------------------------------

    def _current_round(self, now: datetime) -> Round | None:
        rnd = self.state.round
        if rnd is not None and not rnd.is_complete():
            return rnd
        if rnd is not None and now - parse_utc(rnd.started_at) < self.settings.round_interval:
            return None
        targets = self._round_order(now)
        if not targets:
            return None
        self.state.round = Round.build(targets, now)
        log_event("round_started", round_id=self.state.round.id, tasks=len(targets))
        return self.state.round

    def _round_order(self, now: datetime) -> list[str]:
        """Configured, unmuted spreadsheets: those `dlq retry` asked for first, then never-checked and
        longest-unchecked first. Marks the muted ones skipped."""
        muted = set(self.state.active_mutes(now))
        eligible = [plan_id for plan_id in self.plans if plan_id not in muted]
        for plan_id in muted & set(self.plans):
            self.state.health(plan_id).skipped = "muted"

        def last_checked(plan_id: str) -> str:
            record = self.state.sheets.get(plan_id)
            return (record.last_checked_at or "") if record else ""

        first = set(self.state.flags.pop("retry_first", ()))  # `dlq retry` between rounds (monitor.admin)
        return sorted(eligible, key=lambda plan_id: (plan_id not in first, last_checked(plan_id)))

    def _recover_abandoned(self, now: datetime) -> None:
        rnd = self.state.round
        if rnd is None:
            return
        reclaimed, poisoned = rnd.reclaim_abandoned()
        if reclaimed or poisoned:
            self._emit(
                events.CRASH_RECOVERED,
                now,
                details={
                    "previous_run_id": self.state.heartbeat.get("previous_run_id"),
                    "reclaimed": len(reclaimed),
                    "poisoned": len(poisoned),
                },
            )
            log_event("crash_recovered", logging.WARNING, reclaimed=len(reclaimed), poisoned=len(poisoned))
        for task in poisoned:
            plan = self.plans.get(task.target)
            if plan is not None:
                self._dead_letter(task, plan, task.last_error or {}, now)

    def _drop_unconfigured(self) -> None:
        rnd = self.state.round
        if rnd is None:
            return
        removed = {task.target for task in rnd.tasks.values()} - set(self.plans)
        if removed:
            rnd.drop_targets(removed)
            log_event("tasks_dropped", reason="removed_from_config", count=len(removed))

    def _watch_progress(self, rnd: Round, now: datetime) -> None:
        limit = self.settings.round_interval * self.settings.behind_after_intervals
        if now - parse_utc(rnd.started_at) <= limit or self.state.flags.get("behind_round") == rnd.id:
            return
        self.state.flags["behind_round"] = rnd.id
        counts = rnd.counts()
        self._emit(
            events.FALLING_BEHIND,
            now,
            details={
                "round_id": rnd.id,
                "round_started_at": rnd.started_at,
                "done": counts[DONE] + counts[FAILED],
                "total": len(rnd.tasks),
            },
        )

    # -- plumbing ----------------------------------------------------------------------------------

    def _usable_seconds(self) -> float:
        return self.deadline - self.clock.monotonic() - self.settings.reserve_seconds

    def _request_timeout(self) -> float:
        """For each request as it starts: the configured timeout, cut to the usable budget left (the
        reader's floor may add a fraction of a second, which the reserve absorbs)."""
        return max(0.0, min(self.settings.request_timeout, self._usable_seconds()))

    def _wait(self, seconds: float, usable: float) -> bool:
        """Sleep until work is due, but never past the usable budget."""
        self._checkpoint(force=True)  # nothing happens while asleep: make the progress durable first
        if seconds >= usable:
            self.clock.sleep(max(usable, 0))
            return self._stop("budget")
        self.clock.sleep(max(seconds, 0.0))
        return True

    def _stop(self, reason: str) -> bool:
        self.report.stop_reason = self.report.stop_reason or reason
        return False

    def _emit(
        self, kind: str, now: datetime, plan: SheetPlan | None = None, details: dict | None = None
    ) -> None:
        event = events.Event.make(
            kind,
            now,
            self.run_id,
            spreadsheet_id=plan.id if plan else None,
            name=plan.name if plan else None,
            details=details or {},
        )
        self.state.add_event(event.to_dict())
        self.report.events += 1

    def _checkpoint(self, force: bool = False) -> None:
        if self._lease_save_failure:  # a deferred lease save failed: fail as an immediate one would have
            failure, self._lease_save_failure = self._lease_save_failure[0], []
            raise failure
        now = self.clock.monotonic()
        if force or now - self._last_checkpoint >= self.settings.checkpoint_every:
            self._save(self.state)
            self._last_checkpoint = now

    @contextmanager
    def _lease_saved(self) -> Iterator[None]:
        """Around a task's requests: its ``processing`` lease is on disk before any request that lasts.

        A kill during a request must find the lease on disk, or it cannot count toward the poison
        guard. When the last checkpoint is recent enough to merge with, the lease is saved only if the
        requests are still in flight once the merge window has passed: by a timer thread, while this
        thread waits on the network and touches no state. A request that ends sooner (nearly all of
        them) costs no save; one that hangs, or is killed after the window, has its lease saved.
        """

        def save_lease() -> None:
            try:
                self._checkpoint(force=True)
            except BaseException as exc:  # noqa: BLE001 - raised by the run's next checkpoint, not as
                self._lease_save_failure.append(exc)  # the task's failure (nor in the timer thread)

        wait = self.settings.checkpoint_every - (self.clock.monotonic() - self._last_checkpoint)
        if wait <= 0:
            save_lease()
            yield
            return

        timer = threading.Timer(wait, save_lease)
        timer.daemon = True  # a run killed mid-request must not be kept alive by its timer
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            timer.join()  # a save under way must finish before this thread changes the state again

    def _ms_since(self, started: float) -> int:
        return int((self.clock.monotonic() - started) * 1000)


def _finding(result) -> dict:
    return {
        "check": result.check_name,
        "kind": result.kind,
        "status": result.status,
        "message": result.message,
        "cells": list(result.cells),
    }
