"""The pacer with credentials in several Google Cloud projects: each project's quota is its own.

The invariant, checked over generated timelines (hypothesis): in every rolling window no credential
sends more than its limit and no project more than its limit, across a run carried into the next
through the stored log; and when the pacer says "wait w", a slot is free after w.
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest
from concurrency_helpers import WINDOW, most_in_a_window
from config_fixtures import FULL, load, secrets_folder
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.core.errors import QuotaScope
from monitor.engine.pacer import ONE_PROJECT, QuotaLog, QuotaPacer
from monitor.state.schema import QUOTA

EAST = {"e-1": "east", "e-2": "east", "e-3": "east", "e-4": "east", "e-5": "east"}
WEST = {"w-1": "west", "w-2": "west", "w-3": "west", "w-4": "west", "w-5": "west"}


def pacer_of(projects: dict[str, str], per_credential=60, per_project=300, **kw) -> QuotaPacer:
    return QuotaPacer(list(projects), per_credential, per_project, credential_projects=projects,
                      margin_seconds=kw.pop("margin_seconds", 0.0), **kw)


def carried_over(log: QuotaLog) -> QuotaLog:
    return QUOTA.decode(QUOTA.encode(log))


def drive(pacer: QuotaPacer, requests: int, rng: random.Random, start: float = 0.0):
    """Send ``requests`` reads as fast as the pacer allows, with irregular work in between."""
    now, sends = start, defaultdict(list)
    while sum(map(len, sends.values())) < requests:
        credential, wait = pacer.acquire(now)
        if credential is None:
            now += wait * rng.choice([1.0, 1.0, 0.5, 1.7])
        else:
            sends[credential].append(now)
            now += rng.choice([0.0, 0.0, 0.01, 0.05])
    return sends, now


@pytest.mark.parametrize("seed", range(4))
def test_two_projects_each_take_their_full_project_quota(seed):
    pacer = pacer_of(EAST | WEST)
    sends, finished = drive(pacer, 1800, random.Random(seed))
    by_project = defaultdict(list)
    for credential, times in sends.items():
        by_project[pacer.project_of(credential)] += times
        assert most_in_a_window(times) <= 60
    assert {p: most_in_a_window(times) for p, times in by_project.items()} == {"east": 300, "west": 300}
    # 600 reads per window together: 1800 reads end in the third or fourth window (the work between
    # sends spreads them), not the sixth that one project's 300 would need.
    assert 2 * WINDOW <= finished < 4 * WINDOW


def test_credentials_of_one_project_share_its_quota_while_another_project_adds_its_own():
    lone = {"solo": "north"}
    pacer = pacer_of(EAST | lone, per_project=120)
    sends, _ = drive(pacer, 600, random.Random(1))
    east = [t for c, times in sends.items() if c in EAST for t in times]
    assert most_in_a_window(east) == 120  # five credentials could send 300; their project allows 120
    assert most_in_a_window(sends["solo"]) == 60  # north's one credential is its own limit


def test_projects_and_their_credentials_are_public():
    pacer = pacer_of({"a": "p", "b": "q", "c": "p"})
    assert pacer.projects == {"p": ("a", "c"), "q": ("b",)}
    assert [pacer.project_of(c) for c in "abc"] == ["p", "q", "p"]
    with pytest.raises(KeyError):
        pacer.project_of("z")
    assert QuotaPacer(["a", "b"]).projects == {ONE_PROJECT: ("a", "b")}


def test_a_project_wide_quota_error_pauses_only_that_project():
    pacer = pacer_of({"e-1": "east", "e-2": "east", "w-1": "west"}, margin_seconds=1.0)
    assert pacer.record_quota_error("e-1", 5.0, QuotaScope.PROJECT) == 0.0  # west may still send
    assert {pacer.acquire(t)[0] for t in (5.0, 6.0, 65.9)} == {"w-1"}
    assert pacer.acquire(66.0)[0] in {"e-1", "e-2"}
    usage = pacer.usage()
    assert usage["projects"]["east"]["quota_errors"] == 1 and usage["projects"]["west"]["sent"] == 3


def test_when_every_project_is_paused_the_wait_is_until_the_first_pause_ends():
    pacer = pacer_of({"e-1": "east", "w-1": "west"})
    pacer.record_quota_error("e-1", 0.0, QuotaScope.PROJECT)
    assert pacer.record_quota_error("w-1", 10.0, QuotaScope.PROJECT) == 50.0
    assert pacer.acquire(59.9)[0] is None
    assert pacer.acquire(60.0) == ("e-1", 0.0)


def test_the_fairness_rule_holds_across_projects():
    pacer = pacer_of({"a": "p", "b": "q", "c": "q"})
    picks = [pacer.acquire(0.0)[0] for _ in range(6)]
    assert picks == ["a", "b", "c", "a", "b", "c"]  # fewest in the window, then configured order


def test_a_snapshot_keeps_each_projects_window_and_a_restore_brings_it_back():
    pacer = pacer_of({"e-1": "east", "w-1": "west"}, per_project=2)
    for t in (0.0, 1.0, 2.0):
        pacer.acquire(t)
    log = carried_over(pacer.snapshot(3.0))
    assert log.projects == {"east": (0.0, 2.0), "west": (1.0,)}
    restored = pacer_of({"e-1": "east", "w-1": "west"}, per_project=2)
    restored.restore(log)
    assert restored.acquire(3.0) == ("w-1", 0.0)
    assert restored.acquire(3.0) == (None, 57.0)  # east full until 60, west until 61


def test_a_new_credential_of_a_known_project_inherits_the_projects_window():
    pacer = pacer_of({"e-old": "east"}, per_project=2)
    pacer.acquire(0.0)
    pacer.acquire(0.0)
    replaced = pacer_of({"e-new": "east", "w-1": "west"}, per_project=2)
    replaced.restore(carried_over(pacer.snapshot(0.0)))
    assert replaced.acquire(10.0) == ("w-1", 0.0)  # east is full; west is not the same quota
    assert replaced.acquire(10.0) == ("w-1", 0.0)
    assert replaced.acquire(10.0) == (None, 50.0)


def test_a_log_of_a_single_project_counts_against_every_project():
    old = {"window_seconds": 60.0, "sent": {"e-1": [0.0, 1.0]}, "project": [0.0, 1.0], "paused_until": {}}
    from monitor.state.schema import UPGRADES

    log = QUOTA.validate(UPGRADES[("quota", 1)](old))
    assert log.every_project == (0.0, 1.0) and log.projects == {}
    pacer = pacer_of({"e-1": "east", "w-1": "west"}, per_project=2)
    pacer.restore(log)
    assert pacer.acquire(30.0) == (None, 30.0)  # both projects count the two old sends
    assert pacer.acquire(60.0)[0] is not None


def test_the_pacer_of_a_config_groups_its_credentials_by_project(tmp_path):
    config = load(secrets_folder(tmp_path, ("shop-east", "shop-west")), FULL)
    pacer = QuotaPacer.from_config(config)
    assert pacer.credentials == tuple(str(path) for path in config.google.credentials)
    assert pacer.projects == {"shop-east": pacer.credentials[:1], "shop-west": pacer.credentials[1:]}
    assert (pacer.per_credential, pacer.per_project) == (60, 300)


def test_a_mapping_that_misses_a_credential_is_refused():
    with pytest.raises(ValueError, match="no project given for b"):
        QuotaPacer(["a", "b"], credential_projects={"a": "p"})


# -- the invariant over generated timelines

steps = st.lists(st.tuples(
    st.sampled_from(["acquire", "acquire", "acquire", "acquire", "wait", "error", "carry"]),
    st.floats(min_value=0.0, max_value=40.0),
    st.integers(min_value=0, max_value=5),
    st.booleans(),
), min_size=1, max_size=120)


@settings(max_examples=250, deadline=None)
@given(
    assignment=st.lists(st.integers(min_value=0, max_value=2), min_size=1, max_size=6),
    per_credential=st.integers(min_value=1, max_value=5),
    per_project=st.integers(min_value=1, max_value=8),
    margin=st.sampled_from([0.0, 1.0]),
    program=steps,
)
def test_no_credential_and_no_project_ever_exceeds_its_limit_in_any_window(
        assignment, per_credential, per_project, margin, program):
    projects = {f"sa-{i}": f"p{group}" for i, group in enumerate(assignment)}

    def new_pacer() -> QuotaPacer:
        return QuotaPacer(list(projects), per_credential, per_project, credential_projects=projects,
                          margin_seconds=margin)

    pacer, now = new_pacer(), 1000.0
    sends: dict[str, list[float]] = defaultdict(list)
    for action, amount, index, flag in program:
        credential = list(projects)[index % len(projects)]
        if action == "wait":
            now += amount
        elif action == "error":
            scope = QuotaScope.UNKNOWN if amount > 30 else QuotaScope.PROJECT if flag else QuotaScope.USER
            # The refused read is the credential's last one (Google did not count it), or unknown.
            refused = sends[credential].pop() if amount < 20 and sends[credential] else None
            pacer.record_quota_error(credential, now, scope, sent_at=refused)
        elif action == "carry":  # the run ends; the next one restores what it saved
            log = carried_over(pacer.snapshot(now))
            pacer = new_pacer()
            pacer.restore(log)
        else:
            chosen, wait = pacer.acquire(now)
            if chosen is None:
                assert wait > 0
                now += wait
                chosen, again = pacer.acquire(now)
                assert chosen is not None and again == 0.0  # a slot is free once the wait is over
            sends[chosen].append(now)
            if flag:
                now += amount / 10
    window = WINDOW + margin
    for times in sends.values():
        assert most_in_a_window(times, window) <= per_credential
    for project in set(projects.values()):
        times = [t for c, ts in sends.items() if projects[c] == project for t in ts]
        assert most_in_a_window(times, window) <= per_project
