"""Reproduce the diameter-two seed's simulations (Kathareios et al., SC15, section 4).

On SF q=13 p=9 and p=10, MLFM h=15 and OFT k=12 (3042 to 3600 nodes):

* synthetic traffic, uniform (UNI) and worst case (WC), offered-load sweeps with MIN, INR,
  UGAL-L and UGAL-L with a 10 % threshold (Fig. 6-12), 200 us simulated, 20 us warm-up;
* one all-to-all (7.5 KB per pair) and one nearest-neighbour exchange (512 KB per neighbour
  on the seed's tori) with MIN, INR and UGAL-L (Fig. 13, 14).

Writes ``<out>/seed_synthetic.json``, ``<out>/seed_exchanges.json`` and the figures
``<out>/seed_uni.png``, ``seed_wc.png``, ``seed_a2a.png``, ``seed_nn.png``; prints the
saturation table. Full scale takes hours of CPU time (``--quick`` shortens the windows to
50 us and skips the exchanges' slowest runs; ``--duration``, ``--warmup``, ``--a2a-message``
and ``--nn-message`` scale the experiments). Runs over local processes, or MPI ranks:

    python examples/netsim_diameter_two.py --out docs/figures -j 2
    mpiexec -n 9 python examples/netsim_diameter_two.py --out docs/figures
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import _figures
from hypercuboid import netsim
from hypercuboid.topology import generate

TOPOLOGIES = ["slimfly:q=13,p=9", "slimfly:q=13,p=10", "mlfm:h=15", "oft:k=12"]
ROUTINGS = ["min", "inr", "ugal", "ugal-th"]
UNI_LOADS = [round(0.1 * i, 2) for i in range(1, 11)] + [0.95]
WC_LOADS = [0.02, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09] + [round(0.1 * i, 2) for i in range(1, 11)]
# The seed's tori (section 4.4), in its dimension order.
TORI = {
    "slimfly:q=13,p=9": (13, 13, 18),
    "slimfly:q=13,p=10": (13, 13, 20),
    "mlfm:h=15": (15, 16, 15),
    "oft:k=12": (12, 14, 19),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _figures.add_out(ap, "the figures and JSON")
    ap.add_argument("-j", "--jobs", type=int, default=None)
    ap.add_argument("--quick", action="store_true", help="50 us windows, fewer loads")
    ap.add_argument("--skip-synthetic", action="store_true")
    ap.add_argument("--skip-exchanges", action="store_true")
    ap.add_argument("--duration", help="simulated time of a load point (default 200us)")
    ap.add_argument("--warmup", help="warm-up of a load point (default 20us)")
    ap.add_argument("--a2a-message", help="all-to-all bytes per pair (default 7.5KB)")
    ap.add_argument("--nn-message", help="nearest-neighbour bytes per pair (default 512KB)")
    ap.add_argument(
        "--report",
        action="store_true",
        help="from <out>/seed_*.json, print the tables of docs/diameter-two.md and redraw "
        "seed_uni.png and seed_wc.png; run nothing",
    )
    args = ap.parse_args()
    out = Path(args.out)
    if args.report:
        report(out)
        return
    out.mkdir(parents=True, exist_ok=True)
    windows = {"duration": "50us", "warmup": "10us"} if args.quick else {}
    if args.duration:
        windows["duration"] = args.duration
    if args.warmup:
        windows["warmup"] = args.warmup
    t0 = time.time()

    def progress(done: int, total: int, point, r: netsim.Report) -> None:
        what = (
            f"eff {100 * r.effective_throughput:.1f}%"
            if r.effective_throughput is not None
            else f"acc {100 * r.accepted:.2f}% lat {r.latency_avg_ns:.0f} ns"
        )
        print(f"[{done}/{total} {time.time() - t0:6.0f}s] {point.label()}: {what}", flush=True)

    if not args.skip_synthetic:
        uni = UNI_LOADS[::2] + [1.0] if args.quick else UNI_LOADS
        wc = WC_LOADS[::2] + [1.0] if args.quick else WC_LOADS
        points = netsim.grid(TOPOLOGIES, ROUTINGS, ["uniform"], uni, top_links=3, **windows)
        points += netsim.grid(TOPOLOGIES, ROUTINGS, ["worst"], wc, top_links=3, **windows)
        # the costly points (high loads, indirect routing) first, to balance the workers
        points.sort(key=lambda p: -(p.load or 0) * (2 if p.routing == "inr" else 1))
        res = netsim.sweep(points, jobs=args.jobs, progress=progress)
        if res is None:  # an MPI worker rank
            return
        res.sort(key=lambda r: (r.topology, r.routing, r.traffic, r.offered))
        _save(res, out / "seed_synthetic.json")
        seed_figures(res, out)
        print_saturation(res)

    if not args.skip_exchanges:
        points = []
        for t in TOPOLOGIES:
            for r in ("min", "inr", "ugal"):
                a2a: tuple = (("top_links", 3),)
                if args.a2a_message:
                    a2a += (("message", args.a2a_message),)
                points.append(netsim.Point(t, r, "a2a", None, "a2a", a2a))
                opts: tuple = (("dims", TORI[t]), ("top_links", 3))
                if args.nn_message or args.quick:
                    opts += (("message", args.nn_message or 65536),)
                points.append(netsim.Point(t, r, "nn", None, "nn", opts))
        if args.quick:
            points = [p for p in points if p.exchange == "nn"]
        res = netsim.sweep(points, jobs=args.jobs, progress=progress)
        if res is None:
            return
        _save(res, out / "seed_exchanges.json")
        for pat in ("a2a", "nn"):
            sel = [r for r in res if r.traffic == pat]
            if sel:
                netsim.plot_exchange(sel, out / f"seed_{pat}.png")
        for r in res:
            print(
                f"{r.traffic:4} {r.topology:18} {r.routing:8} "
                f"{100 * r.effective_throughput:5.1f}%  completion "
                f"{r.completion_ns / 1000:8.1f} us"
            )
    print(f"done in {time.time() - t0:.0f} s", file=sys.stderr)


def _save(res: list[netsim.Report], path: Path) -> None:
    """Writes the reports as a JSON list of their JSON forms (``--json`` objects)."""
    path.write_text(json.dumps([r.to_dict() for r in res], indent=0) + "\n")


def _load(path: Path) -> list[netsim.Report]:
    """The reports :func:`_save` wrote. Files written before the engine could run on several
    threads (those in docs/figures) lack ``threads``: that engine ran on one."""
    return [netsim.Report.from_dict({"threads": 1} | d) for d in json.loads(path.read_text())]


def print_saturation(res: list[netsim.Report]) -> None:
    print(
        f"\n{'topology':18} {'routing':8} {'traffic':8} {'knee':>6} {'max acc':>8} {'lat@0.1':>8}"
    )
    for s in netsim.saturation(res):
        knee = f"{100 * s['knee']:5.1f}%" if s["knee"] is not None else "   -  "
        print(
            f"{s['topology']:18} {s['routing']:8} {s['traffic']:8} {knee} "
            f"{100 * s['max_accepted']:7.1f}% {s['low_load_latency_ns']:7.0f}ns"
        )


#: Short names of the seed's topologies, in the order of the tables, keyed by the canonical name
#: the results carry (``mlfm:h=15`` is reported as ``mlfm:h=15,l=15,p=15``).
SEED_SHORT = {
    generate(spec).name: short
    for spec, short in zip(TOPOLOGIES, ["SF p=9", "SF p=10", "MLFM h=15", "OFT k=12"], strict=True)
}


def _short(topology: str) -> str:
    return SEED_SHORT.get(topology, topology)


def _routing(spec: str) -> str:
    return spec.split(":")[0]


def _pct(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f} %"


def seed_figures(res: list[netsim.Report], out: Path) -> None:
    """``seed_uni.png`` and ``seed_wc.png``: one column per topology, accepted throughput
    (top) and average latency (bottom) against offered load, one line per routing."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    colours = {"min": "tab:blue", "inr": "tab:orange", "ugal": "tab:green", "ugal-th": "tab:red"}
    for traffic, name, title in (
        ("uniform", "seed_uni.png", "Uniform random traffic (UNI)"),
        ("worst", "seed_wc.png", "Worst-case traffic (WC)"),
    ):
        fig, axes = plt.subplots(2, 4, figsize=(16, 7), sharex=True)
        for c, topo in enumerate(SEED_SHORT.values()):
            ax_t, ax_l = axes[0][c], axes[1][c]
            ax_t.plot([0, 100], [0, 100], color="0.8", lw=0.8, ls="--")
            for routing in ROUTINGS:
                pts = sorted(
                    (
                        r
                        for r in res
                        if r.traffic == traffic
                        and _short(r.topology) == topo
                        and _routing(r.routing) == routing
                    ),
                    key=lambda r: r.offered,
                )
                if not pts:
                    continue
                x = [100 * r.offered for r in pts]
                kw = {"color": colours[routing], "marker": ".", "label": routing}
                ax_t.plot(x, [100 * r.accepted for r in pts], **kw)
                ax_l.plot(x, [r.latency_avg_ns for r in pts], **kw)
            ax_t.set_title(topo)
            ax_t.set_ylim(0, 100)
            ax_l.set_yscale("log")
            ax_l.set_xlabel("offered load (% of injection bandwidth)")
            for ax in (ax_t, ax_l):
                ax.set_xlim(0, 100)
                ax.grid(True, alpha=0.3)
        axes[0][0].set_ylabel("accepted throughput (%)")
        axes[1][0].set_ylabel("average packet latency (ns)")
        axes[0][0].legend(loc="upper left")
        fig.suptitle(title)
        fig.tight_layout()
        fig.savefig(out / name, dpi=90)
        plt.close(fig)


