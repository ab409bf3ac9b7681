"""The time-boxed run: recover, maybe start a round, then keep reads in flight until the budget is spent.

``Run`` is the whole algorithm over injected parts: a clock, the reads in flight
(``monitor.engine.inflight``), a quota pacer, the state, and a ``save`` callback that writes what
changed atomically. It keeps up to ``max_in_flight`` reads in flight while the quota's window has
room (``monitor.engine.concurrency``), and changes the state on its own thread only: a read's result
is applied when it is collected, with the time it is applied. It never prints, never exits, and never
waits past the point where enough budget is left to save and hand events over. What a task's result
does to the state is ``monitor.engine.task_results``; when saves happen is ``monitor.engine.checkpoints``.
"""

from __future__ import annotations

import logging
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, tzinfo

from monitor.core.errors import ErrorClass, SheetReadError
from monitor.core.logs import log_event
from monitor.engine.api_health import ApiHealth
from monitor.engine.change_detection import ChangeDetection, ChangeFeed, marked_changed
from monitor.engine.checkpoints import Checkpoints
from monitor.engine.concurrency import (
    FIRST_READ_HOLD_SECONDS,
    LatencyEstimate,
    OwnPace,
    first_reads_out,
    grid_reads_in_flight,
    reads_worth_keeping_out,
)
from monitor.engine.events import CrashRecovered, Event, FallingBehind
from monitor.engine.fleet import Fleet
from monitor.engine.health import record_skip
from monitor.engine.heartbeat import Heartbeat, RunOutcome, RunStats, RunSummary, StopReason
from monitor.engine.incidents import incident_id, settle_incidents
from monitor.engine.inflight import InFlight, ReadDone, ReadJob, Reads
from monitor.engine.inspect import SheetData, SheetPlan, explaining_requests, judge, sheets_requests, zone_of
from monitor.engine.listening import LISTEN_SLICE_SECONDS, Listener
from monitor.engine.overdue import answer_due, answered
from monitor.engine.pacer import QuotaPacer
from monitor.engine.retry import is_last_try
from monitor.engine.round_order import progress_of, round_order
from monitor.engine.run_counts import RunCounts
from monitor.engine.runlog import add_run, record_of
from monitor.engine.runner_state import RetryFirst, RunnerState
from monitor.engine.settings import RunSettings
from monitor.engine.sharing import Alone, Claim, Sharing
from monitor.engine.task_results import Fate, RunReport, TaskResults
from monitor.engine.tasks import PROCESSING, Round, Task
from monitor.engine.unconfigured import forget_unconfigured
from monitor.engine.zone_refresh import zone_due

# A read out this many times the usual latency (and at least this many seconds) is taken for hanging:
# a suspect whose own answer time is unknown is given that long.
_STUCK_AFTER_TIMES = 5
_STUCK_AFTER_SECONDS = 2.0
# A wait shorter than this is no wait: the clock may not move by it (floating point), and nothing in a
# run is timed finer.
_WAIT_AT_LEAST = 0.001


def _detailed(task: Task) -> bool:
    """A read that found values not known yet is tried again with Google's details (engine.inspect)."""
    return task.last_error is not None and task.last_error.error_class == ErrorClass.LOADING


def _timed_out(seconds: float) -> SheetReadError:
    """A read that outlived its timeout, as the reader says one that ran out (monitor.google.reader)."""
    return SheetReadError(ErrorClass.TRANSIENT, None, None, f"no answer within {seconds:.1f} s")


