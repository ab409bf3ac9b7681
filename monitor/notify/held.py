"""Messages held while Telegram refused their chat go as one, saying why they are late.

While a chat is halted (a revoked token, the bot removed: ``monitor.notify.outbox``), each run still
composes its message, and they pile up in the outbox. Sent one by one once the chat works again,
they arrived as a burst of stale news with the reason for the delay last. So before each pass the
waiting messages of a halted chat are joined into as few messages as Telegram takes (usually one),
and the message that goes first says under which refusal, since when, it was held.
"""

from __future__ import annotations

from dataclasses import replace

from monitor.notify.buttons import joined_keyboards
from monitor.notify.destinations import Destination, destination_of, halt_of
from monitor.notify.documents import SENT_KEYS_KEPT, Halt, Outbox, PendingMessage
from monitor.notify.messages import esc, fingerprint, split_message, utc_text
from monitor.notify.settings import COMPOSED_MAX_LENGTH

HELD_PREFIX = "held:"  # the key of joined messages


def held_note(halt: Halt) -> str:
    """Put above the first message Telegram takes after refusing its chat."""
    what = f"{halt.status}: {halt.description}" if halt.status is not None else halt.description
    return (f"📵 <i>Held back since {utc_text(halt.at)}: Telegram refused this chat ({esc(what, 200)}). "
            "What follows came late, oldest first.</i>")


def gather_held(outbox: Outbox) -> Outbox:
    """The outbox with each halted destination's waiting messages joined, oldest first, into as few
    messages as fit (each leaving room for the notes delivery puts above a message).

    A destination with one waiting message is left as it is, so gathering again changes nothing.
    Left apart too: the message whose request may have reached Telegram (``Outbox.sending``: it goes
    again as itself, marked as a possible repeat), and one Telegram refused for itself (a bad
    message must not take the others down with it; outbox.py decides its fate as for any message).
    The joined messages' keys are kept with the sent ones, so that composing one of them again after
    a crash is recognised as done."""
    groups: dict[Destination, list[PendingMessage]] = {}
    for entry in outbox.pending:
        refused_alone = entry.last_error is not None and entry.last_error.scope == "message"
        if (entry.key != outbox.sending and not refused_alone
                and halt_of(outbox, destination_of(entry).chat_key) is not None):
            groups.setdefault(destination_of(entry), []).append(entry)
    groups = {destination: entries for destination, entries in groups.items() if len(entries) > 1}
    if not groups:
        return outbox
    pending: list[PendingMessage] = []
    joined: list[str] = []
    for entry in outbox.pending:
        group = groups.get(destination_of(entry), ())
        if entry not in group:
            pending.append(entry)
        elif entry is group[0]:  # the group takes the place of its oldest message
            pending += _joined(group)
            joined += [member.key for member in group]
    return replace(outbox, pending=tuple(pending), sent_keys=(*outbox.sent_keys, *joined)[-SENT_KEYS_KEPT:])


def _joined(group: list[PendingMessage]) -> list[PendingMessage]:
    first = group[0]
    key = HELD_PREFIX + fingerprint([entry.key for entry in group])
    parts = split_message("\n\n".join(entry.text for entry in group), COMPOSED_MAX_LENGTH)
    keys = [key] if len(parts) == 1 else [f"{key}#{n}/{len(parts)}" for n in range(1, len(parts) + 1)]
    attempts = max(entry.attempts for entry in group)
    rows = joined_keyboards(entry.keyboard for entry in group)
    return [replace(first, key=key_n, text=part, attempts=attempts, keyboard=rows if n == len(parts) else ())
            for n, (key_n, part) in enumerate(zip(keys, parts, strict=True), start=1)]
