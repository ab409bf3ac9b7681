"""The time-boxed run: recover, maybe start a round, then one task per step until the budget is spent.

``Run`` is the whole algorithm over injected parts: a clock, a reader of spreadsheets, a quota pacer,
the state, and a ``save`` callback that writes what changed atomically. It never prints, never exits
and never sleeps while another task is due; it sleeps only until the earliest due time, and never
past the point where enough budget is left to save and hand events over. What a task's result does to
the state is ``monitor.engine.outcomes``; when saves happen is ``monitor.engine.checkpoints``.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from monitor.core.errors import ErrorClass, SheetReadError
from monitor.core.logs import log_event
from monitor.engine.api_health import ApiHealth
from monitor.engine.checkpoints import Checkpoints
from monitor.engine.events import CrashRecovered, Event, FallingBehind
from monitor.engine.health import record_skip
from monitor.engine.heartbeat import Heartbeat, Outcome, RoundProgress, RunStats, RunSummary
from monitor.engine.inspect import SheetPlan, SheetReader, judge, read
from monitor.engine.outcomes import Fate, Outcomes, RunReport
from monitor.engine.quota import QuotaPacer
from monitor.engine.settings import RunSettings
from monitor.engine.state import RetryFirst, RunnerState
from monitor.engine.tasks import DONE, FAILED, PENDING, PROCESSING, Round, Task

_NEVER = datetime.min.replace(tzinfo=UTC)  # "last checked" of a spreadsheet never checked: first in line


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
        save: Callable[[], None],
        rng: random.Random | None = None,
    ) -> None:
        self.run_id = run_id
        self.settings = settings
        self.plans = {plan.id: plan for plan in plans}
        self.state = state
        self.reader = reader
        self.pacer = pacer
        self.clock = clock
        self.started_monotonic = clock.monotonic()
        self.deadline = self.started_monotonic + settings.budget.total_seconds()
        self.report = RunReport(run_id=run_id)
        self.checkpoints = Checkpoints(save, clock.monotonic, settings.checkpoint_every)
        self.outcomes = Outcomes(
            run_id=run_id, state=state, settings=settings, pacer=pacer,
            api=ApiHealth(state.api, threshold=settings.api_degraded_after), report=self.report,
            emit=self.emit, epoch_seconds=clock.time, rng=rng or random.Random(),
        )

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
        self.state.heartbeat = Heartbeat(
            run_id=self.run_id,
            started_at=now,
            budget_seconds=self.settings.budget.total_seconds(),
            previous_run_id=previous.run_id if previous else None,
        )
        self._recover_abandoned(now)
        self._drop_unconfigured()
        self.checkpoints.save(force=True)
        log_event("run_started", run_id=self.run_id, budget_s=self.settings.budget.total_seconds())

    def end(self) -> None:
        now = self.clock.now()
        report = self.report
        report.duration_seconds = round(self.clock.monotonic() - self.started_monotonic, 3)
        if report.outcome is Outcome.OK and report.tasks and not report.ok:
            # Not one spreadsheet could be read: too short a run to trip the whole-API breaker, but
            # the watchdog must still see runs that achieve nothing.
            report.outcome = Outcome.DEGRADED
        self.state.dlq.prune(now)
        rnd = self.state.round
        stats = RunStats(
            tasks=report.tasks, ok=report.ok, failed=report.failed,
            retries_scheduled=report.retries_scheduled, reads_by_credential=dict(report.reads_by_credential),
            duration_seconds=report.duration_seconds, stop_reason=report.stop_reason,
            round=_progress(rnd) if rnd else None,
        )
        heartbeat = replace(self.state.heartbeat, finished_at=now, outcome=report.outcome, stats=stats)
        self.state.heartbeat = heartbeat
        self.state.runs = self.state.runs.add(
            RunSummary(self.run_id, heartbeat.started_at, now, report.outcome)
        )
        self.state.quota = self.pacer.snapshot(self.clock.time())
        self.state.api = self.outcomes.api.state
        self.checkpoints.save(force=True)
        log_event(
            "run_finished", run_id=self.run_id, outcome=report.outcome, stop_reason=report.stop_reason,
            tasks=report.tasks, duration_ms=int(report.duration_seconds * 1000),
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
                self.report.outcome = Outcome.NOTHING_TO_DO
            return self._stop("round_done")
        self._watch_progress(rnd, now)

        task = rnd.next_due(now)
        if task is None:
            due = rnd.next_retry_at()
            if due is None:
                return self._stop("round_done")
            return self._wait((due - now).total_seconds(), usable)

        plan = self.plans[task.target]
        if self.state.is_muted(plan.id, now):
            self._skip(rnd, task, plan, now, "muted")
            return True
        if self.outcomes.breaker_blocks(plan, now):
            self._skip(rnd, task, plan, now, "breaker_open")
            log_event("task_skipped", task_id=task.id, spreadsheet_id=plan.id, status="breaker_open")
            self.checkpoints.save()
            return True

        credential, wait = self.pacer.acquire(self.clock.time())
        if credential is None:
            return self._wait(wait, usable)
        # Only now, with a request certain to go out, may an open breaker's probe be spent.
        breaker_before = self.outcomes.breaker_let_through(plan, now)
        self._process(rnd, task, plan, credential, breaker_before)
        return True

    def _skip(self, rnd: Round, task: Task, plan: SheetPlan, now: datetime, reason: str) -> None:
        rnd.skip(task, now, reason)
        self.state.health[plan.id] = record_skip(self.state.health.get(plan.id), reason)

    def _process(self, rnd: Round, task: Task, plan: SheetPlan, credential: str, breaker_before) -> None:
        """Read and judge one spreadsheet; ``breaker_before`` is its breaker before this request."""
        rnd.start(task)
        started = self.clock.monotonic()
        now = self.clock.now()
        report = self.report
        report.tasks += 1
        report.reads_by_credential[credential] = report.reads_by_credential.get(credential, 0) + 1
        try:
            with self.checkpoints.lease_saved():
                data = read(plan, self.reader, credential, self._request_timeout)
            results = judge(plan, data, now)
        except SheetReadError as error:
            if error.error_class in (ErrorClass.QUOTA, ErrorClass.LOADING):
                # Neither says whether the spreadsheet can be read; a probe spent on one is given back,
                # or the retry would find the breaker half-open and skip the sheet for a cooldown.
                self.outcomes.give_back_probe(plan, breaker_before)
            self._failed(rnd, task, plan, credential, error, now, started)
        except Exception as exc:  # noqa: BLE001 - one odd spreadsheet must never stop the other 699
            log_event("task_crashed", logging.ERROR, exc_info=True, task_id=task.id, spreadsheet_id=plan.id)
            error = SheetReadError(ErrorClass.UNCERTAIN, None, None, f"could not evaluate: {exc!r}"[:300])
            self._failed(rnd, task, plan, credential, error, now, started)
        else:
            verdict = self.outcomes.succeeded(rnd, task, plan, results, now)
            findings = sum(1 for result in results if result.is_finding)
            log_event("task_done", task_id=task.id, spreadsheet_id=plan.id, attempt=task.attempts,
                      status=verdict, findings=findings, duration_ms=self._ms_since(started))
        self.checkpoints.save()

    def _failed(self, rnd: Round, task: Task, plan: SheetPlan, credential: str, error: SheetReadError,
                now: datetime, started: float) -> None:
        fate = self.outcomes.failed(rnd, task, plan, credential, error, now)
        fields = {
            "task_id": task.id, "spreadsheet_id": task.target, "attempt": task.attempts,
            "status": error.http_status, "error": error.message, "duration_ms": self._ms_since(started),
        }
        if fate is Fate.QUOTA_WAIT:
            retry_in = (task.next_attempt_at - now).total_seconds()
            log_event("task_quota_wait", logging.WARNING, **fields, retry_in_s=round(retry_in, 1))
        elif fate is Fate.API_DEGRADED:
            log_event("task_retry", logging.WARNING, **fields, reason="api_degraded")
            self._stop("api_degraded")
        elif fate is Fate.DEAD_LETTERED:
            log_event("task_failed", logging.ERROR, **fields)
        elif fate is Fate.RETRY:
            retry_in = (task.next_attempt_at - now).total_seconds()
            log_event("task_retry", logging.WARNING, **fields, retry_in_s=round(retry_in, 1))

    # -- rounds, recovery, progress ----------------------------------------------------------------

    def _current_round(self, now: datetime) -> Round | None:
        rnd = self.state.round
        if rnd is not None and rnd.continues(now, self.settings.round_interval):
            return None if rnd.is_complete() else rnd
        targets = self._round_order(now)
        if not targets:
            return None
        rnd = self.state.round = Round.build(targets, now)
        if self.state.retry_first.spreadsheet_ids:
            self.state.retry_first = RetryFirst()  # taken: it applied to this one round
        log_event("round_started", round_id=rnd.id, tasks=len(targets))
        return rnd

    def _round_order(self, now: datetime) -> list[str]:
        """Configured, unmuted spreadsheets: those `dlq retry` asked for first, then never-checked and
        longest-unchecked first. Marks the muted ones skipped."""
        muted = set(self.state.active_mutes(now))
        for plan_id in muted & self.plans.keys():
            self.state.health[plan_id] = record_skip(self.state.health.get(plan_id), "muted")
        first = set(self.state.retry_first.spreadsheet_ids)

        def order(plan_id: str) -> tuple[bool, datetime]:
            record = self.state.health.get(plan_id)
            return plan_id not in first, (record.last_checked_at if record else None) or _NEVER

        return sorted((plan_id for plan_id in self.plans if plan_id not in muted), key=order)

    def _recover_abandoned(self, now: datetime) -> None:
        rnd = self.state.round
        if rnd is None:
            return
        reclaimed, poisoned = rnd.reclaim_abandoned()
        if reclaimed or poisoned:
            self.emit(CrashRecovered(
                at=now, run_id=self.run_id, previous_run_id=self.state.heartbeat.previous_run_id,
                reclaimed=len(reclaimed), poisoned=len(poisoned),
            ))
            log_event("crash_recovered", logging.WARNING, reclaimed=len(reclaimed), poisoned=len(poisoned))
        for task in poisoned:
            plan = self.plans.get(task.target)
            if plan is not None:
                self.outcomes.dead_letter(rnd, task, plan, task.last_error, now)

    def _drop_unconfigured(self) -> None:
        rnd = self.state.round
        if rnd is None:
            return
        removed = {task.target for task in rnd.tasks.values()} - self.plans.keys()
        if removed:
            rnd.drop_targets(removed)
            log_event("tasks_dropped", reason="removed_from_config", count=len(removed))

    def _watch_progress(self, rnd: Round, now: datetime) -> None:
        limit = self.settings.round_interval * self.settings.behind_after_intervals
        if now - rnd.started_at <= limit or rnd.info.behind_reported:
            return
        rnd.mark_behind_reported()
        self.emit(FallingBehind(
            at=now, run_id=self.run_id, round_id=rnd.id, round_started_at=rnd.started_at,
            done=rnd.finished(), total=len(rnd),
        ))

    # -- plumbing ----------------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        self.state.events.add(event)
        self.report.events += 1

    def _usable_seconds(self) -> float:
        return self.deadline - self.clock.monotonic() - self.settings.reserve_seconds

    def _request_timeout(self) -> float:
        """For each request as it starts: the configured timeout, cut to the usable budget left (the
        reader's floor may add a fraction of a second, which the reserve absorbs)."""
        return max(0.0, min(self.settings.request_timeout, self._usable_seconds()))

    def _wait(self, seconds: float, usable: float) -> bool:
        """Sleep until work is due, but never past the usable budget."""
        self.checkpoints.save(force=True)  # nothing happens while asleep: make the progress durable first
        if seconds >= usable:
            self.clock.sleep(max(usable, 0))
            return self._stop("budget")
        self.clock.sleep(max(seconds, 0.0))
        return True

    def _stop(self, reason: str) -> bool:
        self.report.stop_reason = self.report.stop_reason or reason
        return False

    def _ms_since(self, started: float) -> int:
        return int((self.clock.monotonic() - started) * 1000)


def _progress(rnd: Round) -> RoundProgress:
    counts = rnd.counts()
    return RoundProgress(rnd.id, pending=counts[PENDING], processing=counts[PROCESSING], done=counts[DONE],
                         failed=counts[FAILED])
