"""Credentials that cannot read at all: which ones, since when, told once per episode.

A key that does not load, or one Google's token service refuses for good (``invalid_grant``: the
account or the key is gone; ``monitor.google.refusals``), is no spreadsheet's fault and not Google
failing: the run stops giving it out (the pacer retires it), gives the task back without an attempt,
and the other credentials carry on. People hear it once, when the credential is first refused, and
once more when a read with it works again. Each run tries such a credential once: a new key in the
same file needs no other step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from monitor.core.errors import CredentialProblem
from monitor.core.timefmt import UtcTime
from monitor.core.tracking import document
from monitor.engine.events import CredentialRefused, CredentialWorksAgain, Event

# A credential whose key Google refused once waits this long before its next read: a refusal that
# passes has passed by then, one that repeats is told sooner than if each read waited a backoff.
REFUSED_PAUSE_SECONDS = 5.0


@document
class RefusedCredential:
    credential: str  # the key file's path, as configured
    email: str | None
    since: UtcTime
    problem: str


@document
class CredentialsState:
    """The credentials refused now, by the run that found it (none: all read, as far as is known)."""

    refused: tuple[RefusedCredential, ...] = ()

    def get(self, credential: str) -> RefusedCredential | None:
        return next((entry for entry in self.refused if entry.credential == credential), None)


def refused(state: CredentialsState, problem: CredentialProblem, now: datetime, run_id: str,
            emit: Callable[[Event], None]) -> CredentialsState:
    """``state`` with ``problem``'s credential refused; told when its episode starts."""
    if state.get(problem.credential) is not None:
        return state
    emit(CredentialRefused(at=now, run_id=run_id, credential=problem.credential, email=problem.email,
                           problem=problem.problem, fix=problem.fix))
    entry = RefusedCredential(problem.credential, problem.email, now, problem.problem)
    return replace(state, refused=(*state.refused, entry))


def worked(state: CredentialsState, credential: str, now: datetime, run_id: str,
           emit: Callable[[Event], None]) -> CredentialsState:
    """``state`` after a request with ``credential`` was answered: its episode, if any, ends."""
    entry = state.get(credential)
    if entry is None:
        return state
    emit(CredentialWorksAgain(at=now, run_id=run_id, credential=credential, email=entry.email,
                              refused_since=entry.since))
    return replace(state, refused=tuple(e for e in state.refused if e.credential != credential))
