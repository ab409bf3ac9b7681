"""The buttons under an alert: what each row offers, and the data a press sends back, signed.

Every alert line (and reminder line) about one spreadsheet with an open incident gets a row:
*Acknowledge*, *Mute 1h*, *Mute 1d*, *Mute until fixed* (or *Unmute* while muted), *Check again*.
A message about one spreadsheet gets its actions on two rows with full words; one about several gets
a row each, led by the spreadsheet's name.

A press reaches the bot as ``callback_query.data``, which a client can set to anything (the Bot API
says so): it is untrusted. The data is ``<action>:<incident id>:<signature>``, 23 bytes, the
signature an HMAC of the action and the incident made with a key derived from the bot token (never
stored): data nobody signed, or signed for another action or incident, is refused. What a valid
signature cannot say (the chat, the message) is checked against the incident itself: the press
counts only on a message that told that incident (``Incident.told``, filled from Telegram's own
answers), so the data of one message, replayed on another or in another chat, acts on nothing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass

from monitor.engine.incidents import Incident
from monitor.notify.documents import Button, Keyboard

ACK, MUTE_HOUR, MUTE_DAY, MUTE_FIXED, UNMUTE, CHECK = "a", "h", "d", "f", "u", "c"
ACTIONS = (ACK, MUTE_HOUR, MUTE_DAY, MUTE_FIXED, UNMUTE, CHECK)
# The words of each action on a message about one spreadsheet, and on a row of several.
_WORDS = {ACK: "✔ Acknowledge", MUTE_HOUR: "🔕 1 hour", MUTE_DAY: "🔕 1 day", MUTE_FIXED: "🔕 Until fixed",
          UNMUTE: "🔔 Unmute", CHECK: "🔄 Check again"}
_SHORT = {MUTE_HOUR: "🔕 1h", MUTE_DAY: "🔕 1d", MUTE_FIXED: "🔕 fixed", UNMUTE: "🔔", CHECK: "🔄"}
ROWS_AT_MOST = 10  # rows of spreadsheets under one message: 50 buttons, within Telegram's 100
_NAME_SHOWN = 18  # characters of a spreadsheet's name on its row's first button
_SIGNATURE_BYTES = 9  # 12 characters of base64: forging one is a 2**72 guess


@dataclass(frozen=True)
class Offer:
    """A spreadsheet a message names, with its open incident and whether it is muted now."""

    incident: Incident
    muted: bool = False


class Signer:
    """Signs and checks a button's data with a key derived from the bot token."""

    def __init__(self, bot_token: str) -> None:
        self._key = hmac.new(bot_token.encode(), b"sheet-monitor buttons v1", hashlib.sha256).digest()

    def data(self, action: str, incident_id: str) -> str:
        return f"{action}:{incident_id}:{self._signature(action, incident_id)}"

    def verify(self, data: str) -> tuple[str, str] | None:
        """(action, incident id) of data this signer signed, None for anything else."""
        action, _, rest = data.partition(":")
        incident_id, _, signature = rest.partition(":")
        if action not in ACTIONS or not incident_id or not signature:
            return None
        if not hmac.compare_digest(signature, self._signature(action, incident_id)):
            return None
        return action, incident_id

    def _signature(self, action: str, incident_id: str) -> str:
        mac = hmac.new(self._key, f"{action}:{incident_id}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac[:_SIGNATURE_BYTES]).decode()


def keyboard(offers: list[Offer], signer: Signer) -> Keyboard:
    """The rows under a message naming ``offers`` (the first ``ROWS_AT_MOST``); () for none."""
    offers = offers[:ROWS_AT_MOST]
    if not offers:
        return ()
    if len(offers) == 1:
        return _rows_for_one(offers[0], signer)
    return tuple(_row(offer, signer) for offer in offers)


def actions_of(offer: Offer) -> list[str]:
    """What a spreadsheet's row offers now: no Acknowledge once acknowledged, Unmute while muted."""
    actions = [] if offer.incident.acknowledged else [ACK]
    actions += [UNMUTE] if offer.muted else [MUTE_HOUR, MUTE_DAY, MUTE_FIXED]
    return [*actions, CHECK]


def _rows_for_one(offer: Offer, signer: Signer) -> Keyboard:
    actions = actions_of(offer)
    first = [a for a in actions if a in (ACK, CHECK)]
    second = [a for a in actions if a not in (ACK, CHECK)]
    rows = [[Button(_WORDS[a], signer.data(a, offer.incident.id)) for a in part] for part in (first, second)]
    return tuple(tuple(row) for row in rows if row)


def _row(offer: Offer, signer: Signer) -> tuple[Button, ...]:
    incident = offer.incident
    name = incident.name if len(incident.name) <= _NAME_SHOWN else incident.name[: _NAME_SHOWN - 1] + "…"
    buttons = []
    for action in actions_of(offer):
        text = f"✔ {name}" if action == ACK else _SHORT[action]
        buttons.append(Button(text, signer.data(action, incident.id)))
    if buttons[0].text != f"✔ {name}":  # acknowledged already: the name leads all the same
        buttons[0] = Button(f"{buttons[0].text} {name}", buttons[0].data)
    return tuple(buttons)


def incidents_of(rows: Keyboard) -> list[str]:
    """The incident ids a keyboard's buttons name, in order, once each (its data's middle part)."""
    return list(dict.fromkeys(button.data.split(":")[1] for row in rows for button in row))


def joined_keyboards(keyboards) -> Keyboard:
    """The rows of several messages' keyboards as one message's: an incident's rows once (a reminder
    naming what the alert above it names adds nothing), at most ``ROWS_AT_MOST`` rows."""
    rows: list[tuple[Button, ...]] = []
    seen: set[str] = set()
    for rows_of_one in keyboards:
        named = set(incidents_of(rows_of_one))
        if named and named <= seen:
            continue
        seen |= named
        rows += rows_of_one
    return tuple(rows[:ROWS_AT_MOST])


def buttons_in_text(rows: Iterable[Iterable[str]]) -> str:
    """Rows of buttons (their texts) as printed where no phone draws them: "[a] [b] / [c]"."""
    return " / ".join(" ".join(f"[{text}]" for text in row) for row in rows)
