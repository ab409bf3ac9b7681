"""Credentials grouped by the Google Cloud project their key files name, and `max_concurrent_reads`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from config_fixtures import FULL, error_of, load, pem_key, secrets_folder

from monitor.config import UNREAD_PROJECT

THREE_KEYS = FULL.replace('credentials = ["secrets/sa-1.json", "secrets/sa-2.json"]',
                          'credentials = ["secrets/sa-1.json", "secrets/sa-2.json", "secrets/sa-3.json"]')


def paths(folder: Path, *numbers: int) -> tuple[Path, ...]:
    return tuple(folder.resolve() / f"secrets/sa-{n}.json" for n in numbers)


def test_two_key_files_in_two_projects_are_two_groups_each_with_its_own_project_quota(tmp_path):
    folder = secrets_folder(tmp_path, ("shop-east", "shop-west"))
    google = load(folder, FULL).google
    assert google.projects == {"shop-east": paths(folder, 1), "shop-west": paths(folder, 2)}
    assert google.project_of(paths(folder, 2)[0]) == "shop-west"
    assert google.reads_per_minute == 120


def test_the_project_quota_caps_each_project_separately(tmp_path):
    folder = secrets_folder(tmp_path, ("shop-east", "shop-east", "shop-west"))
    google = load(folder, THREE_KEYS.replace("project_read_requests_per_minute = 300",
                                             "project_read_requests_per_minute = 100")).google
    assert google.projects == {"shop-east": paths(folder, 1, 2), "shop-west": paths(folder, 3)}
    assert google.reads_per_minute == 100 + 60  # shop-east capped at 100, shop-west at its one key's 60


def test_an_older_key_without_project_id_joins_the_project_its_address_names(tmp_path):
    folder = secrets_folder(tmp_path, ("shop-east", "shop-east"))
    old = folder / "secrets/sa-2.json"
    key = json.loads(old.read_text())
    del key["project_id"]
    old.write_text(json.dumps(key))
    config = load(folder, FULL)
    assert config.google.projects == {"shop-east": paths(folder, 1, 2)}
    assert config.warnings == ()


def test_a_key_naming_no_project_is_paced_alone_and_check_config_says_so(tmp_path):
    folder = secrets_folder(tmp_path, ("shop-east", None))
    config = load(folder, FULL)
    assert config.google.projects == {"shop-east": paths(folder, 1),
                                      "(no project: sa-2.json)": paths(folder, 2)}
    (warning,) = config.warnings
    assert warning.startswith("sa-2.json names no Google Cloud project") and "new JSON key" in warning


def test_a_project_id_that_is_not_text_is_an_error_naming_the_file_and_not_the_key(tmp_path):
    folder = secrets_folder(tmp_path)
    broken = folder / "secrets/sa-2.json"
    broken.write_text(json.dumps({**json.loads(broken.read_text()), "project_id": 42}))
    message = error_of(folder, FULL)
    assert "google.credentials[1]:" in message
    assert "sa-2.json has a project_id that is not a project's id" in message
    assert "PRIVATE KEY" not in message and pem_key()[40:80] not in message


def test_without_reading_the_key_files_every_credential_counts_as_one_project(tmp_path):
    folder = secrets_folder(tmp_path, ("shop-east", "shop-west"))
    google = load(folder, FULL, require_secrets=False).google
    assert google.projects == {UNREAD_PROJECT: paths(folder, 1, 2)}
    assert google.reads_per_minute == 120  # min(2 x 60, 300): never more than Google could allow


def test_the_projects_are_not_a_key_of_the_file(tmp_path):
    folder = secrets_folder(tmp_path)
    text = FULL.replace("request_timeout =", 'credential_projects = {}\nrequest_timeout =')
    message = error_of(folder, text)
    assert "google.credential_projects: unknown key 'credential_projects'" in message
    assert "credential_projects" not in message.split("allowed keys:")[1]


def test_max_concurrent_reads_defaults_to_64_and_takes_1_to_64(tmp_path):
    folder = secrets_folder(tmp_path)
    assert load(folder, FULL).google.max_concurrent_reads == 64

    def with_value(value: str) -> str:
        return FULL.replace("request_timeout =", f"max_concurrent_reads = {value}\nrequest_timeout =")

    assert load(folder, with_value("1")).google.max_concurrent_reads == 1
    assert load(folder, with_value("64")).google.max_concurrent_reads == 64
    assert "google.max_concurrent_reads:" in error_of(folder, with_value("0"))
    assert "write a whole number of at least 1" in error_of(folder, with_value("0"))
    assert "write a whole number of at most 64" in error_of(folder, with_value("65"))
    assert "write a whole number" in error_of(folder, with_value('"eight"'))


@pytest.mark.parametrize("email, project", [
    ("monitor@shop-east.iam.gserviceaccount.com", "shop-east"),
    ("123456-compute@developer.gserviceaccount.com", None),  # names a project number, not an id
    ("x@abc.iam.gserviceaccount.com", None),  # too short for a project id
])
def test_the_project_in_an_address(email, project):
    from monitor.config.secrets import project_of_key

    assert project_of_key({"client_email": email}) == project
    assert project_of_key({"client_email": email, "project_id": " given "}) == "given"
