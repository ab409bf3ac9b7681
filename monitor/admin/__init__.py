"""The operators' library: what `status`, `sheets`, `dlq`, `breakers`, `mute` and `check-config` report
and change, as pure functions over the state (and the config) with ``now`` passed in.

Nothing here prints, reads a clock or touches the store: the CLI reads or opens the state, calls
these, saves, and prints what they return.
"""

from monitor.admin.errors import AdminError, unknown_id_message
from monitor.admin.mutations import breaker_reset, dlq_purge, dlq_retry, mute, unmute
from monitor.admin.plan import config_plan
from monitor.admin.reports import (
    FEED_FAILING,
    FEED_NO_POSITION,
    FEED_OFF,
    FEED_OK,
    breakers_list,
    dlq_list,
    dlq_show,
    edit_lag_text,
    fleet_of,
    sheets_report,
    status_report,
)
from monitor.engine.fleet import MAINTENANCE, MUTED, SHOWN_ORDER

__all__ = [
    "FEED_FAILING", "FEED_NO_POSITION", "FEED_OFF", "FEED_OK", "MAINTENANCE", "MUTED", "SHOWN_ORDER",
    "AdminError", "breaker_reset", "breakers_list", "config_plan",
    "dlq_list", "dlq_show", "dlq_purge", "dlq_retry", "fleet_of", "mute", "sheets_report",
    "status_report", "edit_lag_text", "unknown_id_message", "unmute",
]
