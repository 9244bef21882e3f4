"""Reproduces the recursive multiplying paper's figures (Ruefenacht, Bull and Booth, Parallel
Computing 2017) with hypercuboid, into ``docs/figures/``:

- the simulated timelines of Figs. 18-23 with the paper's simulator settings (section 6.2:
  latency 500 ns, pipeline latency 100 ns, 0.4 ns per byte, compute 10 ns; one 8-byte element);
- Fig. 3 (b_opt against the ratio α_p/α_r, eq. 5) and Fig. 4 (eq. 4's cost over b and N with
  α_p = 1 µs, α_r = 0.25 µs);
- Table 2's process counts: the model's best schedule with the paper's Table 1 fits, next to
  the schedule the paper measured best (printed as a Markdown table).

    .venv/bin/python examples/recursive_multiplying_figures.py [--out docs/figures]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import _figures
import hypercuboid as hc
import hypercuboid.tune as t
import numpy as np

SEED_MODEL = "pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0,delta=10ns"

TIMELINES = {
    "Fig. 18": ("rm_fig18_a2_a2_a2.png", "a2,a2,a2", 8),
    "Fig. 19": ("rm_fig19_a8.png", "a8", 8),
    "Fig. 20": ("rm_fig20_split.png", "c6m2,a2,a2,e6m2", 7),
    "Fig. 21": ("rm_fig21_merge.png", "m1g2a3,n1g3a2", 7),
    "Fig. 22": ("rm_fig22_merge.png", "m3g2a2,n3g2a2", 7),
    "Fig. 23": ("rm_fig23_elimination.png", "elimination", 6),
}

# The seed's Table 2: process count -> the schedule measured best on ARCHER.
TABLE2 = {
    4: "a4",
    6: "a6",
    8: "a2,a4",
    12: "a3,a4",
    16: "a4,a4",
    24: "a4,a6",
    32: "a8,a4",
    48: "a8,a6",
    64: "a8,a8",
    96: "a8,a3,a4",
    128: "a8,a4,a4",
}


def timelines(out: Path) -> None:
    print("| figure | schedule | ranks | completion (ns) | finish skew (ns) |")
    print("|---|---|---|---|---|")
    for fig, (name, alg, n) in TIMELINES.items():
        r = hc.schedules.allreduce(alg, n, 1, dtype="int64").simulate(SEED_MODEL, trace=True)
        title = (
            f"{fig}: {alg} on {n} ranks — {r.completion_time_ns:,.1f} ns, skew {r.skew_ns:,.1f} ns"
        )
        r.trace.plot(out / name, title=title)
        print(f"| {fig} | `{alg}` | {n} | {r.completion_time_ns:,.1f} | {r.skew_ns:,.1f} |")


def fig3(out: Path) -> None:
    from hypercuboid.plot import _pyplot

    plt = _pyplot()
    ratios = np.linspace(1, 20, 400)
    b = [t.b_opt(x) for x in ratios]
    bi = [t.b_opt_integer(x) for x in ratios]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(ratios, b, label=r"$b_{opt} = e^{W((\alpha_p-\alpha_r)/(e\alpha_r))+1}-1$ (eq. 5)")
    ax.step(ratios, bi, where="post", ls="--", label="best whole b")
    ax.set_xlabel(r"$\alpha_p / \alpha_r$")
    ax.set_ylabel(r"$b_{opt}$ (messages per stage)")
    ax.set_title("Fig. 3: optimal b for the message pipelining ratio")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "rm_fig3_b_opt.png", dpi=120)
    plt.close(fig)


def fig4(out: Path) -> None:
    from hypercuboid.plot import _pyplot

    plt = _pyplot()
    alpha_p, alpha_r = 1.0, 0.25  # µs
    bs = np.arange(1, 41)
    fig, ax = plt.subplots(figsize=(6, 4))
    for n in [10**2, 10**3, 10**4, 10**5, 10**6]:
        cost = (alpha_p + bs * alpha_r) * math.log(n) / np.log(bs + 1)
        ax.plot(bs, cost, label=f"N = {n:,}")
    bopt = t.b_opt(alpha_p, alpha_r)
    ax.axvline(bopt, color="k", ls=":", label=f"b_opt = {bopt:.2f}")
    ax.set_xlabel("b (messages per stage)")
    ax.set_ylabel("time (µs)")
    ax.set_title(
        r"Fig. 4: $(\alpha_p + b\alpha_r)\log_{b+1}N$, $\alpha_p$=1 µs, $\alpha_r$=0.25 µs"
    )
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "rm_fig4_cost.png", dpi=120)
    plt.close(fig)


def table2() -> None:
    lo = t.pipelined_model(*t.TABLE1["minimum"])
    med = t.pipelined_model(*t.TABLE1["median"])
    print()
    print(
        "| N | measured best (Table 2) | its model time, min / median (µs) "
        "| model best, min fit (µs) | model best, median fit (µs) |"
    )
    print("|---|---|---|---|---|")
    for n, paper in TABLE2.items():
        a = t.tune_allreduce(n, lo, top=1).best
        b = t.tune_allreduce(n, med, top=1).best
        pm, pd = t.estimate(paper, n, lo) / 1e3, t.estimate(paper, n, med) / 1e3
        print(
            f"| {n} | `{paper}` | {pm:.2f} / {pd:.2f} | `{a.schedule}` {a.predicted_ns / 1e3:.2f} "
            f"| `{b.schedule}` {b.predicted_ns / 1e3:.2f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _figures.add_out(ap)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    timelines(out)
    fig3(out)
    fig4(out)
    table2()
    print(f"\nfigures in {out}")


if __name__ == "__main__":
    main()
