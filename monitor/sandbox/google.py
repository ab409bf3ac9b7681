"""The fake Google API as one HTTP app: the order in which a request meets each concern.

    control (/_sandbox/...) -> token endpoint -> route -> authentication -> injected fault
    -> quota (the caller's project) -> the endpoint's handler -> stats -> latency

Latency is decided last because an answer's size is part of it; it holds every answer of the Google
API (errors and the token endpoint included, as Google takes its time for those too), never the
control API's, and it adds to any latency a fault asked for.

Each concern lives in its own module; this file only fixes their order and shares their state.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field

from monitor.core.clock import SystemClock

from . import control, errors
from .auth import TokenAuthority
from .faults import FaultPlan
from .http import Request, Response
from .latency import GOOGLE, Latency
from .projects import project_of
from .quota import QuotaMeter
from .routes import match_route
from .stats import ANONYMOUS, Stats
from .store import SpreadsheetStore


@dataclass
class GoogleSandbox:
    clock: object = field(default_factory=SystemClock)  # .now() aware UTC, .time() epoch seconds
    read_per_user: int = 60
    read_per_project: int = 300
    write_per_user: int = 60
    write_per_project: int = 300
    seed: int = 0  # of random faults and of the latency draws
    require_auth: bool = True
    # "google" (Google's answer times, see latency.py), "off", or a scale of the Google model (0.1:
    # a tenth of each draw). On by default: a test that needs speed says "off". After construction
    # ``self.latency`` is the live ``Latency`` (its switches and counts).
    latency: InitVar[object] = GOOGLE

    def __post_init__(self, latency: object) -> None:
        self.store = SpreadsheetStore(self.clock)
        self.auth = TokenAuthority(self.clock)
        self.quota = QuotaMeter(
            self.clock,
            read_per_user=self.read_per_user,
            read_per_project=self.read_per_project,
            write_per_user=self.write_per_user,
            write_per_project=self.write_per_project,
        )
        self.faults = FaultPlan(seed=self.seed)
        self.stats = Stats()
        self.latency = Latency(latency, seed=self.seed)

    def reset(self) -> None:
        """Forget data, faults, quota windows and stats, and restart the latency draws from their
        seed; issued credentials and the latency and quota settings stay."""
        self.store.reset()
        self.faults.clear()
        self.quota.reset()
        self.stats.reset()
        self.latency.reset()

    def __call__(self, request: Request) -> Response:
        if request.raw_path.startswith("/_sandbox/"):
            return control.handle(self, request)
        response = self._answer(request)
        if not response.hang:  # a held request never answers: there is nothing to delay
            response.delay_seconds += self.latency.delay(len(response.body))
        return response

    def _answer(self, request: Request) -> Response:
        if request.raw_path == "/token":
            return self.auth.token_endpoint(request)

        route = match_route(request)
        if route.response is not None:  # unknown path or wrong method, already in Google's shape
            self.stats.record(route.endpoint, route.response.status, None)
            return route.response

        user = self.auth.authenticate(request)
        if user is None and self.require_auth:
            response = errors.unauthenticated()
            self.stats.record(route.endpoint, response.status, None)
            return response

        delay, fault_response = self.faults.take(route.spreadsheet_id)
        if fault_response is not None:
            fault_response.delay_seconds += delay
            self.stats.record(route.endpoint, fault_response.status, user)
            return fault_response

        if route.api == "sheets":
            refusal = self.quota.admit(user or ANONYMOUS, route.kind, project_of(user))
            if refusal is not None:
                refusal.delay_seconds += delay
                self.stats.record(route.endpoint, refusal.status, user)
                return refusal

        response = route.handler(self, request, route)
        response.delay_seconds += delay
        self.stats.record(route.endpoint, response.status, user)
        return response
