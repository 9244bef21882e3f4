"""Hand-made programs in the column format of ``Schedule.program`` (no Rust needed).

Slots: 0 input, 1 output, 2 + k scratch k. Kinds: 0 send, 1 recv, 2 reduce, 3 copy,
4 compute, 5 sleep. Combine: 0 assign, 1 dst = incoming ⊕ dst, 2 dst = dst ⊕ incoming.
"""

from __future__ import annotations

import numpy as np

IN, OUT = 0, 1


def scratch(k: int) -> int:
    return 2 + k


class Program:
    """Builds one rank's program."""

    def __init__(self, itemsize: int = 8) -> None:
        self.rows: list[dict] = []
        self.deps: list[tuple[int, int, int]] = []
        self.scratch: list[int] = []
        self.itemsize = itemsize

    def _op(self, **kw) -> int:
        row = {
            "kind": 0,
            "peer": -1,
            "tag": 0,
            "bytes": 0,
            "combine": 0,
            "buf": (-1, 0, 0),
            "src": (-1, 0, 0),
            "time_ps": 0,
        }
        row.update(kw)
        if row["bytes"] == 0 and row["buf"][0] >= 0:
            row["bytes"] = row["buf"][2] * self.itemsize
        self.rows.append(row)
        return len(self.rows) - 1

    def after(self, op: int, *on: int, start: bool = False) -> int:
        for o in on:
            self.deps.append((op, o, 1 if start else 0))
        return op

    def send(self, peer: int, buf: tuple, tag: int = 0) -> int:
        return self._op(kind=0, peer=peer, tag=tag, buf=buf)

    def recv(
        self, peer: int, buf: tuple, tag: int = 0, combine: int = 0, operand: tuple | None = None
    ) -> int:
        """A receive; ``combine`` 1: buf = incoming ⊕ operand, 2: operand ⊕ incoming, where
        the operand is ``buf`` itself unless given (receive-reduce-copy)."""
        src = operand if operand is not None else (-1, 0, 0)
        return self._op(kind=1, peer=peer, tag=tag, buf=buf, combine=combine, src=src)

    def send_bytes(self, peer: int, nbytes: int, tag: int = 0) -> int:
        return self._op(kind=0, peer=peer, tag=tag, bytes=nbytes)

    def recv_bytes(self, peer: int, nbytes: int, tag: int = 0) -> int:
        return self._op(kind=1, peer=peer, tag=tag, bytes=nbytes)

    def reduce(self, src: tuple, dst: tuple, combine: int = 2) -> int:
        return self._op(kind=2, buf=dst, src=src, combine=combine)

    def copy(self, src: tuple, dst: tuple) -> int:
        return self._op(kind=3, buf=dst, src=src)

    def compute(self, time_ps: int) -> int:
        return self._op(kind=4, time_ps=time_ps)

    def columns(self) -> dict:
        rows = self.rows
        d = {
            k: np.array([r[k] for r in rows], dtype=np.int64)
            for k in ("kind", "peer", "tag", "bytes", "combine", "time_ps")
        }
        for pre in ("buf", "src"):
            d[f"{pre}_slot"] = np.array([r[pre][0] for r in rows], dtype=np.int32)
            d[f"{pre}_offset"] = np.array([r[pre][1] for r in rows], dtype=np.uint64)
            d[f"{pre}_len"] = np.array([r[pre][2] for r in rows], dtype=np.uint64)
        d["deps"] = list(self.deps)
        d["scratch"] = list(self.scratch)
        return d


def linear_allreduce(rank: int, nranks: int, count: int, itemsize: int = 8) -> dict:
    """Every rank sends its input to every other rank, gathers all inputs in scratch 0 and
    reduces them in rank order: the result is the fixed-order reference
    ``((x_0 ⊕ x_1) ⊕ ...) ⊕ x_{P-1}`` bit for bit."""
    p = Program(itemsize)
    n = count
    p.scratch = [n * nranks]
    for q in range(nranks):
        if q != rank:
            p.send(q, (IN, 0, n), tag=7)
    have = {}
    for q in range(nranks):
        if q != rank:
            have[q] = p.recv(q, (scratch(0), q * n, n), tag=7)
    have[rank] = p.copy((IN, 0, n), (scratch(0), rank * n, n))
    last = p.after(p.copy((scratch(0), 0, n), (OUT, 0, n)), have[0])
    for q in range(1, nranks):
        last = p.after(p.reduce((scratch(0), q * n, n), (OUT, 0, n), combine=2), last, have[q])
    return p.columns()


def chain_allreduce(rank: int, nranks: int, count: int, itemsize: int = 8) -> dict:
    """Reduce along the chain 0 → 1 → ... → P-1 with fused receive-reduces
    (``dst = incoming ⊕ dst``: the partial sum of the lower ranks is the left operand), then
    rank P-1 sends the result to every other rank. Also the fixed-order reference."""
    p = Program(itemsize)
    n = count
    last = nranks - 1
    c = p.copy((IN, 0, n), (OUT, 0, n))
    if rank > 0:
        c = p.after(p.recv(rank - 1, (OUT, 0, n), tag=1, combine=1), c)
    if rank < last:
        s = p.after(p.send(rank + 1, (OUT, 0, n), tag=1), c)
        # the result may only land after this rank's partial sum has gone out
        p.after(p.recv(last, (OUT, 0, n), tag=2), s)
    else:
        for q in range(last):
            p.after(p.send(q, (OUT, 0, n), tag=2), c)
    return p.columns()


def doubling_allreduce(rank: int, nranks: int, count: int) -> dict:
    """Recursive doubling for a power-of-two number of ranks with receive-reduce-copy ops, as
    the core generates it: step k sends the current buffer and receives into the other one
    with the current buffer as operand (lower rank on the left), alternating output and
    scratch 0; step 0 reads the input; a last copy when the result ends in scratch 0."""
    p = Program()
    n = count
    p.scratch = [n]
    cur = (IN, 0, n)
    last: list[int] = []
    step = 0
    while (1 << step) < nranks:
        peer = rank ^ (1 << step)
        nxt = (OUT if step % 2 == 0 else scratch(0), 0, n)
        s = p.after(p.send(peer, cur, tag=step), *last)
        r = p.after(
            p.recv(peer, nxt, tag=step, combine=1 if peer < rank else 2, operand=cur), *last
        )
        # the next step sends nxt, and the step after writes into cur: wait for both
        last = [s, r]
        cur = nxt
        step += 1
    if cur[0] != OUT:
        p.after(p.copy(cur, (OUT, 0, n)), *last)
    return p.columns()


def reference(xs: list[np.ndarray], ufunc) -> np.ndarray:
    out = xs[0].copy()
    for x in xs[1:]:
        ufunc(out, x, out=out)
    return out