class Run:
    def __init__(
        self,
        *,
        run_id: str,
        settings: RunSettings,
        plans: Sequence[SheetPlan],
        state: RunnerState,
        reads: Reads,
        pacer: QuotaPacer,
        clock,
        save: Callable[[], None],
        rng: random.Random | None = None,
        changes: ChangeFeed | None = None,
        sharing: Sharing | None = None,
        listener: Listener | None = None,
        tell: Callable[[], None] | None = None,
    ) -> None:
        self.run_id = run_id
        self.listener = listener  # the chat, answered between steps (monitor.engine.listening)
        # Hands the run's events to the notifier while the run goes on watching Drive's feed, so what
        # a read found is told within the minute, not at the run's end (the app's notify step).
        self.tell = tell
        self.events_told = 0  # of report.events
        self.watching = False  # the round's work is done: waiting for the feed to report an edit
        self.rng = rng or random.Random()
        self.sharing = sharing or Alone()
        self.stale = False  # a claim found the round replaced: the next step takes a turn
        self.looked_for_dead = False  # the end of the round's work: once, for runs that died
        self.settings = settings
        self.plans = {plan.id: plan for plan in plans}
        self.state = state
        self.reads = reads
        self.in_flight: dict[str, InFlight] = {}  # out, or answered and not yet applied
        self.answered_reads: deque[ReadDone] = deque()  # collected, applied one a step
        self.peak_in_flight = 0
        self.answered: set[str] = set()  # credentials that had a read back: their token is fetched
        self.pacer = pacer
        self.clock = clock
        self.started_monotonic = clock.monotonic()
        self.deadline = self.started_monotonic + settings.budget.total_seconds()
        self.report = RunReport(run_id=run_id)
        self.checkpoints = Checkpoints(save, clock.monotonic, settings.checkpoint_every)
        self.task_results = TaskResults(
            run_id=run_id, state=state, settings=settings, pacer=pacer,
            api=ApiHealth(state.api, threshold=settings.api_degraded_after), report=self.report,
            emit=self.emit, epoch_seconds=clock.time, rng=self.rng, plans=self.plans,
        )
        self.detection = ChangeDetection(changes, state, run_id, self.emit)
        last = state.heartbeat.stats if state.heartbeat else None
        self.latency = LatencyEstimate(last.mean_read_seconds if last else None)
        self.own_pace = OwnPace(clock.monotonic)

    # -- the whole run ---------------------------------------------------------------------------

    def execute(self) -> RunReport:
        self.begin()
        while self.step():
            pass
        self.drain()
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
        with self.sharing.turn() as mine:
            if mine:  # else another runner's turn is doing it now
                self._recover_abandoned(now)
                forget_unconfigured(self.state, self.plans.keys(), now, self.run_id, self.emit)
            self.checkpoints.save(force=True)
        log_event("run_started", run_id=self.run_id, budget_s=self.settings.budget.total_seconds(),
                  **({"runner": self.sharing.runner} if self.sharing.shared else {}))

    def end(self) -> None:
        now = self.clock.now()
        report = self.report
        report.duration_seconds = round(self.clock.monotonic() - self.started_monotonic, 3)
        counts = report.counts = report.counts.rounded()
        sent = sum(counts.reads_by_credential.values())
        if report.outcome is RunOutcome.OK and not (counts.tasks_done or report.zones_read) and (
                sent > report.reads_of_failing or counts.quota_refusals
                or self.pacer.held_by_quota_errors(self.clock.time())):
            # Not one spreadsheet could be read: too short a run to trip the whole-API breaker, but
            # the watchdog must still see runs that achieve nothing, those that Google's quota kept
            # from reading (its 429s, or the wait one left) too. Reads of spreadsheets known to be
            # failing do not count: a quiet round may read nothing else (monitor.engine.change_detection).
            report.outcome = RunOutcome.DEGRADED
        self.state.dlq.prune(now)
        rnd = self.state.round
        mean = self.latency.mean
        stats = RunStats(
            counts=counts, duration_seconds=report.duration_seconds, stop_reason=report.stop_reason,
            round=progress_of(rnd) if rnd else None,
            mean_read_seconds=round(mean, 3) if mean is not None else None,
            concurrency=self.peak_in_flight or None,
        )
        heartbeat = replace(self.state.heartbeat, finished_at=now, outcome=report.outcome, stats=stats)
        self.state.heartbeat = heartbeat
        self.state.totals = self.state.totals.add(report.outcome.value, counts)  # the counters' totals
        self.state.runs = self.state.runs.add(
            RunSummary(self.run_id, heartbeat.started_at, now, report.outcome)
        )
        fleet = Fleet.of(self.state, self.plans, now, self.settings.maintenance)
        add_run(self.state.runlog, record_of(heartbeat, fleet.counts(), report.edit_lags), now,
                self.settings.history_keep,
                self.sharing.runner if self.sharing.shared else "")
        self.state.quota = self.pacer.snapshot(self.clock.time())
        self.state.api = self.task_results.api.state
        self._reconcile_incidents(now)
        self.checkpoints.save(force=True)
        log_event(
            "run_finished", run_id=self.run_id, outcome=report.outcome, stop_reason=report.stop_reason,
            tasks=counts.tasks, duration_ms=int(report.duration_seconds * 1000),
        )

    def _reconcile_incidents(self, now: datetime) -> None:
        """Incidents as this run leaves the fleet, before the notifier reads them; in a turn beside
        other runners, so two of them never open two incidents for one spreadsheet."""
        with self.sharing.turn() as mine:
            if mine:
                settle_incidents(self.state, {sid: plan.name for sid, plan in self.plans.items()}, now,
                                 lambda: incident_id(self.rng))
            if self.sharing.shared:
                self.checkpoints.save(force=True)  # before the turn's lock goes (alone: the run's last save)

    # -- one step ----------------------------------------------------------------------------------

    def step(self) -> bool:
        """Apply finished reads, then start one read, skip one task, or wait; False when the run should
        stop starting reads (:meth:`drain` then collects those still in flight)."""
        self._collect(0)
        if self.listener is not None and self.listener.waiting():
            with self.own_pace.waiting():  # the chat's time, not the reads'
                self.listener.answer()
        if self.report.stop_reason:
            return False
        now = self.clock.now()
        usable = self._usable_seconds()
        if usable < self.settings.min_request_seconds:
            # A request cut shorter than this would mostly time out and be blamed on the spreadsheet.
            return self._stop(StopReason.BUDGET)
        if self.detection.due_to_ask(now, self.settings.change_poll) and not (
                self.sharing.shared and self.in_flight):  # a turn re-reads the round: none may be out
            self._watch_feed(now)
        rnd = self._current_round(now)
        if rnd is None:
            if self.report.counts.tasks == 0:
                self.report.outcome = RunOutcome.NOTHING_TO_DO
            if self.detection.watches(self.settings.change_poll):
                return self._wait_for_feed(now, usable)
            return self._stop(StopReason.ROUND_DONE)
        if self._watch_progress(rnd, now):
            return True  # the state was read again in a turn: start the step over
        if self._busy() or self._alone_in_flight():
            return self._wait(None, usable)
        return self._next_step_of(rnd, now, usable)

    def _next_step_of(self, rnd: Round, now: datetime, usable: float) -> bool:
        """The round's next task read, skipped or waited for; False when the round's work is done."""
        task, alone, suspect_in = self._next_task(rnd, now)
        if task is None:
            due = rnd.next_retry_at()
            waits = [wait for wait in ((due - now).total_seconds() if due else None, suspect_in)
                     if wait is not None]
            if not waits and not self.in_flight:
                return self._look_for_dead_runs(rnd, now) or self._stop(StopReason.ROUND_DONE)
            return self._wait(min(waits, default=None), usable)
        if self.sharing.shared and not self._claim(rnd, task):
            return True  # another runner has it: the next one
        return self._read_or_skip(rnd, task, alone, now, usable)

    def _read_or_skip(self, rnd: Round, task: Task, alone: bool, now: datetime, usable: float) -> bool:
        """Start ``task``'s read, or skip it (muted, its breaker open), or wait for a quota slot."""
        plan = self.plans[task.target]
        if self.state.mute_skips_reads(plan.id, now):
            self._skip(rnd, task, plan, now, "muted")
            return True
        if self.task_results.breaker_blocks(plan, now):
            self._skip(rnd, task, plan, now, "breaker_open")
            self.task_results.judge_unreadable(plan, now)  # no read judges it while its breaker is open
            log_event("task_skipped", task_id=task.id, spreadsheet_id=plan.id, status="breaker_open")
            self.checkpoints.save()
            return True

        # Dates are judged in the spreadsheet's own zone: asked with its first read that needs it,
        # then about daily (monitor.engine.zone_refresh), in the request that reads the values.
        fetch_zone = plan.needs_time_zone and zone_due(self.state.health.get(plan.id), now)
        if self._grid_reads_full(fetch_zone or _detailed(task)):
            if self.sharing.shared:
                rnd.release(task)  # claimed, but not read now: saved pending, another runner may take it
            return self._wait(None, usable)  # until a read comes back
        sent_at = self.clock.time()
        requests = sheets_requests(plan)  # a slot for each Sheets request it sends
        credential, wait, follow_ups = self._acquire(sent_at, requests, plan)
        if credential is None:
            if self.sharing.shared:
                rnd.release(task)  # claimed, but not read now: saved pending, another runner may take it
            if not self.pacer.usable:  # every credential refused: nothing can be read (told as such)
                return self._stop(StopReason.NO_USABLE_CREDENTIAL)
            return self._wait(wait, usable)
        # Only now, with a request certain to go out, may an open breaker's probe be spent.
        breaker_before = self.task_results.breaker_let_through(plan, now)
        self._start(rnd, InFlight(task, plan, credential, breaker_before, alone, sent_at,
                                  fetch_zone=fetch_zone, requests=max(1, requests), follow_ups=follow_ups))
        return True

    def _acquire(self, sent_at: float, requests: int, plan: SheetPlan) -> tuple[str | None, float, int]:
        """A credential for ``plan``'s read, the wait when none has room, and the requests it may send
        without a slot (a refused range's tab titles), room kept for them (``acquire_with_room``)."""
        held = self._fetching_tokens()
        credential, wait, follow_ups = self.pacer.acquire_with_room(
            sent_at, requests, explaining_requests(plan), exclude=held, spare=self._may_explain())
        if credential is None:
            wait = min([wait, *held.values()])  # or until a held credential's first read was out long enough
        return credential, wait, follow_ups

    def _watch_feed(self, now: datetime) -> None:
        """Ask Drive's feed again and put what changed first in the round under way, saved with the
        feed's new position in one save: a run killed before it asks again from the old one. A round
        over and due to be followed is left alone: the next round asks the feed as it starts."""
        with self.sharing.turn() as mine:
            rnd = self.state.round
            if not mine or rnd is None or not rnd.continues(now, self.settings.round_interval):
                return
            if not self.detection.due_to_ask(now, self.settings.change_poll):
                return  # another runner asked meanwhile: what it queued is in the round just read
            before = self.detection.drive_requests
            with self.own_pace.waiting():  # Drive's time, not the reads'
                changed = self.detection.watch(self.plans, now, self._request_timeout())
            queued = [sid for sid in sorted(changed) if rnd.read_first(sid, now)]
            if queued:
                self.watching = False
                if self.report.outcome is RunOutcome.NOTHING_TO_DO:
                    self.report.outcome = RunOutcome.OK  # it has work again
            self.checkpoints.save(force=True)
            log_event("feed_watched", changed=len(changed), queued=len(queued),
                      drive_requests=self.detection.drive_requests - before)

    def _wait_for_feed(self, now: datetime, usable: float) -> bool:
        """The round's work is done and the feed is watched: tell what was found, then wait for the
        next look at the feed."""
        self.watching = True
        if self.tell is not None and self.report.events > self.events_told and not self.in_flight:
            self.events_told = self.report.events
            self._reconcile_incidents(now)  # the alert's buttons are its open incidents'
            self.tell()
        asked = self.state.feed.asked_at or now
        due = (asked + self.settings.change_poll - self.clock.now()).total_seconds()
        return self._wait(max(due, _WAIT_AT_LEAST), usable)

    def _claim(self, rnd: Round, task: Task) -> bool:
        """Lease ``task`` to this run against the other runners; False when one of them changed it
        (the round now holds theirs) or replaced the round (the next step takes a turn)."""
        claim = self.sharing.claim(task, replace(task, status=PROCESSING, run_id=self.run_id))
        if claim is Claim.GRANTED:
            rnd.start(task, self.run_id)
            return True
        self.stale = claim is Claim.ROUND_GONE
        return False

    def _look_for_dead_runs(self, rnd: Round, now: datetime) -> bool:
        """Nothing left but tasks other runs hold: once, a turn reclaims those of runs that died."""
        if not self.sharing.shared or self.looked_for_dead or not rnd.counts()[PROCESSING]:
            return False
        self.looked_for_dead = True
        with self.sharing.turn() as mine:
            if mine:
                self._recover_abandoned(now)
        return mine

    def _next_task(self, rnd: Round, now: datetime) -> tuple[Task | None, bool, float | None]:
        """(the task to start, whether it goes alone, seconds until a suspect may go when none can now).

        Due retries and fresh tasks first; a quarantined one only with nothing else in flight, and
        not in the run's first seconds (``suspects_after``): read first thing, a spreadsheet never
        read before would be in flight whenever runs are cut short early (a deploy, an overlapping
        cron line, a crash loop elsewhere), and a kill then counts against it (monitor.engine.tasks).
        Unless the budget is too short for that: when the time left after those seconds would cut
        its read shorter than its answer takes, it goes at once. Waiting would leave it unread in
        every run, and its round open for good."""
        task = rnd.next_due(now)
        suspect = None if task is not None or self.in_flight else rnd.next_quarantined()
        if suspect is None:
            return task, False, None
        wait = self.settings.suspects_after - (self.clock.monotonic() - self.started_monotonic)
        if wait > 0:
            due = answer_due(self.state.health.get(suspect.target)) or self._stuck_seconds()
            if self._usable_seconds() - wait < min(due, self.settings.request_timeout):
                wait = 0.0
        return (suspect, True, None) if wait < _WAIT_AT_LEAST else (None, False, wait)

    def drain(self) -> None:
        """Collect the reads still in flight. Each had its timeout cut to the usable budget when it
        started, so each has had all its time by the end of the budget; one still out then (a server
        dripping its answer, a timeout a moment late) has outlived it, and fails as a timeout does:
        counted, blamed, retried. Given back without blame, a spreadsheet that never answers within
        a short budget would stay unjudged, holding its round open, run after run."""
        until = self.deadline - self.settings.reserve_seconds
        while self.in_flight and (left := until - self.clock.monotonic()) > 0:
            self._collect(left)
        self._apply(list(self.answered_reads))  # answered in time, however late it is now
        self.answered_reads.clear()
        ended = self.clock.monotonic()
        self._apply([ReadDone(flight.job, None, _timed_out(ended - flight.started), ended)
                     for flight in self.in_flight.values()])

    def _start(self, rnd: Round, flight: InFlight) -> None:
        task = flight.task
        rnd.start(task, self.run_id if self.sharing.shared else None)
        requests = flight.requests  # Sheets requests, the quota they spend
        self.report.count(RunCounts(tasks=1, reads_by_credential={flight.credential: requests},
                                    reads_by_project={self.pacer.project_of(flight.credential): requests}))
        self.report.reads_of_failing += self.state.is_failing(task.target)
        # The lease is on disk before the request goes out: if the process dies during it, the next
        # run must know which reads were in flight (how many, for the poison guard).
        self.checkpoints.save(force=True)
        if not self.in_flight:
            self.own_pace.first_out()
        flight.started = self.clock.monotonic()
        due = answer_due(self.state.health.get(task.target))
        flight.overdue_at = None if due is None else flight.started + due
        self.in_flight[task.id] = flight
        self.peak_in_flight = max(self.peak_in_flight, len(self.in_flight))
        flight.job = ReadJob(task.id, flight.plan, flight.credential, flight.started,
                             fetch_zone=flight.fetch_zone, detailed=_detailed(task),
                             explain=flight.follow_ups > 0)
        self.reads.start(flight.job, self._request_timeout)
        self._collect(0)  # whatever has finished meanwhile (this read, if it was quick)

    def _skip(self, rnd: Round, task: Task, plan: SheetPlan, now: datetime, reason: str) -> None:
        rnd.skip(task, now, reason)
        self.state.health[plan.id] = record_skip(self.state.health.get(plan.id), reason)

    def _collect(self, wait_seconds: float) -> None:
        """Apply the reads that finish within ``wait_seconds``, waking early to mark a read alone in
        flight whose answer becomes overdue."""
        alone = self._alone_and_due()
        if alone is not None:
            wait_seconds = min(wait_seconds, max(0.0, alone.overdue_at - self.clock.monotonic()))
        if not self.answered_reads:
            with self.own_pace.waiting():
                self.answered_reads.extend(self.reads.collect(wait_seconds))
        if self.answered_reads:
            # One at a time, the next step's read sent between two: applying a batch of answers
            # whole would leave the reads out idle meanwhile, and the next batch would come together.
            self._apply([self.answered_reads.popleft()])
        self._mark_overdue()

    def _alone_and_due(self) -> InFlight | None:
        """The read in flight, when it is the only one and its answer's time is known. Only a kill
        with one read in flight may count against it (monitor.engine.tasks), so only then does its
        being overdue matter; a read that outlasts the others is marked once they are done."""
        if len(self.in_flight) != 1:
            return None
        flight = next(iter(self.in_flight.values()))
        return flight if flight.overdue_at is not None else None

    def _mark_overdue(self) -> None:
        """Mark on its task the read alone in flight once it is out longer than its spreadsheet's
        answers take, saved at once: a kill from now on may be its doing, and the next run must know."""
        flight = self._alone_and_due()
        now = self.clock.monotonic()
        if flight is None or flight.overdue_at >= now + _WAIT_AT_LEAST:
            return
        flight.overdue_at = None
        self.state.round.mark_overdue(flight.task)
        log_event("read_overdue", task_id=flight.task.id, spreadsheet_id=flight.plan.id,
                  out_ms=int((now - flight.started) * 1000))
        self.checkpoints.save(force=True)

    def _apply(self, finished: list[ReadDone]) -> None:
        """Judge each finished read and record what it means, at the time it is applied: a retry's
        backoff counts from when the failure became known, not from when the request started."""
        for done in finished:
            done = done.decoded()
            flight = self.in_flight.pop(done.job.task_id)
            self.answered.add(flight.credential)
            self.latency.add(done.seconds)
            self.report.count(RunCounts.read_time(done.seconds))
            self._counted_by(flight, done)
            self._settle(flight, done)
        if finished:
            self.checkpoints.save()
            self.own_pace.applied(len(finished))

    def _counted_by(self, flight: InFlight, done: ReadDone) -> None:
        """Tell the pacer when the read's answer came (Google counted its requests by then; a 429's
        were not counted at all: the pacer takes those out itself), and when its request began to
        go (what the margin's guess counts from)."""
        refused = isinstance(done.error, SheetReadError) and done.error.error_class is ErrorClass.QUOTA
        if flight.sent_at is not None and not refused:
            now, monotonic = self.clock.time(), self.clock.monotonic()
            answered_at = now - max(0.0, monotonic - done.finished)
            left_at = None if done.began is None else now - max(0.0, monotonic - done.began)
            self.pacer.answered(flight.credential, flight.sent_at, answered_at, flight.requests,
                                left_at=left_at)

    def _settle(self, flight: InFlight, done: ReadDone) -> None:
        task, plan, rnd = flight.task, flight.plan, self.state.round
        now = self.clock.now()
        try:
            if done.error is not None:
                raise done.error
            self.task_results.credential_worked(flight.credential, now)
            if done.data.time_zone is not None:
                self._zone_read(flight, done.data, now)
            results = judge(plan, done.data, now, self._zone(plan),
                            last_try=is_last_try(ErrorClass.LOADING, task.attempts),
                            past=self.task_results.past_for(plan))
        except SheetReadError as error:
            if error.error_class in (ErrorClass.QUOTA, ErrorClass.LOADING):
                # Neither says whether the spreadsheet can be read; a probe spent on one is given back,
                # or the retry would find the breaker half-open and skip the sheet for a cooldown.
                self.task_results.give_back_probe(plan, flight.breaker_before)
            self._failed(rnd, flight, error, now, done.seconds)
        except Exception as exc:  # noqa: BLE001 - one odd spreadsheet must never stop the other 699
            log_event("task_crashed", logging.ERROR, exc_info=exc, task_id=task.id, spreadsheet_id=plan.id)
            error = SheetReadError(ErrorClass.UNCERTAIN, None, None, f"could not evaluate: {exc!r}"[:300])
            self._failed(rnd, flight, error, now, done.seconds)
        else:
            reported = self._reported_during(flight)
            verdict = self.task_results.succeeded(rnd, task, plan, results, now, done.data.value_ranges,
                                              read_seconds=done.seconds)
            if reported is not None:  # its answer may predate that edit: read it again, first
                self.state.health[plan.id] = marked_changed(self.state.health[plan.id], reported)
                rnd.read_first(plan.id, now)
            findings = sum(1 for result in results if result.is_finding)
            log_event("task_done", task_id=task.id, spreadsheet_id=plan.id, attempt=task.attempts,
                      status=verdict, findings=findings, duration_ms=int(done.seconds * 1000))

    def _reported_during(self, flight: InFlight) -> datetime | None:
        """When Drive's feed reported its spreadsheet changed while ``flight`` was out, if it did."""
        record = self.state.health.get(flight.plan.id)
        changed_at = record.changed_at if record is not None else None
        sent = datetime.fromtimestamp(flight.sent_at, UTC)
        return changed_at if changed_at is not None and changed_at > sent else None

    def _zone_read(self, flight: InFlight, data: SheetData, now: datetime) -> None:
        """The read gave the spreadsheet's time zone: kept before its values are judged in it. A name
        this machine cannot read fails the read (monitor.engine.inspect.zone_of)."""
        zone_of(flight.plan, data.time_zone)
        self.task_results.learned_zone(flight.plan, data.time_zone, data.tabs, now)
        self.report.zones_read += 1

    def _zone(self, plan: SheetPlan) -> tzinfo:
        """The zone ``plan``'s dates are judged in: the one its record keeps (read before the values,
        when due)."""
        record = self.state.health.get(plan.id)
        return zone_of(plan, record.time_zone if record else None)

    def _failed(self, rnd: Round, flight: InFlight, error: SheetReadError, now: datetime, seconds: float
                ) -> None:
        task = flight.task
        fate = self.task_results.failed(rnd, task, flight.plan, flight.credential, error, now,
                                    sent_at=flight.sent_at)
        fields = {
            "task_id": task.id, "spreadsheet_id": task.target, "name": flight.plan.name,
            "attempt": task.attempts,
            "status": error.http_status, "error": error.message, "duration_ms": int(seconds * 1000),
        }
        if fate is Fate.QUOTA_WAIT:
            retry_in = (task.next_attempt_at - now).total_seconds()
            log_event("task_quota_wait", logging.WARNING, **fields, retry_in_s=round(retry_in, 1),
                      quota=error.quota_scope or "unknown")
        elif fate is Fate.CREDENTIAL_REFUSED:
            log_event("credential_refused", logging.ERROR, **fields, credential=flight.credential)
        elif fate is Fate.API_DEGRADED:
            log_event("task_retry", logging.WARNING, **fields, reason="api_degraded")
            self._stop(StopReason.API_DEGRADED)
        elif fate is Fate.DEAD_LETTERED:
            log_event("task_failed", logging.ERROR, **fields)
        elif fate is Fate.RETRY:
            retry_in = (task.next_attempt_at - now).total_seconds()
            log_event("task_retry", logging.WARNING, **fields, retry_in_s=round(retry_in, 1))

    def _busy(self) -> bool:
        """Are as many reads in flight as may be? Up to the ceiling: the pacer grants each read a slot
        only if its window has one now, so a window's allowance goes as fast as reads can be sent and
        the rest wait for slots to free, never at the workers; and no more than this thread takes in
        as they come back (monitor.engine.concurrency)."""
        if len(self.in_flight) >= self._worth_keeping_out():
            return True
        return self.task_results.api.probe_required and bool(self.in_flight)  # Google was failing: one probe

    def _grid_reads_full(self, grid: bool) -> bool:
        """Would a read with grid data (``grid``) exceed the ones allowed in flight at once (their
        answers are the heavy ones: monitor.engine.concurrency)?"""
        if not grid:
            return False
        out = sum(1 for flight in self.in_flight.values() if flight.job is not None
                  and (flight.job.fetch_zone or flight.job.detailed))
        return out >= grid_reads_in_flight(self._worth_keeping_out())

    def _worth_keeping_out(self) -> int:
        """The ceiling, or fewer: what this thread applies as they come back (monitor.engine.concurrency)."""
        return reads_worth_keeping_out(self.latency.value, self.own_pace.per_read,
                                       self.settings.max_in_flight)

    def _fetching_tokens(self) -> dict[str, float]:
        """Credentials whose first read is out, fetching their token, with the seconds until it has
        been out long enough: until then another read of theirs waits (monitor.engine.concurrency)."""
        out = ((flight.credential, flight.started) for flight in self.in_flight.values())
        return first_reads_out(out, self.answered, self.clock.monotonic(), FIRST_READ_HOLD_SECONDS)

    def _may_explain(self) -> dict[str, int]:
        """By credential, the requests the reads out may yet send without a slot (a refused range's
        tab titles, monitor.engine.inspect), for which its windows keep room."""
        out: dict[str, int] = {}
        for flight in self.in_flight.values():
            out[flight.credential] = out.get(flight.credential, 0) + flight.follow_ups
        return out

    def _stuck_seconds(self) -> float:
        """How long a read may be out before it is taken for hanging, at the latency seen so far."""
        return max(_STUCK_AFTER_SECONDS, _STUCK_AFTER_TIMES * self.latency.value)

    def _alone_in_flight(self) -> bool:
        return any(flight.alone for flight in self.in_flight.values())

    # -- rounds, recovery, progress ----------------------------------------------------------------

    def _current_round(self, now: datetime) -> Round | None:
        rnd = self.state.round
        if rnd is not None and not rnd.is_complete() and not self.stale:
            return rnd
        # Exactly one runner starts each round: in its turn, having read what the others did.
        with self.sharing.turn() as mine:
            self.stale = False
            if mine and self.sharing.shared:
                self._recover_abandoned(now)
            rnd = self.state.round
            if rnd is not None and rnd.continues(now, self.settings.round_interval):
                return None if rnd.is_complete() else rnd
            return self._next_round(now) if mine else None

    def _next_round(self, now: datetime) -> Round | None:
        candidates = round_order(self.state, self.plans, now)
        if not candidates:
            return None
        targets, unread = self.detection.select(candidates, self.plans, now, self.settings.round_interval,
                                                self._request_timeout())
        for plan_id in unread:
            self.task_results.judged_unread(self.plans[plan_id], now)
        rnd = self.state.round = Round.build(targets, now, unread=len(unread))
        if self.state.retry_first.spreadsheet_ids:
            self.state.retry_first = RetryFirst()  # taken: it applied to this one round
        log_event("round_started", round_id=rnd.id, tasks=len(targets), unread=len(unread),
                  drive_requests=self.detection.drive_requests)
        return rnd if targets else None  # nothing changed: judged already, the round is complete

    def _recover_abandoned(self, now: datetime) -> None:
        rnd = self.state.round
        if rnd is None:
            return
        reclaimed, poisoned = rnd.reclaim_abandoned(
            now, self.sharing.dead if self.sharing.shared else None,
            answered=lambda target: answered(self.state.health.get(target)))
        for task in reclaimed:  # read again: the one way a spreadsheet is read twice in a round
            log_event("task_reclaimed", task_id=task.id, spreadsheet_id=task.target,
                      interruptions=task.interruptions)
        if reclaimed or poisoned:
            self.emit(CrashRecovered(
                at=now, run_id=self.run_id, previous_run_id=self.state.heartbeat.previous_run_id,
                reclaimed=len(reclaimed), poisoned=len(poisoned),
            ))
            log_event("crash_recovered", logging.WARNING, reclaimed=len(reclaimed), poisoned=len(poisoned))
        for task in poisoned:
            plan = self.plans.get(task.target)
            if plan is not None:
                self.task_results.dead_letter(rnd, task, plan, task.last_error, now)

    def _watch_progress(self, rnd: Round, now: datetime) -> bool:
        """Tell once per round that it is falling behind. Beside other runners, only in a turn (the
        round's document is written in turns only: else a runner still on an older round could write
        it back), taken once no read is in flight; True when a turn read the state again."""
        limit = self.settings.round_interval * self.settings.behind_after_intervals
        if now - rnd.started_at <= limit or rnd.info.behind_reported:
            return False
        if not self.sharing.shared:
            self._tell_behind(rnd, now)
            return False
        if self.in_flight:
            return False
        with self.sharing.turn() as mine:
            fresh = self.state.round
            if mine and fresh is not None and fresh.id == rnd.id and not fresh.info.behind_reported:
                self._tell_behind(fresh, now)
        return True

    def _tell_behind(self, rnd: Round, now: datetime) -> None:
        rnd.mark_behind_reported()
        self.emit(FallingBehind(at=now, run_id=self.run_id, round_id=rnd.id, round_started_at=rnd.started_at,
                                done=rnd.finished(), total=len(rnd)))

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

    def _wait(self, seconds: float | None, usable: float) -> bool:
        """Wait until work may be due (``seconds``; None: until a read finishes), never past the usable
        budget. With reads in flight, a read that finishes ends the wait early."""
        limit = usable if seconds is None else min(max(seconds, 0.0), usable)
        if self.listener is not None:
            limit = min(limit, LISTEN_SLICE_SECONDS)  # a press is answered between two such waits
        if self.in_flight:
            self.checkpoints.save_owed()
            self._collect(min(limit, self.checkpoints.owed_in()))
            return True
        self.checkpoints.save(force=True)  # nothing happens while asleep: make the progress durable first
        if self.listener is not None:
            self.listener.wait(limit)  # wakes for the chat; the next step looks at the budget again
            return True
        if seconds is None or seconds >= usable:
            self.clock.sleep(max(usable, 0))
            return self._stop(StopReason.BUDGET)
        self.clock.sleep(limit)
        return True

    def _stop(self, reason: StopReason) -> bool:
        if reason is StopReason.BUDGET and self.watching:
            reason = StopReason.WATCHED  # the round's work was done: the rest of the budget watched the feed
        self.report.stop_reason = self.report.stop_reason or reason
        return False
