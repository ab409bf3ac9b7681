"""The runner's state: typed documents, the one repository that maps them onto a store, and how every
process opens them (``access``). See docs/architecture.md, "State"."""

from monitor.state.access import (
    StateSession,
    changing_state,
    read_state,
    read_state_with_repairs,
    run_lock_held,
)
from monitor.state.state import Damage, State

__all__ = ["Damage", "State", "StateSession", "changing_state", "read_state", "read_state_with_repairs",
           "run_lock_held"]
