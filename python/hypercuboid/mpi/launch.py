"""The start of a command under mpiexec, and the bounds on its waits.

* :func:`check_timeout`: a timeout in seconds as every MPI path takes it (None, or a finite
  positive number).
* :func:`wait` polls a non-blocking request until it completes or a deadline passes.
* :func:`same_command` compares a digest of every rank's arguments (one allgather of 32 bytes):
  an MPMD launch (``mpiexec -n 1 hypercuboid bench ... -a ring : -n 1 ... -a
  recursive_doubling``) or ranks started with different options stop at once, every rank with
  the same one-line :class:`LaunchError` naming the ranks that differ from rank 0.
* :func:`start` is what ``hypercuboid bench`` and ``lbm run`` call first: the comparison, and
  with ``--timeout`` a watchdog that ends the whole job when the command has not finished in
  time (a rank waiting for a peer that never comes cannot be woken any other way).
"""

from __future__ import annotations

import atexit
import hashlib
import math
import numbers
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from hypercuboid.errors import MPIError


class LaunchError(MPIError, ValueError):
    """The ranks of a job were started with different commands or arguments."""


class TimeoutValueError(MPIError, ValueError):
    """A timeout that is not a finite number of seconds above 0."""


def check_timeout(timeout: Any, name: str = "timeout") -> float | None:
    """``timeout`` as seconds: None (no limit) or a finite number above 0. A bool or a string
    is a TypeError, NaN, an infinity or a number at or below 0 a :class:`TimeoutValueError`
    (a ValueError), each naming ``name``."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise TypeError(f"{name} must be a number of seconds or None, not {type(timeout).__name__}")
    t = float(timeout)
    if not math.isfinite(t) or t <= 0:
        raise TimeoutValueError(f"{name} {timeout!r}: must be a finite number of seconds above 0")
    return t


def wait(req: Any, timeout: float | None, what: str) -> None:
    """Waits for the mpi4py request ``req``; past ``timeout`` seconds raises
    :class:`~hypercuboid.errors.MPIError` saying ``what`` was awaited (the request stays
    pending: the caller's job cannot go on)."""
    if timeout is None:
        req.Wait()
        return
    deadline = time.monotonic() + timeout
    pause = 1e-5
    while not req.Test():
        if time.monotonic() > deadline:
            raise MPIError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(pause)
        pause = min(pause * 2, 1e-3)


def digest(args: Sequence[str]) -> bytes:
    """The SHA-256 of the arguments (NUL-separated UTF-8)."""
    return hashlib.sha256("\0".join(args).encode("utf-8", "surrogateescape")).digest()


def _ranks(ranks: Sequence[int]) -> str:
    shown = ", ".join(map(str, ranks[:10]))
    more = f" and {len(ranks) - 10} more" if len(ranks) > 10 else ""
    return f"rank{'s' if len(ranks) > 1 else ''} {shown}{more}"


def same_command(comm: Any, args: Sequence[str], timeout: float | None = None) -> None:
    """Collective: every rank of ``comm`` gives its arguments; raises :class:`LaunchError`
    on every rank when any rank's differ from rank 0's, naming those ranks."""
    size = comm.Get_size()
    if size == 1:
        return
    mine = np.frombuffer(digest(args), dtype=np.uint8)
    every = np.empty((size, mine.size), dtype=np.uint8)
    wait(comm.Iallgather(mine, every), timeout, "every rank to start")
    differ = [r for r in range(1, size) if not np.array_equal(every[r], every[0])]
    if differ:
        raise LaunchError(
            f"{_ranks(differ)} of {size} {'were' if len(differ) > 1 else 'was'} started with "
            "arguments other than rank 0's (an "
            "MPMD launch or different options): start every rank with the same command"
        )


def _expire(comm: Any, prog: str, timeout: float) -> None:
    sys.stderr.write(
        f"{prog}: rank {comm.Get_rank()}: not finished after --timeout {timeout:g} s; "
        "aborting the job\n"
    )
    sys.stderr.flush()
    comm.Abort(1)


def start(comm: Any, args: Sequence[str], timeout: Any, prog: str) -> None:
    """The start of the command ``prog`` on every rank of ``comm``: ``timeout`` checked, the
    watchdog armed (when ``timeout`` is given: past it, each rank still running says so on
    stderr and aborts the job), then :func:`same_command`."""
    t = check_timeout(timeout, "--timeout")
    if t is not None and comm.Get_size() > 1:
        timer = threading.Timer(t, _expire, (comm, prog, t))
        timer.daemon = True
        timer.start()
        # runs before mpi4py's MPI_Finalize (registered earlier, so called later)
        atexit.register(timer.cancel)
    same_command(comm, args, t)
