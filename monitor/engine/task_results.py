"""What one task's result does to the state: health, breakers, the DLQ, retries, and the events people hear.

Used by the run (``monitor.engine.run``) once per read. Success updates the spreadsheet's health and
closes its breaker; a failure is classified by the retry policy into a retry, a dead letter or, when
its breaker opens, a skip until the next round. Transient failures also feed the whole-API breaker,
which may stop the run. Nothing here does I/O beyond logging.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from monitor.checks import CheckResult, Past, health_of
from monitor.core.errors import ErrorClass, ErrorInfo, QuotaScope, SheetReadError
from monitor.core.logs import log_event
from monitor.engine import breaker, credentials, retry
from monitor.engine.api_health import ApiHealth
from monitor.engine.change_detection import marked_changed
from monitor.engine.events import (
    ApiDegraded,
    ApiRecovered,
    BreakerClosed,
    BreakerOpened,
    DeadLettered,
    Event,
    HealthChanged,
    ReadableAgain,
)
from monitor.engine.health import (
    ERROR,
    Change,
    Finding,
    Health,
    Tab,
    is_alerting,
    located,
    record_read_time,
    record_skip,
    record_verdict,
)
from monitor.engine.heartbeat import RunOutcome, StopReason
from monitor.engine.history import compares_keys_with, depends_on, past_for, recorded, rejudged_cross
from monitor.engine.inspect import SheetPlan, zone_of
from monitor.engine.pacer import QuotaPacer
from monitor.engine.rejudge import moments_of, rejudged
from monitor.engine.run_counts import RunCounts
from monitor.engine.runner_state import RunnerState
from monitor.engine.settings import RunSettings
from monitor.engine.tasks import Round, Task
from monitor.engine.unreadable import judge_streak, read_again, record_failed_read
from monitor.engine.zone_refresh import with_zone

FINDINGS_TOLD = 5  # findings an event carries: enough for a message, which shows two anyway


class Fate(StrEnum):
    """What became of a task whose read failed."""

    QUOTA_WAIT = "quota_wait"  # refused for quota: waits for the pacer, no attempt counted
    RETRY = "retry"  # tried again after a backoff
    DEAD_LETTERED = "dead_lettered"
    PAUSED = "paused"  # its breaker opened: the next round probes it
    API_DEGRADED = "api_degraded"  # Google itself is failing: kept for later, and the run stops
    CREDENTIAL_REFUSED = "credential_refused"  # the credential cannot read: another one reads it


@dataclass
class RunReport:
    """What a run tells as it goes and when it ends: its outcome, why it stopped, its counts."""

    run_id: str
    outcome: RunOutcome = RunOutcome.OK
    stop_reason: StopReason = StopReason.NONE
    counts: RunCounts = field(default_factory=RunCounts)  # kept as they are when the run ends
    reads_of_failing: int = 0  # requests sent to spreadsheets already failing (dead-lettered, breaker)
    zones_read: int = 0  # reads that gave their spreadsheet's time zone (monitor.engine.zone_refresh)
    duration_seconds: float = 0.0
    events: int = 0
    # For each read that judged an edit Drive reported: seconds from the edit (its modifiedTime) to
    # the verdict (the run log keeps them: monitor.engine.runlog.edit_lag).
    edit_lags: list[float] = field(default_factory=list)

    def count(self, more: RunCounts) -> None:
        self.counts = self.counts.plus(more)


class TaskResults:
    """Applies read results to ``state`` for one run; ``emit`` records an event for people."""

    def __init__(
        self,
        *,
        run_id: str,
        state: RunnerState,
        settings: RunSettings,
        pacer: QuotaPacer,
        api: ApiHealth,
        report: RunReport,
        emit: Callable[[Event], None],
        epoch_seconds: Callable[[], float],
        rng: random.Random,
        plans: Mapping[str, SheetPlan] | None = None,
    ) -> None:
        self.run_id = run_id
        self.state = state
        self.settings = settings
        self.pacer = pacer
        self.api = api
        self.report = report
        self._emit = emit
        self._epoch_seconds = epoch_seconds
        self.rng = rng
        self.plans = plans or {}  # by id: a lender's read judges its dependents again
        self.names = {plan_id: plan.name for plan_id, plan in self.plans.items()}

    # -- a read that worked ------------------------------------------------------------------------

    def succeeded(self, rnd: Round, task: Task, plan: SheetPlan, results: list[CheckResult], now: datetime,
                  value_ranges: Mapping[str, Any] | None = None, read_seconds: float | None = None) -> Health:
        self.report.count(RunCounts(tasks_done=1))
        rnd.succeed(task, now)
        self._google_answered(now)
        self._breaker_success(plan, now)
        before = self.state.health.get(plan.id)
        if before is not None and before.changed_at is not None:
            self.report.edit_lags.append(max(0.0, (now - before.changed_at).total_seconds()))
        checks = {check.name: check for check in plan.checks}
        findings = tuple(Finding.of(result, checks.get(result.check_name)) for result in results
                         if result.is_finding)
        findings = located(findings, before.tabs if before else ())  # links open the first bad cell
        verdict = health_of(results)
        record, change = record_verdict(before, verdict, now, findings, self.settings.history_keep)
        if read_seconds is not None:
            record = record_read_time(record, read_seconds)
        self.state.health[plan.id] = replace(read_again(record), read_at=now, checks=plan.fingerprint,
                                             moments=moments_of(results), changed_at=None)
        self._keep_history(rnd, plan, results, value_ranges or {}, now)
        entry = self.state.dlq.resolve(plan.id)
        if entry is not None:
            self._emit(ReadableAgain(
                at=now, run_id=self.run_id, spreadsheet_id=plan.id, name=plan.name, tags=plan.tags,
                down_for_seconds=(now - entry.first_failed_at).total_seconds(), health=verdict,
                findings=findings[:FINDINGS_TOLD], last_error=entry.last_error,
            ))
        else:
            self._tell(plan, change, findings, now)
        return verdict

    def past_for(self, plan: SheetPlan) -> Past:
        """What ``plan``'s checks kept over time or across spreadsheets are judged against now."""
        others = set(plan.links.others.values())
        failing = {sid: self.state.dlq[sid].last_error.message for sid in others if sid in self.state.dlq}
        return past_for(plan.checks, plan.links, self.state.history, plan.id, self.names, failing)

    def _keep_history(self, rnd: Round, plan: SheetPlan, results: list[CheckResult],
                      value_ranges: Mapping[str, Any], now: datetime) -> None:
        """Keep what this read leaves for later judgements (written only when it changed); when the
        ranges it lends changed, judge the spreadsheets that compare with them again."""
        before = self.state.history.get(plan.id)
        record = self.state.health.get(plan.id)
        zone = zone_of(plan, record.time_zone if record else None)  # as its values were judged in
        after = recorded(plan.checks, plan.links, before, results, value_ranges, now, zone)
        if after is None:
            if before is not None:
                del self.state.history[plan.id]
            return
        if before is None or replace(before, read_at=after.read_at) != after:
            self.state.history[plan.id] = after
        if after.lent != (before.lent if before else {}):
            for dependent in self.plans.values():
                if depends_on(dependent.links, plan.id):
                    self._judge_cross_again(dependent, now)
                    if compares_keys_with(dependent.checks, dependent.links, plan.id):
                        self._read_again(rnd, dependent, now)

    def _read_again(self, rnd: Round, plan: SheetPlan, now: datetime) -> None:
        """A keys check's spreadsheet, whose keys are not kept, read again: in this round when this
        round read it already (before the keys it compares with: reads in flight together), else marked
        changed, as Drive's report would be, for the next round."""
        record = self.state.health.get(plan.id)
        if record is None or record.read_at is None:
            return  # never read: its first read compares
        if record.read_at >= rnd.started_at and rnd.requeue_now(plan.id):
            return
        if record.changed_at is None:
            self.state.health[plan.id] = marked_changed(record, now)

    def _judge_cross_again(self, plan: SheetPlan, now: datetime) -> None:
        record, mine = self.state.health.get(plan.id), self.state.history.get(plan.id)
        if record is None or record.read_at is None or mine is None or plan.id in self.state.dlq:
            return  # never read, or failing: its own read judges it
        verdict, findings = rejudged_cross(plan.checks, record.findings, mine, self.past_for(plan))
        findings = located(findings, record.tabs)
        if (verdict, findings) == (record.health, record.findings):
            return
        self.state.health[plan.id], change = record_verdict(record, verdict, now, findings,
                                                                   self.settings.history_keep)
        self._tell(plan, change, findings, now)

    def learned_zone(self, plan: SheetPlan, name: str, tabs: tuple[Tab, ...], now: datetime) -> None:
        """Keep the time zone Google just gave for the spreadsheet, and when to ask again. Google
        answered: that counts for the whole-API breaker as any answer does."""
        self._google_answered(now)
        self.state.health[plan.id] = with_zone(self.state.health.get(plan.id), plan.id, name, now, tabs)

    def judged_unread(self, plan: SheetPlan, now: datetime) -> None:
        """Judge an unchanged spreadsheet again from its last read (its freshness checks age); the
        record is rewritten only when its verdict or findings moved."""
        record = self.state.health[plan.id]
        judged = rejudged(plan, record, now)
        if judged is None:
            return
        verdict, findings = judged[0], located(judged[1], record.tabs)  # as the read that found them
        if (verdict, findings) == (record.health, record.findings):
            return
        self.state.health[plan.id], change = record_verdict(record, verdict, now, findings,
                                                                   self.settings.history_keep)
        self._tell(plan, change, findings, now)

    def _tell(self, plan: SheetPlan, change: Change | None, findings: tuple[Finding, ...], now: datetime
              ) -> None:
        if change is not None and is_alerting(change):
            self._emit(HealthChanged(
                at=now, run_id=self.run_id, spreadsheet_id=plan.id, name=plan.name, tags=plan.tags,
                previous=change.previous, current=change.current, findings=findings[:FINDINGS_TOLD],
                down_for_seconds=change.down_for_seconds,
            ))

    # -- a read that failed ------------------------------------------------------------------------

    def failed(self, rnd: Round, task: Task, plan: SheetPlan, credential: str, error: SheetReadError,
               now: datetime, *, sent_at: float | None = None) -> Fate:
        """Record the failure; return what became of the task (a :class:`Fate`). ``sent_at``: when
        the pacer counted its request (epoch seconds), which tells a 429's pacing what it follows."""
        info = error.info()
        if error.extra_requests:
            self.pacer.count_unpaced(credential, self._epoch_seconds(), error.extra_requests)
        if error.credential_problem is not None or error.credential_refused:
            return self._credential_failed(rnd, task, credential, error, now)
        if error.error_class is ErrorClass.QUOTA:
            self.report.count(RunCounts(quota_refusals=1))
            scope = error.quota_scope or QuotaScope.UNKNOWN
            wait = self.pacer.record_quota_error(credential, self._epoch_seconds(), scope, sent_at=sent_at)
            rnd.record_quota_wait(task, now, info, now + timedelta(seconds=wait))
            return Fate.QUOTA_WAIT
        decision = retry.decide(error.error_class, task.attempts, now, self.rng)
        if decision.retry and error.details_needed:  # the question was short: ask again, at once
            decision = replace(decision, next_attempt_at=now, delay_seconds=0.0)
        rnd.record_failure(task, now, info, decision.attempts)
        opened = stop = False
        if decision.counts_for_breaker:
            opened = self._breaker_failure(plan, now, error.error_class)
            # A retry failing again tells of its own spreadsheet, not of Google: only first tries (and
            # the probe of a run that found Google degraded) feed the whole-API breaker. Otherwise
            # the retries of a few hanging sheets, which come due together at a round's end, look
            # like an outage.
            if decision.attempts == 1 or self.api.probe_required:
                stop = self._google_failed(plan.id, now, info)
        else:
            self._google_answered(now)  # a 400/403/404 or loading cells: Google did answer
        if stop:
            # Google itself is failing: this task is not the spreadsheet's fault; keep it for later.
            rnd.retry_at(task, decision.next_attempt_at or now)
            return Fate.API_DEGRADED
        if decision.counts_for_breaker:
            self._read_failed(plan, info, now)
        if not decision.retry:
            self.dead_letter(rnd, task, plan, info, now)
            return Fate.DEAD_LETTERED
        if not opened:
            rnd.retry_at(task, decision.next_attempt_at)
            self.report.count(RunCounts(retries_scheduled=1, retries_by_class={error.error_class.value: 1}))
            return Fate.RETRY
        # Attempts remain but the breaker now guards the spreadsheet: the next round probes it after
        # the cooldown.
        rnd.give_up_for_round(task)
        self.state.health[plan.id] = record_skip(self.state.health.get(plan.id), "breaker_open")
        return Fate.PAUSED

    def _read_failed(self, plan: SheetPlan, error: ErrorInfo, now: datetime) -> None:
        """One more failed read in the spreadsheet's streak; failing once the streak is old enough."""
        record = record_failed_read(self.state.health.get(plan.id), error, now)
        self.state.health[plan.id] = record
        self.judge_unreadable(plan, now)

    def judge_unreadable(self, plan: SheetPlan, now: datetime) -> None:
        """A spreadsheet whose reads fail (also one its breaker keeps skipping, which no read judges)
        becomes failing once they have failed for ``unreadable_after``: told once, as a health change."""
        record = self.state.health.get(plan.id)
        if record is None or record.unreadable is None:
            return
        judged, change = judge_streak(record, now, self.settings.unreadable_after, self.settings.history_keep)
        if judged is not record:
            self.state.health[plan.id] = judged
            self._tell(plan, change, judged.findings, now)

    def _credential_failed(self, rnd: Round, task: Task, credential: str, error: SheetReadError,
                           now: datetime) -> Fate:
        """The credential could not read, not the spreadsheet (monitor.engine.credentials): no attempt
        counted, no breaker; the task is due again at once, for another credential."""
        if error.credential_problem is not None:
            self.pacer.retire(credential)
            self.state.credentials = credentials.refused(self.state.credentials, error.credential_problem,
                                                         now, self.run_id, self._emit)
        else:
            # Google refused the key this once: now and then it does, for a moment; repeated, it
            # becomes the credential's problem above. Never the spreadsheet's, nor Google failing.
            self.pacer.pause(credential, self._epoch_seconds() + credentials.REFUSED_PAUSE_SECONDS)
        rnd.record_quota_wait(task, now, error.info(), now)
        return Fate.CREDENTIAL_REFUSED

    def credential_worked(self, credential: str, now: datetime) -> None:
        """A request with ``credential`` was answered: a refusal told before is over."""
        if self.state.credentials.refused:
            self.state.credentials = credentials.worked(self.state.credentials, credential, now, self.run_id,
                                                        self._emit)

    def dead_letter(self, rnd: Round, task: Task, plan: SheetPlan, error: ErrorInfo, now: datetime) -> None:
        self.report.count(RunCounts(dead_lettered=1))
        rnd.fail(task)
        record, _ = record_verdict(self.state.health.get(plan.id), ERROR, now, (), self.settings.history_keep)
        self.state.health[plan.id] = record
        if self.state.dlq.record(plan.id, plan.name, task, error, now):
            self._emit(DeadLettered(
                at=now, run_id=self.run_id, spreadsheet_id=plan.id, name=plan.name, tags=plan.tags,
                error=error, attempts=task.attempts,
            ))

    # -- breakers ----------------------------------------------------------------------------------

    def breaker_blocks(self, plan: SheetPlan, now: datetime) -> bool:
        """True while the spreadsheet's breaker is open and its probe is not yet due (no state change)."""
        stored = self.state.breakers.get(plan.id)
        return stored is not None and stored.blocks(now)

    def breaker_let_through(self, plan: SheetPlan, now: datetime) -> breaker.BreakerState | None:
        """Record that a request goes out (an open breaker's probe is now in flight); returns the
        stored breaker as it was, None when there was none."""
        stored = self.state.breakers.get(plan.id)
        if stored is not None:
            _, allowed = breaker.allow(stored, now)
            if allowed is not stored:
                self.state.breakers[plan.id] = allowed
        return stored

    def give_back_probe(self, plan: SheetPlan, before: breaker.BreakerState | None) -> None:
        """A refusal for quota, or cells still loading, says nothing about the spreadsheet: a probe it
        used up is given back, or the sheet would be skipped for another cooldown."""
        if before is not None:
            self.state.breakers[plan.id] = before

    def _breaker_success(self, plan: SheetPlan, now: datetime) -> None:
        stored = self.state.breakers.get(plan.id)
        if stored is None:
            return
        updated, transitions = breaker.record_success(stored, now)
        if updated.is_healthy:
            del self.state.breakers[plan.id]  # a healthy breaker needs no storage
        else:
            self.state.breakers[plan.id] = updated
        self._breaker_events(plan, transitions, now)

    def _breaker_failure(self, plan: SheetPlan, now: datetime, error_class: ErrorClass) -> bool:
        current = self.state.breakers.get(plan.id) or breaker.BreakerState()
        updated, transitions = breaker.record_failure(current, now, self.settings.breaker, error_class)
        self.state.breakers[plan.id] = updated
        self._breaker_events(plan, transitions, now)
        return updated.state is breaker.OPEN

    def _breaker_events(self, plan: SheetPlan, transitions: list[breaker.Transition], now: datetime) -> None:
        for transition in transitions:
            sheet = {"at": now, "run_id": self.run_id, "spreadsheet_id": plan.id, "name": plan.name,
                     "tags": plan.tags}
            if isinstance(transition, breaker.Opened):
                event: Event = BreakerOpened(
                    **sheet, opened_at=transition.opened_at, cooldown_seconds=transition.cooldown_seconds,
                    consecutive_failures=transition.consecutive_failures, probe_at=transition.probe_at,
                )
            else:
                event = BreakerClosed(
                    **sheet, first_opened_at=transition.first_opened_at, down_seconds=transition.down_seconds
                )
            self._emit(event)
            log_event(event.KIND, logging.WARNING, spreadsheet_id=plan.id)

    # -- the whole API -----------------------------------------------------------------------------

    def _google_answered(self, now: datetime) -> None:
        recovered = self.api.record_answer(now)
        if recovered is not None:
            self.state.api = self.api.state  # saved with this task: a kill must not forget it
            self._emit(ApiRecovered(at=now, run_id=self.run_id, degraded_since=recovered.degraded_since))

    def _google_failed(self, spreadsheet_id: str, now: datetime, error: ErrorInfo) -> bool:
        """Feed the whole-API breaker; True when the run must stop because Google itself is failing."""
        stop, degraded = self.api.record_failure(spreadsheet_id, now)
        if degraded is not None:
            # Stored at once, not at the end of the run: a run killed now must leave the next one
            # starting with a single probe.
            self.state.api = self.api.state
            failing = len(degraded.failed_spreadsheets)
            self._emit(ApiDegraded(at=now, run_id=self.run_id, failing_in_a_row=failing, last_error=error))
            log_event("api_degraded", logging.ERROR, failing_in_a_row=failing)
        if stop:
            self.report.outcome = RunOutcome.DEGRADED
        return stop
