"""The Google Cloud projects behind the sandbox's service accounts.

Google counts the per-project Sheets quotas per Cloud project, and a service account belongs to the
project named in its email (``NAME@PROJECT.iam.gserviceaccount.com``). The sandbox issues accounts in
one project by default, or spread over several (``sandbox serve --projects P``), so that a monitor
with credentials in several projects meets one project window per project, as it would at Google.
"""

from __future__ import annotations

import hashlib

DEFAULT_PROJECT_ID = "sheet-monitor-sandbox"
# The number Google's quota errors name for the default project ("consumer 'project_number:...'"):
# the one in the recorded 429 bodies, so those stay byte for byte what Google sent.
DEFAULT_PROJECT_NUMBER = "603366585132"
_SERVICE_ACCOUNT_DOMAIN = ".iam.gserviceaccount.com"


def project_of(user: str | None) -> str:
    """The project whose quota a request of ``user`` (a token's email) counts against.

    A service account's project is in its email; anyone else (a test's made-up email, or no user
    when the sandbox runs without authentication) counts against the default project.
    """
    if user:
        _, _, domain = user.rpartition("@")
        if domain.endswith(_SERVICE_ACCOUNT_DOMAIN):
            project = domain[: -len(_SERVICE_ACCOUNT_DOMAIN)]
            if project:
                return project
    return DEFAULT_PROJECT_ID


def project_number(project_id: str) -> str:
    """The 12-digit project number Google's errors name for ``project_id``; stable across runs."""
    if project_id == DEFAULT_PROJECT_ID:
        return DEFAULT_PROJECT_NUMBER
    digest = int.from_bytes(hashlib.sha256(project_id.encode()).digest()[:8], "big")
    return str(10**11 + digest % (9 * 10**11))


def project_ids(count: int) -> list[str]:
    """Names for ``count`` projects: the default one alone, else ``DEFAULT-1`` ... ``DEFAULT-count``."""
    if count < 1:
        raise ValueError(f"project count must be at least 1, got {count}")
    if count == 1:
        return [DEFAULT_PROJECT_ID]
    return [f"{DEFAULT_PROJECT_ID}-{n}" for n in range(1, count + 1)]


def spread(credentials: int, projects: int) -> list[str]:
    """The project of each of ``credentials`` accounts over ``projects`` projects, in contiguous blocks.

    Blocks are as even as they can be, larger ones first: 10 over 2 is 5 + 5, 7 over 3 is 3 + 2 + 2.
    Raises ValueError when a project would get no account.
    """
    if projects > credentials:
        raise ValueError(
            f"{credentials} credential(s) cannot be spread over {projects} projects: "
            "every project needs at least one account"
        )
    names = project_ids(projects)
    size, larger = divmod(credentials, projects)
    result: list[str] = []
    for index, name in enumerate(names):
        result.extend([name] * (size + (1 if index < larger else 0)))
    return result
