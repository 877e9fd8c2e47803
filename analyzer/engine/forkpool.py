"""Worker processes by fork for the parse: each is told a task's number, and hands back its result through a pipe.

Why not concurrent.futures.ProcessPoolExecutor, which the analyzer used
before: its imports and its start (multiprocessing's queues and locks, a
manager thread and a feeder thread, and the pickling of every task's
arguments) cost about 25 ms between the coordinator's last decision and the
first batch running, on the serial path of every ``aitrail analyze``
(docs/performance.md). A forked worker already holds the coordinator's
modules, its decoded bundle and the list of tasks: it needs only a task's
number, a few bytes down a pipe that never fills, and a pipe to send its
result back. Where the platform has no fork, ``SpawnPool`` gives the same
interface over a ProcessPoolExecutor under spawn.

Every way a worker can end is seen: a result, an exception (raised again in
the coordinator, as a future's result() would), or an exit without a result
(killed, out of memory), which is ``WorkerLost``. Leaving the pool (done,
failed or interrupted) closes the pipes, ends every worker still running and
waits for each, so none outlives the run.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
from collections.abc import Callable, Iterator, Sequence

_LENGTH = struct.Struct(">Q")
_NUMBER = struct.Struct(">I")
_WAIT = 1.0  # seconds between the yields that let the caller report progress while nothing finishes


class WorkerLost(RuntimeError):
    """A worker process ended without handing back the result of a task it had."""


class ForkPool:
    """``jobs`` processes forked from this one, running ``function(*tasks[n])`` for the numbers they are given.

    ``initializer(*initargs)`` runs first in each. Use as a context manager;
    ``results()`` gives (number, result) as the tasks finish.
    """

    def __init__(self, jobs: int, function: Callable, tasks: Sequence[tuple],
                 initializer: Callable = lambda: None, initargs: tuple = ()):
        self.function, self.tasks = function, tasks
        self.initializer, self.initargs = initializer, initargs
        self.jobs = min(jobs, len(tasks))
        self.workers: list[_Worker] = []
        self.upcoming = iter(range(len(tasks)))

    def __enter__(self) -> ForkPool:
        """Fork the workers and give each its first task: they start while this process goes on."""
        try:
            for _ in range(self.jobs):
                self.workers.append(self._fork())
            for worker in self.workers:
                worker.give(self.upcoming)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind, value, trace) -> None:
        self.close()

    def _fork(self) -> _Worker:
        task_read, task_write = fds = os.pipe()
        try:
            result_read, result_write = os.pipe()
            fds += (result_read, result_write)
            pid = os.fork()
        except OSError:  # no pipe or no process to be had (EAGAIN, ENOMEM): the run stops, leaking no descriptor
            for fd in fds:
                os.close(fd)
            raise
        if pid == 0:  # the worker: it never returns from here
            status = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is the coordinator's to handle
                for fd in (task_write, result_read, *(fd for worker in self.workers for fd in worker.fds)):
                    os.close(fd)  # a worker holding another's pipe would keep it from seeing its end
                try:
                    self.initializer(*self.initargs)
                    failed = None
                except Exception as exc:  # noqa: BLE001 - the answer to every task: raised in the coordinator
                    failed = exc
                _serve(self.function, self.tasks, task_read, result_write, failed)
                status = 0
            finally:
                os._exit(status)  # never the coordinator's exit handlers or buffered output, in a fork
        os.close(task_read)
        os.close(result_write)
        return _Worker(pid, task_write, result_read)

    def results(self) -> Iterator[tuple[int, object] | None]:
        """(number, result) of every task as it finishes; None after each _WAIT seconds in which none did.

        A worker is given its next task as soon as it answers, before its
        answer is handed on: one task at a time each, so the last ones go to
        whichever worker is free. A task's exception is raised here; a worker
        that ends without its result is WorkerLost.
        """
        busy = {worker.results: worker for worker in self.workers if worker.given}
        poll = select.poll()  # not select(): no limit on the descriptor's number
        for fd in busy:
            poll.register(fd, select.POLLIN)
        while busy:
            ready = poll.poll(_WAIT * 1000)
            if not ready:
                yield None
            for fd, _ in ready:
                worker = busy[fd]
                number, result = worker.take()  # data, or the end of the pipe (POLLHUP): WorkerLost
                worker.give(self.upcoming)
                if not worker.given:
                    poll.unregister(fd)
                    del busy[fd]
                yield number, result

    def close(self) -> None:
        """Close the pipes, end every worker still running a task (an error, an interrupt), and wait for each."""
        for worker in self.workers:
            worker.close_tasks()  # an idle worker sees the end and exits
        for worker in self.workers:
            if worker.given:
                worker.kill()
            worker.wait()
        self.workers = []


class SpawnPool:
    """ForkPool's interface over a ProcessPoolExecutor under spawn, for platforms without fork.

    Each worker imports the modules and runs ``initializer`` itself; every
    task's arguments are pickled to it.
    """

    def __init__(self, jobs: int, function: Callable, tasks: Sequence[tuple],
                 initializer: Callable | None = None, initargs: tuple = ()):
        import concurrent.futures
        import multiprocessing

        self.futures_module = concurrent.futures
        self.executor = concurrent.futures.ProcessPoolExecutor(
            max_workers=max(1, min(jobs, len(tasks))), mp_context=multiprocessing.get_context("spawn"),
            initializer=initializer, initargs=initargs)
        self.futures = [self.executor.submit(function, *task) for task in tasks]

    def __enter__(self) -> SpawnPool:
        return self

    def __exit__(self, kind, value, trace) -> None:
        self.executor.shutdown(wait=True, cancel_futures=kind is not None)

    def results(self) -> Iterator[tuple[int, object] | None]:
        """(number, result) of every task as it finishes; None after each _WAIT seconds in which none did."""
        numbers = {future: number for number, future in enumerate(self.futures)}
        pending = set(self.futures)
        while pending:
            finished, pending = self.futures_module.wait(pending, timeout=_WAIT,
                                                         return_when=self.futures_module.FIRST_COMPLETED)
            if not finished:
                yield None
            for future in finished:
                yield numbers[future], future.result()


class _Worker:
    """The coordinator's side of one worker: its pid, the pipe it reads numbers from, the one it answers on."""

    def __init__(self, pid: int, tasks: int, results: int):
        self.pid, self.tasks, self.results = pid, tasks, results
        self.given: list[int] = []  # numbers sent and not answered yet, in order
        self.status: int | None = None

    @property
    def fds(self) -> tuple[int, ...]:
        return tuple(fd for fd in (self.tasks, self.results) if fd >= 0)

    def give(self, upcoming: Iterator[int]) -> None:
        """Send the next task's number, if there is one (a few bytes: the pipe never fills)."""
        number = next(upcoming, None)
        if number is not None:
            os.write(self.tasks, _NUMBER.pack(number))
            self.given.append(number)

    def take(self) -> tuple[int, object]:
        """The answer to the oldest task given: its result, or its exception raised; WorkerLost at an early end."""
        number = self.given[0]
        head = _read_exactly(self.results, _LENGTH.size)
        size = _LENGTH.unpack(head)[0] if len(head) == _LENGTH.size else -1
        body = _read_exactly(self.results, size) if size >= 0 else b""
        if size < 0 or len(body) < size:
            self.wait()
            raise WorkerLost(f"worker process {self.pid} ended ({_describe(self.status)}) without handing back "
                             f"task {number}; the timeline was not written")
        self.given.pop(0)
        succeeded, value = pickle.loads(body)
        if not succeeded:
            raise value
        return number, value

    def close_tasks(self) -> None:
        if self.tasks >= 0:
            os.close(self.tasks)
            self.tasks = -1

    def kill(self) -> None:
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def wait(self) -> None:
        """Reap the process (once) and close its result pipe."""
        if self.status is None:
            _, self.status = os.waitpid(self.pid, 0)
        if self.results >= 0:
            os.close(self.results)
            self.results = -1


