"""The showcase (``hypercuboid demo`` / ``make demo``): a short tour of the main job.

1. Generate the classic allreduce family and *prove* each schedule (matching, deadlock freedom
   without MPI buffering, the right result on every rank, and the reduction order).
2. Simulate each on three cost models, next to the closed forms where those are exact.
3. Draw timelines, write a Chrome trace and a GOAL file LogGOPSim can read.
4. Show the scale: recursive doubling on 2^18 ranks under LogGOPS in seconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypercuboid.errors import ScheduleError
from hypercuboid.schedules import allreduce, allreduce_algorithms

#: Models of the tour: the postal model of the coursework seed, the pipelined postal model with
#: the recursive-multiplying paper's simulator settings (section 6.2), and LogGOPS with the
#: parameters of the foundation issue's example.
MODELS = {
    "postal": "postal:alpha=1us,beta=0.1ns,gamma=0.05ns",
    "pipelined": "pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0,delta=10ns",
    "loggops": "loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535",
}
POSTAL = {"alpha_ps": 1_000_000, "beta": 100.0, "gamma": 50.0}
CLASSIC = ["ring_rotate", "ring", "tree", "recursive_doubling"]


def _yes(b: bool | None) -> str:
    return "-" if b is None else ("yes" if b else "no")


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    fmt = lambda cells: "  ".join(  # noqa: E731
        c.ljust(w) if i == 0 else c.rjust(w)
        for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    )
    return [fmt(headers), fmt(["-" * w for w in widths]), *(fmt(r) for r in rows)]


def _closed_form(alg: str, n: int, count: int) -> str:
    from hypercuboid import _core

    try:
        ps = _core.allreduce_cost(
            alg, n, count, "float64", int(POSTAL["alpha_ps"]), POSTAL["beta"], POSTAL["gamma"]
        )
    except ScheduleError:
        return "-"
    return f"{ps / 1e3:,.1f}"


def run(
    out: str | Path = "hypercuboid-demo",
    *,
    big_log2: int = 18,
    echo: Callable[[str], None] = print,
) -> dict:
    """Runs the tour, writing its files into ``out``; returns the figures as a dict."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {"verify": [], "simulate": [], "files": []}
    lines: list[str] = []

    def say(s: str = "") -> None:
        echo(s)
        lines.append(s)

    say("hypercuboid demo: one schedule, many back ends")
    say("")
    say("1. Verify: every schedule proven sound (all messages matched, no deadlock even when")
    say("   sends are synchronous), and its result checked symbolically on every rank.")
    rows = []
    for n in (7, 8):
        for alg in CLASSIC:
            s = allreduce(alg, n, 1000)
            rep = s.verify()
            sem = rep.semantics or {}
            row: dict[str, Any] = {
                "algorithm": alg,
                "ranks": n,
                "ops": s.total_ops,
                "sound": rep.sound,
                "correct": sem.get("correct"),
                "same_bits_commutative": sem.get("same_order_commutative"),
                "same_bits_noncommutative": sem.get("same_order_noncommutative"),
                "canonical_order": sem.get("canonical_order"),
            }
            summary["verify"].append(row)
            rows.append(
                [
                    alg,
                    str(n),
                    str(s.total_ops),
                    _yes(rep.sound),
                    _yes(row["correct"]),
                    _yes(row["same_bits_commutative"]),
                    _yes(row["same_bits_noncommutative"]),
                    _yes(row["canonical_order"]),
                ]
            )
    for line in _table(
        [
            "algorithm",
            "N",
            "ops",
            "sound",
            "correct",
            "same bits (a+b=b+a)",
            "same bits (any op)",
            "rank order",
        ],
        rows,
    ):
        say("   " + line)
    say("   ring_rotate (the coursework's ring) is correct but every rank adds in its own order:")
    say("   floating-point results differ in the last bits from rank to rank.")
    say("")

    say("2. Simulate on 8 ranks (completion time in ns; 'closed form' is the postal formula,")
    say(f"   exact where it applies; postal = {MODELS['postal']})")
    rows = []
    for count, label in ((1, "8 B"), (131072, "1 MiB")):
        for alg in CLASSIC:
            s = allreduce(alg, 8, count)
            times = {}
            for key, spec in MODELS.items():
                times[key] = s.simulate(spec).completion_time_ns
            closed = _closed_form(alg, 8, count)
            summary["simulate"].append(
                {"algorithm": alg, "bytes": count * 8, **times, "postal_closed_form": closed}
            )
            rows.append([f"{alg} {label}", *(f"{times[k]:,.1f}" for k in MODELS), closed])
    for line in _table(["algorithm", *MODELS, "closed form"], rows):
        say("   " + line)
    say("")

    say("3. Timelines, traces and GOAL export")
    rd7 = allreduce("recursive_doubling", 7, 1)
    res = rd7.simulate(MODELS["pipelined"], trace=True, chrome_trace=out / "rd7.trace.json")
    assert res.trace is not None
    res.trace.plot(out / "rd7.png", title=f"recursive doubling on 7 ranks — {MODELS['pipelined']}")
    ring8 = allreduce("ring", 8, 8192)
    res8 = ring8.simulate(MODELS["postal"], trace=True)
    assert res8.trace is not None
    res8.trace.plot(out / "ring8.png", title="ring (reduce-scatter + allgather), 8 ranks, 64 KiB")
    rd7.save(out / "rd7.goal", format="goal")
    rd7.save(out / "rd7.hcs", format="text")
    for f in ("rd7.png", "ring8.png", "rd7.trace.json", "rd7.goal", "rd7.hcs"):
        summary["files"].append(str(out / f))
    say(
        f"   {out / 'rd7.png'}: recursive doubling with MPICH's fix on 7 ranks; finish skew "
        f"{res.skew_ns:,.0f} ns"
    )
    say(f"   {out / 'ring8.png'}: bandwidth-optimal ring on 8 ranks")
    say(f"   {out / 'rd7.trace.json'}: open in https://ui.perfetto.dev")
    say(f"   {out / 'rd7.goal'}: GOAL for LogGOPSim's txt2bin; {out / 'rd7.hcs'}: lossless text")
    say("")

    n = 1 << big_log2
    say(f"4. Scale: recursive doubling of 8 B on 2^{big_log2} = {n:,} ranks under LogGOPS")
    t0 = time.perf_counter()
    big = allreduce("recursive_doubling", n, 1, dtype="int64")
    t1 = time.perf_counter()
    r = big.simulate(MODELS["loggops"])
    t2 = time.perf_counter()
    expected = big_log2 * 6042.0
    say(
        f"   {r.ops:,} ops generated in {t1 - t0:.2f} s and simulated in {t2 - t1:.2f} s "
        f"({r.ops / max(t2 - t1, 1e-9) / 1e6:.1f} M ops/s); "
        f"schedule {big.memory_bytes / 2**20:.0f} MB"
    )
    say(
        f"   completion {r.completion_time_ns:,.0f} ns = {big_log2} steps x "
        f"(2o + L + 7G = 6042 ns): {'exact' if r.completion_time_ns == expected else 'MISMATCH'}"
    )
    summary["scale"] = {
        "nranks": n,
        "ops": r.ops,
        "generate_s": t1 - t0,
        "simulate_s": t2 - t1,
        "completion_ns": r.completion_time_ns,
        "expected_ns": expected,
    }
    say("")
    say(f"Summary written to {out / 'summary.json'} and {out / 'summary.txt'}.")
    say("Next: hypercuboid --help, docs/ for each capability.")
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    assert set(CLASSIC) <= set(allreduce_algorithms())
    return summary
