"""A proposal's checks as the config's check models: what `check URL` judges a spreadsheet the config
does not list by, and how a proposal is held to the config's own validation."""

from __future__ import annotations

from monitor.checks import Check
from monitor.checks.kinds import CHECK_KINDS

from .propose import Proposal


def check_models(proposal: Proposal) -> tuple[Check, ...]:
    """The proposal's checks that are switched on, validated by their kinds' models (a
    ``pydantic.ValidationError`` would be a mistake of the proposing code, not of any input)."""
    return tuple(CHECK_KINDS[s.check["kind"]].model_validate(s.check) for s in proposal.checks if s.enabled)
