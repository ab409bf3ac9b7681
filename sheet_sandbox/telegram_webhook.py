"""The fake Bot API's ``setWebhook``, ``deleteWebhook`` and ``getWebhookInfo``: enough of a webhook
to put a bot in webhook mode, where getUpdates answers 409 (telegram-bot-api's
``Client::process_set_webhook_query``, ``do_set_webhook``, ``JsonWebhookInfo`` and
``WebhookActor::start_up``; docs/sandbox.md, "Webhooks").

The fake never delivers to the webhook: updates stay pending (``pending_update_count``) until the
webhook is deleted, with or without ``drop_pending_updates``. A URL is checked as the server does
before it connects: HTTPS only, ports 80, 88, 443 or 8443, no reserved or IPv6 address; a host name
is taken as it is (the fake resolves nothing).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from .http import Response
from .telegram_errors import bad_request, ok, too_many_requests
from .telegram_model import Bot
from .telegram_params import integer_arg, to_bool
from .telegram_polling import TERMINATED_BY_WEBHOOK, end_poll
from .telegram_updates import DEFAULT_ALLOWED, Receiving, Webhook, allowed_updates, mailbox, ordered

DEFAULT_MAX_CONNECTIONS = 40
_PORTS = (80, 88, 443, 8443)


def set_webhook(fake: Receiving, bot: Bot, params: dict[str, str], delete: bool) -> Response:
    box = mailbox(fake, bot)
    now = fake.clock.time()
    url = "" if delete else params.get("url", "")
    if url:
        if now < box.next_set_webhook_at:
            raise too_many_requests(1)
        box.next_set_webhook_at = now + 1.0
    drop = to_bool(params.get("drop_pending_updates"))
    wanted = Webhook(url, integer_arg(params, "max_connections", DEFAULT_MAX_CONNECTIONS, 1, 100),
                     params.get("secret_token", ""), params.get("ip_address", "")) if url else None
    if wanted == box.webhook and not drop:
        _allow(box, params)
        return _answer("Webhook is already set" if url else "Webhook is already deleted")
    if url:
        end_poll(fake, box, TERMINATED_BY_WEBHOOK)
    had_webhook = box.webhook is not None
    box.webhook = None
    if drop:
        box.queue.clear()
    if not url:
        return _answer("Webhook was deleted" if had_webhook else "Webhook is already deleted")
    _check_url(url, wanted.secret_token)
    _allow(box, params)
    box.webhook = wanted
    return _answer("Webhook was set")


def webhook_info(fake: Receiving, bot: Bot) -> Response:
    box = mailbox(fake, bot)
    hook = box.webhook
    info: dict = {
        "url": hook.url if hook else "",
        "has_custom_certificate": False,
        "pending_update_count": box.queue.pending(fake.clock.time()),
    }
    if hook is not None:
        info["max_connections"] = hook.max_connections
        info["ip_address"] = hook.ip_address or "<unknown>"
    if box.allowed != DEFAULT_ALLOWED:
        info["allowed_updates"] = ordered(box.allowed)
    return ok(info)


def _allow(box, params: dict[str, str]) -> None:
    allowed = allowed_updates(params.get("allowed_updates"))
    if allowed is not None:
        box.allowed = allowed


def _answer(description: str) -> Response:
    return Response.json(200, {"ok": True, "result": True, "description": description})


def _check_url(url: str, secret_token: str) -> None:
    try:
        parts = urlsplit(url if "://" in url else "https://" + url)
        port = parts.port or (80 if parts.scheme == "http" else 443)
    except ValueError:
        raise bad_request("invalid webhook URL specified") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise bad_request("invalid webhook URL specified")
    if len(secret_token) > 256:
        raise bad_request("secret token is too long")
    if any(not (ch.isascii() and (ch.isalnum() or ch in "_-")) for ch in secret_token):
        raise bad_request("secret token contains unallowed characters")
    if parts.scheme == "http":
        raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
    if port not in _PORTS:
        raise bad_request("bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443")
    host = "127.0.0.1" if parts.hostname == "localhost" else parts.hostname
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return  # a host name: taken as it is
    if address.version == 6:
        raise bad_request("bad webhook: IPv6-only addresses are not allowed")
    if not address.is_global:
        raise bad_request(f"bad webhook: IP address {address} is reserved")
