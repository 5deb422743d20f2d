"""The private channel children send spans over: who may talk, and what survives a crash."""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Iterator

import pytest

from flow_xray.sdk.process_channel import Address, Client, Hub, decode, encode


@pytest.fixture
def hub() -> Iterator[Hub]:
    """A listening hub, closed afterwards."""
    listening = Hub()
    listening.start()
    yield listening
    listening.close()


def _raw(address: Address) -> socket.socket:
    return address.connect()


def test_address_survives_the_environment_round_trip(hub: Hub) -> None:
    """The FLOW_XRAY_CHANNEL text names the same address and token."""
    assert Address.parse(str(hub.address)) == hub.address
    assert Address.parse("2:tok:unix:@x") is None
    assert Address.parse("garbage") is None
    assert Address.parse(None) is None


def test_messages_arrive_with_the_senders_pid(hub: Hub) -> None:
    """Frames from a child carrying the token come out in order, tagged with its pid."""
    client = Client(hub.address)
    client.send(encode(1, 7, ("first",)))
    client.send(encode(2, 7, ("second",)))
    client.close()
    frames = hub.drain()
    assert [(pid, kind, key, decode(payload)) for pid, kind, key, payload in frames] == [
        (os.getpid(), 1, 7, ("first",)),
        (os.getpid(), 2, 7, ("second",)),
    ]
    assert hub.drain() == []


def test_a_connection_without_the_token_is_dropped(hub: Hub) -> None:
    """Someone else on the machine who finds the socket cannot inject spans."""
    sock = _raw(hub.address)
    sock.sendall(encode(0, 0, ("flow-xray", 1, "0" * 32, 1)) + encode(1, 1, ("forged",)))
    sock.close()
    assert hub.drain() == []


def test_a_frame_cut_short_by_a_kill_is_dropped_and_the_rest_kept(hub: Hub) -> None:
    """A child killed mid-send: every complete frame before the cut is kept."""
    sock = _raw(hub.address)
    frame = encode(2, 9, ("last words",))
    hello = encode(0, 0, ("flow-xray", 1, hub.token, 4242))
    sock.sendall(hello + encode(1, 9, ("kept",)) + frame[:-3])
    sock.close()
    assert [(pid, kind, key, decode(p)) for pid, kind, key, p in hub.drain()] == [
        (4242, 1, 9, ("kept",))
    ]


def test_a_client_whose_parent_is_gone_drops_silently() -> None:
    """After the parent stopped listening, sending costs nothing and never raises."""
    closed = Hub()
    address = closed.address
    closed.close()
    client = Client(address)
    client.send(encode(1, 1, ("late",)))
    client.send(encode(1, 2, ("later",)))
    client.close()


def test_a_signal_cutting_a_send_short_loses_only_that_frame(hub: Hub) -> None:
    """Ctrl-C reaches every process of the terminal's group: a pool worker (which outlives
    its task's ``KeyboardInterrupt``) interrupted while its send waits on a busy parent
    has sent part of a frame. Its next frames go over a new connection: the parent drops
    the cut frame and reads every later one (before, they were read as the rest of the cut
    frame, and lost)."""
    client = Client(hub.address)
    client.send(encode(1, 1, ("before",)))
    big = encode(1, 2, ("x" * (16 << 20),))  # more than the socket's buffers hold

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with hub._lock:  # the parent's reader paused, as a parent too busy to read
            signal.setitimer(signal.ITIMER_REAL, 0.2)
            with pytest.raises(KeyboardInterrupt):
                client.send(big)  # blocks once the buffers are full, until the signal
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    client.send(encode(2, 1, ("after",)))
    client.close()
    frames = [(kind, key, decode(payload)) for _, kind, key, payload in hub.drain()]
    assert frames == [(1, 1, ("before",)), (2, 1, ("after",))]
