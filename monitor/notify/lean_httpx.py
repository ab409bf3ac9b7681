"""httpx imported without its command-line client: imported before httpx by the modules that use it.

``import httpx`` tries to import ``httpx._main``, the ``httpx`` command's code, and with rich and
pygments installed (other tools bring them) that loads ~75 modules, ~3.6 MB that a run carried from
its first message to its end, when its memory peaks. A module that is ``None`` in ``sys.modules``
cannot be imported, so for the length of httpx's own import ``httpx._main`` is ``None``: httpx then
defines its ``main`` as it does without those packages (it says how to install them). The entry is
removed afterwards, so a later ``import httpx._main`` gets the real module.

``client()`` makes the monitor's httpx clients, all on one TLS context per process: an httpx client
builds its own otherwise, loading the CA bundle again (~0.1 s of CPU), whether or not it ever opens an
https connection. The context is httpx's default (certifi, or SSL_CERT_FILE / SSL_CERT_DIR), built
once; Python's TLS contexts are meant to be shared by the connections they open.
"""

from __future__ import annotations

import functools
import ssl
import sys

_CLI = "httpx._main"


def import_httpx() -> None:
    """Import httpx without its command-line client (nothing when httpx is loaded already)."""
    if "httpx" in sys.modules:
        return
    sys.modules[_CLI] = None  # type: ignore[assignment]
    try:
        import httpx  # noqa: F401
    finally:
        if _CLI in sys.modules and sys.modules[_CLI] is None:
            del sys.modules[_CLI]


import_httpx()


@functools.cache
def _tls() -> ssl.SSLContext:
    import httpx

    return httpx.create_ssl_context()


def client(**options):
    """A new ``httpx.Client(**options)`` verifying TLS as httpx does by default, on this process's
    one TLS context."""
    import httpx

    return httpx.Client(verify=_tls(), **options)