def report(out: Path) -> None:
    """Markdown tables of the results under ``out`` (the figures quoted in the docs)."""
    syn_path, exc_path = out / "seed_synthetic.json", out / "seed_exchanges.json"
    if not syn_path.exists() and not exc_path.exists():
        sys.exit(f"error: neither {syn_path} nor {exc_path} exists; run without --report first")
    if syn_path.exists():
        res = _load(syn_path)
        seed_figures(res, out)
        sat = {
            (_short(s["topology"]), _routing(s["routing"]), s["traffic"]): s
            for s in netsim.saturation(res)
        }
        pts = {(_short(r.topology), _routing(r.routing), r.traffic, r.offered): r for r in res}
        tops = list(SEED_SHORT.values())

        def lat(t: str, r: str, traffic: str, loads: tuple[float, ...]) -> str:
            got = [pts.get((t, r, traffic, x)) for x in loads]
            return " / ".join("–" if p is None else f"{p.latency_avg_ns:.0f}" for p in got)

        def knee(t: str, r: str, traffic: str) -> str:
            s = sat.get((t, r, traffic))
            return "–" if s is None else f"{_pct(s['knee'])} / {_pct(s['max_accepted'])}"

        def wc(t: str, r: str) -> str:
            b = pts.get((t, r, "worst", 0.2))
            ind = "–" if b is None else _pct(b.indirect_fraction, 0)
            return f"{lat(t, r, 'worst', (0.04, 0.1))}; {ind}"

        for traffic, title in (("uniform", "Uniform (UNI)"), ("worst", "Worst case (WC)")):
            _table(
                f"{title}: knee (accepted < 97 % of offered) / plateau (largest accepted)",
                ROUTINGS,
                tops,
                lambda t, r, traffic=traffic: knee(t, r, traffic),
            )
        _table(
            "UNI average latency (ns) at offered 10 / 50 / 80 %",
            ROUTINGS,
            tops,
            lambda t, r: lat(t, r, "uniform", (0.1, 0.5, 0.8)),
        )
        _table(
            "WC: average latency (ns) at offered 4 / 10 %; packets routed indirectly at 20 %",
            ROUTINGS,
            tops,
            wc,
        )
    if exc_path.exists():
        res = _load(exc_path)
        for pat, title in (("a2a", "All-to-all"), ("nn", "Nearest neighbour (3-D torus)")):
            sel = {(_short(r.topology), _routing(r.routing)): r for r in res if r.traffic == pat}
            if not sel:
                continue

            def cell(t: str, r: str, sel: dict = sel) -> str:
                x = sel.get((t, r))
                if x is None:
                    return "–"
                return f"{_pct(x.effective_throughput)} ({x.completion_ns / 1000:.1f} µs)"

            _table(
                f"{title}: effective throughput (completion time)",
                ["min", "inr", "ugal"],
                list(SEED_SHORT.values()),
                cell,
            )


def _table(title: str, columns: list[str], rows: list[str], cell) -> None:
    """Prints a markdown table: one row per `rows`, one column per `columns`, `cell(row, col)`."""
    print(f"\n{title}\n")
    print("| topology | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for row in rows:
        print(f"| {row} | " + " | ".join(cell(row, c) for c in columns) + " |")


if __name__ == "__main__":
    main()
