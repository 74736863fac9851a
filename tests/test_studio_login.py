"""The login backoff's bookkeeping without a server (the HTTP side: test_studio_exposure.py)."""

from __future__ import annotations

import pytest

from curation.curators import DUMMY_HASH, add_curator, authenticate, verify_password
from studio.login import LockedOut, LoginGuard, WaitingRoom


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def test_lock_doubles_with_each_failure_and_is_capped():
    clock = Clock()
    guard = LoginGuard(name_limit=3, address_limit=100, first_lock=2, max_lock=10, clock=clock)
    for _ in range(3):
        guard.check("alice", "10.0.0.1")
        guard.failed("alice", "10.0.0.1")
    with pytest.raises(LockedOut, match="for this name; try again in 2 s"):
        guard.check("alice", "10.0.0.9")  # the name is locked from any address
    guard.check("bob", "10.0.0.1")  # other names are not
    clock.now += 2.5
    guard.failed("alice", "10.0.0.1")  # 4th failure: 4 s
    with pytest.raises(LockedOut) as locked:
        guard.check("alice", None)
    assert locked.value.seconds == pytest.approx(4)
    for _ in range(5):
        guard.failed("alice", None)
    assert guard.names["alice"].locked_until - clock.now == 10  # capped
    clock.now += 11
    guard.succeeded("alice", "10.0.0.1")
    guard.check("alice", "10.0.0.1")
    assert "alice" not in guard.names


def test_address_limit_covers_made_up_names():
    guard = LoginGuard(name_limit=100, address_limit=4, clock=Clock())
    for i in range(4):
        guard.failed(f"guess{i}", "10.0.0.2")
    with pytest.raises(LockedOut, match="for this address"):
        guard.check("alice", "10.0.0.2")
    guard.check("alice", "10.0.0.3")


def test_unknown_names_are_checked_against_the_dummy_hash(store):
    assert verify_password("anything", DUMMY_HASH) is False
    add_curator(store, "alice", "a long secret")
    assert authenticate(store, "alice", "a long secret")
    assert not authenticate(store, "nobody", "a long secret")
    assert not authenticate(store, "alice", "wrong")


def test_attempts_count_from_their_start_so_a_flood_cannot_queue_up():
    """Guesses still waiting for their hash already count: the 21st concurrent one is refused."""
    guard = LoginGuard(name_limit=5, address_limit=20, clock=Clock())
    for i in range(20):
        guard.begin(f"guess{i}", "10.0.0.4")  # none has finished hashing yet
    with pytest.raises(LockedOut, match="for this address"):
        guard.begin("guess99", "10.0.0.4")
    guard = LoginGuard(name_limit=5, clock=Clock())
    for _ in range(4):
        guard.begin("alice", "10.0.0.5")
    guard.begin("alice", "10.0.0.5")  # the 5th, right password: counted, then cleared
    guard.succeeded("alice", "10.0.0.5")
    guard.begin("alice", "10.0.0.5")


def test_a_lock_keys_on_the_name_as_authentication_spells_it():
    guard = LoginGuard(name_limit=2, address_limit=100, clock=Clock())
    for _ in range(2):
        guard.failed("jos\u00e9", None)  # NFC
    with pytest.raises(LockedOut, match="for this name"):
        guard.check("jose\u0301", None)  # NFD: the same account, so the same lock
    with pytest.raises(LockedOut):
        guard.check("  jos\u00e9 ", None)


def test_an_ipv6_host_is_limited_as_its_whole_slash_64():
    guard = LoginGuard(name_limit=100, address_limit=2, clock=Clock())
    guard.failed("a", "2001:db8:1:2::1")
    guard.failed("b", "2001:db8:1:2::ffff")
    with pytest.raises(LockedOut, match="for this address"):
        guard.check("alice", "2001:db8:1:2:abcd::9")
    guard.check("alice", "2001:db8:1:3::1")  # the next /64 is someone else


def test_the_waiting_room_gives_every_address_its_share_and_a_newcomer_a_place():
    room = WaitingRoom(capacity=4)
    assert all(room.enter("10.0.0.1") for _ in range(4))  # alone: the whole room
    assert not room.enter("10.0.0.1")
    for address in ("10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"):
        assert room.enter(address)  # a newcomer always gets in, however full the room is
    assert not room.enter("10.0.0.2")  # six addresses now: a share of one each
    for _ in range(4):
        room.leave("10.0.0.1")
    assert "10.0.0.1" not in room.waiting
