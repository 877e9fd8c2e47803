"""The parse's fork pool: every task's result once, every way a worker ends seen, no worker left behind."""

from __future__ import annotations

import os
import signal
import time

import pytest

from aitrail.analyzer.engine import forkpool

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the fork pool exists where fork does")


def _square(number: int, pause: float = 0.0) -> tuple[int, int]:
    time.sleep(pause)
    return number * number, os.getpid()


def _gone(pids: set[int]) -> bool:
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue  # reaped already: not our child any more
        return False
    return True


def _run(function, tasks, jobs=2, **extra) -> tuple[dict[int, object], set[int]]:
    with forkpool.ForkPool(jobs, function, tasks, **extra) as pool:
        pids = {worker.pid for worker in pool.workers}
        results = dict(item for item in pool.results() if item is not None)
    return results, pids


def test_every_task_is_run_once_in_the_workers_and_the_workers_are_reaped():
    results, pids = _run(_square, [(number,) for number in range(40)], jobs=3)
    assert {number: value for number, (value, _) in results.items()} == {n: n * n for n in range(40)}
    assert {pid for _, pid in results.values()} <= pids and os.getpid() not in pids
    assert len(pids) == 3 and _gone(pids)


def test_no_more_workers_than_tasks():
    results, pids = _run(_square, [(5,)], jobs=4)
    assert results[0][0] == 25 and len(pids) == 1 and _gone(pids)


def test_the_workers_start_before_results_are_asked_for():
    marker = []
    with forkpool.ForkPool(2, _square, [(0,), (1,)]) as pool:
        time.sleep(0.3)  # the coordinator busy elsewhere (verifying): the first tasks were given on entry
        started = time.monotonic()
        marker.extend(item for item in pool.results() if item is not None)
    assert time.monotonic() - started < 0.25 and len(marker) == 2


def test_a_task_that_raises_raises_in_the_coordinator_and_ends_the_others():
    def fail_on_three(number: int) -> int:
        if number == 3:
            raise KeyError("batch three")
        time.sleep(0.05)
        return number

    with pytest.raises(KeyError, match="batch three"):
        _run(fail_on_three, [(number,) for number in range(20)])


def test_a_worker_that_exits_without_its_result_is_a_lost_worker_not_a_hang():
    def exit_on_two(number: int) -> int:
        if number == 2:
            os._exit(3)
        return number

    with pytest.raises(forkpool.WorkerLost, match=r"exit status 3.*task 2"):
        _run(exit_on_two, [(number,) for number in range(6)])


def test_a_worker_killed_by_a_signal_says_which():
    def killed(number: int) -> int:
        os.kill(os.getpid(), signal.SIGKILL)
        return number

    with pytest.raises(forkpool.WorkerLost, match="killed by signal 9"):
        _run(killed, [(0,), (1,)])


def test_an_initializer_that_fails_is_raised_for_the_first_result():
    def broken() -> None:
        raise OSError("cannot open the bundle here")

    with pytest.raises(OSError, match="cannot open the bundle here"):
        _run(_square, [(1,), (2,)], initializer=broken)


def test_an_exception_that_cannot_be_pickled_comes_back_as_its_text():
    class Local(Exception):  # a local class cannot be pickled
        pass

    def raise_local(number: int) -> int:
        raise Local(f"unpicklable {number}")

    with pytest.raises(RuntimeError, match="(?s)in a worker process:.*unpicklable 0"):
        _run(raise_local, [(0,)], jobs=1)


def test_leaving_the_pool_early_kills_and_reaps_the_workers():
    started = time.monotonic()
    with forkpool.ForkPool(2, _square, [(number, 30.0) for number in range(4)]) as pool:
        pids = {worker.pid for worker in pool.workers}
    assert time.monotonic() - started < 10 and _gone(pids)  # not the 30 s the tasks would take


def test_an_error_in_the_coordinator_while_waiting_ends_the_workers():
    with pytest.raises(LookupError), forkpool.ForkPool(2, _square, [(n, 30.0) for n in range(4)]) as pool:
        pids = {worker.pid for worker in pool.workers}
        for _ in pool.results():
            raise LookupError("the coordinator failed while the workers ran")
    assert _gone(pids)


def test_a_quiet_second_yields_none_for_the_progress_line(monkeypatch):
    monkeypatch.setattr(forkpool, "_WAIT", 0.05)
    with forkpool.ForkPool(1, _square, [(2, 0.4)]) as pool:
        items = list(pool.results())
    assert items[-1][0] == 0 and items[-1][1][0] == 4
    assert None in items[:-1]


def test_a_worker_does_not_hold_another_workers_pipes():
    """Each fork closes the pipes of the workers before it: else a lost worker's end would never be seen."""
    def pipes(number: int) -> tuple[int, set[int]]:
        time.sleep(0.2)  # every worker takes one task
        inodes = set()
        for name in os.listdir("/proc/self/fd"):
            try:
                inodes.add(os.fstat(int(name)).st_ino)
            except OSError:
                pass  # the listing's own descriptor
        return os.getpid(), inodes

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc here")
    with forkpool.ForkPool(3, pipes, [(n,) for n in range(3)]) as pool:
        own = {worker.pid: {os.fstat(fd).st_ino for fd in worker.fds} for worker in pool.workers}
        seen = dict(item[1] for item in pool.results() if item is not None)
    assert len(seen) == 3
    for pid, inodes in seen.items():
        others = set().union(*(pair for other, pair in own.items() if other != pid))
        assert own[pid] <= inodes and not others & inodes


def test_an_interrupt_is_the_coordinators_the_workers_go_on():
    """Ctrl-C reaches every process of the terminal's group: a worker ignores it, the coordinator decides."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # a background run starts with it ignored
    try:
        with forkpool.ForkPool(2, _square, [(number, 0.3) for number in range(4)]) as pool:
            for worker in pool.workers:
                os.kill(worker.pid, signal.SIGINT)
            results = dict(item for item in pool.results() if item is not None)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert sorted(results) == [0, 1, 2, 3]


def test_the_spawn_pool_gives_what_the_fork_pool_gives():
    """Platforms without fork take SpawnPool: same tasks, same (number, result) pairs."""
    tasks = [(number,) for number in range(6)]
    with forkpool.SpawnPool(2, _square, tasks) as pool:
        spawned = {number: value for number, (value, _) in (item for item in pool.results() if item is not None)}
    forked, _ = _run(_square, tasks)
    assert spawned == {number: value for number, (value, _) in forked.items()} == {n: n * n for n in range(6)}


def test_a_fork_that_fails_leaves_no_descriptor_open_and_no_worker_running(monkeypatch):
    real_fork, forked = os.fork, []

    def second_fails():
        if forked:
            raise BlockingIOError(11, "Resource temporarily unavailable")  # EAGAIN: the process limit
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    before = set(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, "fork", second_fails)
    with pytest.raises(OSError), forkpool.ForkPool(2, _square, [(number,) for number in range(4)]):
        pass
    monkeypatch.setattr(os, "fork", real_fork)
    assert set(os.listdir("/proc/self/fd")) == before
    assert forked and _gone(set(forked)), "the worker forked before the failure is ended and reaped"
