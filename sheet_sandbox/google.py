"""The fake Google API as one HTTP app: the order in which a request meets each concern.

    Drive's due edits shown (feed delay) -> control (/_sandbox/...) -> token endpoint (its own
    faults first) -> route -> authentication (no credential: 403; a token not accepted: 401; too
    few scopes: 403) -> injected fault -> quota (the caller's project; Sheets' or Drive's) -> the
    endpoint's handler -> stats -> latency

Latency is decided last because an answer's size is part of it; it holds every answer of the Google
API (errors and the token endpoint included, as Google takes its time for those too), never the
control API's, and it adds to any latency a fault asked for.

Each concern lives in its own module; this file only fixes their order and shares their state.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field

from monitor.core.clock import SystemClock

from . import control, errors
from .auth import EXPIRED, MISSING, Caller, TokenAuthority
from .drive_quota import DEFAULT_PER_PROJECT, DEFAULT_PER_USER, DriveQuotaMeter
from .faults import TOKEN, FaultPlan, as_drive_answers
from .feed_delay import FeedDelay
from .http import Request, Response
from .latency import Latency
from .projects import project_of
from .quota import QuotaMeter
from .routes import Route, match_route
from .scopes import method_auth
from .stats import ANONYMOUS, Stats
from .store import SpreadsheetStore
from .switches import GOOGLE


@dataclass
class GoogleSandbox:
    clock: object = field(default_factory=SystemClock)  # .now() aware UTC, .time() epoch seconds
    read_per_user: int = 60
    read_per_project: int = 300
    write_per_user: int = 60
    write_per_project: int = 300
    drive_per_user: int = DEFAULT_PER_USER
    drive_per_project: int = DEFAULT_PER_PROJECT
    seed: int = 0  # of random faults, of the latency draws and of the feed delay's moments
    require_auth: bool = True
    # "google" (Google's answer times, see latency.py), "off", or a scale of the Google model (0.1:
    # a tenth of each draw). On by default: a test that needs speed says "off". After construction
    # ``self.latency`` is the live ``Latency`` (its switches and counts).
    latency: InitVar[object] = GOOGLE
    # The same for Drive's change-feed delay (see feed_delay.py): "google" (a spreadsheet's edits
    # reach changes.list and modifiedTime every 3 minutes per file, as at Google), "off" (at once),
    # or a scale of the Google model. On by default: a test that needs an immediate feed says "off",
    # or moves its clock to ``self.feed_delay.settled_by()``.
    feed_delay: InitVar[object] = GOOGLE

    def __post_init__(self, latency: object, feed_delay: object) -> None:
        self.feed_delay = FeedDelay(feed_delay, seed=self.seed)
        self.store = SpreadsheetStore(self.clock, feed_delay=self.feed_delay)
        self.auth = TokenAuthority(self.clock)
        self.quota = QuotaMeter(
            self.clock,
            read_per_user=self.read_per_user,
            read_per_project=self.read_per_project,
            write_per_user=self.write_per_user,
            write_per_project=self.write_per_project,
        )
        self.drive_quota = DriveQuotaMeter(self.clock, per_user=self.drive_per_user,
                                           per_project=self.drive_per_project)
        # A permanent 403 on a spreadsheet is the sandbox's "access removed": Drive's change feed
        # reports the file removed, and back when the fault is cleared.
        self.faults = FaultPlan(seed=self.seed, on_access=self._access_changed)
        self.stats = Stats(self.clock.time)
        self.latency = Latency(latency, seed=self.seed)
        # What a loaded dataset broke in each spreadsheet (sheet_sandbox.dataset_files.apply), for
        # GET /_sandbox/spreadsheets: id -> {"title", "kind", "expect", "note"}.
        self.breakages: dict[str, dict] = {}

    def reset(self) -> None:
        """Forget data (and the edits Drive was still to show), faults, quota windows and stats, and
        restart the latency draws from their seed; issued credentials and the latency, feed-delay
        and quota settings stay."""
        self.faults.clear()
        self.store.reset()
        self.feed_delay.reset()
        self.breakages.clear()
        self.quota.reset()
        self.drive_quota.reset()
        self.stats.reset()
        self.latency.reset()

    def _access_changed(self, spreadsheet_id: str, removed: bool) -> None:
        if removed:
            self.store.remove_access(spreadsheet_id)
        else:
            self.store.restore_access(spreadsheet_id)

    def __call__(self, request: Request) -> Response:
        self.store.settle()  # whatever a request asks, Drive has shown the edits due by now
        if request.raw_path.startswith("/_sandbox/"):
            return control.handle(self, request)
        response = self._answer(request)
        if not response.hang:  # a held request never answers: there is nothing to delay
            response.delay_seconds += self.latency.delay(len(response.body))
        return response

    def _answer(self, request: Request) -> Response:
        if request.raw_path == "/token":
            return self._token(request)

        route = match_route(request)
        if route.response is not None:  # unknown path or wrong method, already in Google's shape
            self.stats.record(route.endpoint, route.response.status, None, route.spreadsheet_id)
            return route.response

        caller = self.auth.identify(request)
        refusal = _refusal(route, caller) if self.require_auth else None
        if refusal is not None:
            self.stats.record(route.endpoint, refusal.status, None, route.spreadsheet_id)
            return refusal
        user = caller.email

        delay, fault_response = self.faults.take(route.spreadsheet_id)
        if fault_response is not None:
            if route.api == "drive":
                fault_response = as_drive_answers(fault_response, route.spreadsheet_id)
            fault_response.delay_seconds += delay
            self.stats.record(route.endpoint, fault_response.status, user, route.spreadsheet_id)
            return fault_response

        if route.api == "sheets":
            refusal = self.quota.admit(user or ANONYMOUS, route.kind, project_of(user))
        else:
            refusal = self.drive_quota.admit(user or ANONYMOUS, project_of(user))
        if refusal is not None:
            refusal.delay_seconds += delay
            self.stats.record(route.endpoint, refusal.status, user, route.spreadsheet_id)
            return refusal

        response = route.handler(self, request, route)
        response.delay_seconds += delay
        self.stats.record(route.endpoint, response.status, user, route.spreadsheet_id)
        return response

    def _token(self, request: Request) -> Response:
        """``POST /token``, unless a fault aimed at it answers first (``"spreadsheet": "/token"``)."""
        delay, fault_response = self.faults.take(TOKEN)
        response = fault_response if fault_response is not None else self.auth.token_endpoint(request)
        response.delay_seconds += delay
        return response


def _refusal(route: Route, caller: Caller) -> Response | None:
    """Google's answer to a request whose credential does not let it through, else None: none at
    all is a 403 (Google then wants an API key), a token it does not accept a 401, and a token
    without a scope the method accepts a 403 naming the method."""
    if caller.problem == MISSING:
        return errors.missing_credentials(route.api)
    auth = method_auth(route.endpoint)
    if caller.problem is not None:
        reason = "ACCESS_TOKEN_EXPIRED" if caller.problem == EXPIRED else None
        return errors.unauthenticated(route.api, reason, auth.service, auth.method)
    if not caller.scopes & auth.scopes:
        return errors.insufficient_scopes(route.api, auth.service, auth.method)
    return None