def _serve(function: Callable, tasks: Sequence[tuple], numbers: int, answers: int, failed: Exception | None) -> None:
    """The worker's loop: read a number, run its task, send (True, result) or (False, exception); until the end.

    ``failed``: the initializer's exception, the answer to every task.
    """
    while True:
        head = _read_exactly(numbers, _NUMBER.size)
        if len(head) < _NUMBER.size:
            return  # the coordinator closed the pipe: no more tasks
        try:
            if failed is not None:
                raise failed
            answer = pickle.dumps((True, function(*tasks[_NUMBER.unpack(head)[0]])), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - handed to the coordinator, which raises it
            answer = _pickled_exception(exc)
        _write_all(answers, _LENGTH.pack(len(answer)) + answer)


def _pickled_exception(exc: Exception) -> bytes:
    try:
        return pickle.dumps((False, exc), pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an exception that cannot be pickled: its text, as a RuntimeError
        import traceback  # here, not at the top: traceback imports linecache, tokenize and textwrap on every run

        text = "".join(traceback.format_exception(exc))
        return pickle.dumps((False, RuntimeError(f"in a worker process: {text}")), pickle.HIGHEST_PROTOCOL)


def _read_exactly(fd: int, count: int) -> bytes:
    """``count`` bytes from ``fd``, or fewer at its end."""
    parts, left = [], count
    while left:
        part = os.read(fd, min(left, 1 << 20))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _describe(status: int | None) -> str:
    if status is None:
        return "still running"
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.WEXITSTATUS(status)}"
