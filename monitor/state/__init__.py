"""The runner's state: typed documents, the one repository that maps them onto a store, and how every
process opens them (``access``). See docs/architecture.md, "State"."""

from monitor.state.access import (
    NOTIFY_LOCK,
    ROUND_LOCK,
    StateSession,
    admin_lock,
    changing_state,
    own_lock,
    read_state,
    read_state_with_repairs,
    run_lock_held,
    shares_state,
)
from monitor.state.whole import Damage, State

__all__ = ["NOTIFY_LOCK", "ROUND_LOCK", "Damage", "State", "StateSession", "admin_lock", "changing_state",
           "own_lock", "read_state", "read_state_with_repairs", "run_lock_held", "shares_state"]
