"""Turns on gevent's loop (no monkey patching needed: green threads of this test's thread)."""

from __future__ import annotations

import time

import gevent
import gevent.socket

from web.app.turns import Turns


def test_a_turn_that_is_over_lets_every_ready_green_thread_run_before_going_on():
    ran: list[int] = []
    waiting = [gevent.spawn(ran.append, n) for n in range(3)]
    Turns(True, turn_s=60).take()  # the turn has just begun: nothing else runs
    assert ran == []
    Turns(True, turn_s=0).take()
    assert ran == [0, 1, 2]
    gevent.joinall(waiting)


def test_a_loop_that_is_never_idle_still_gives_the_turn_back_after_the_wait():
    spins = [0]

    def spin() -> None:  # always ready: the loop has no idle moment while it runs
        while True:
            spins[0] += 1
            gevent.sleep(0)

    busy = gevent.spawn(spin)
    try:
        gevent.sleep(0)
        began = time.perf_counter()
        Turns(True, turn_s=0, wait_s=0.1).take()
        waited = time.perf_counter() - began
    finally:
        busy.kill()
    assert 0.09 <= waited < 1.0
    assert spins[0] > 10  # the busy green thread ran meanwhile


def test_a_request_whose_bytes_arrived_meanwhile_is_served_before_the_turn_goes_on():
    """What ``sleep(0)`` did not do: the reader is woken only once the loop polls its socket."""
    agent, worker = gevent.socket.socketpair()
    read: list[bytes] = []
    reader = gevent.spawn(lambda: read.append(worker.recv(16)))
    try:
        gevent.sleep(0.01)  # the reader waits on its socket
        agent.send(b"post")
        Turns(True, turn_s=0).take()
        assert read == [b"post"]
    finally:
        reader.kill()
        agent.close()
        worker.close()
