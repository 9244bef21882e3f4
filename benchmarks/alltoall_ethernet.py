"""The alltoall seed's Figures 6-8 on simulated Ethernet (issue 14, section 4; docs/networks.md,
"Ethernet trees: the alltoall seed's Figures 6-8").

Alltoall on the seed's clusters ``tree:fig5a`` (24 machines, one switch), ``fig5b`` (32, a
star of four switches) and ``fig5c`` (32, a chain of four), 8 KB to 256 KB per message, at
packet level on the Ethernet switch model (``switch=ethernet``: store-and-forward 1500-byte
frames, 8-frame port buffers, 802.3x PAUSE) and, to show what that model explains, on the
default virtual cut-through switches (256-byte packets, 100 KB buffers) of the same
topology. Algorithms:

* ``LAM``: ``linear`` (LAM/MPI 6.5.9 posts every receive and send at once, i -> 0, 1, ...);
* ``MPICH``: what MPICH chose in the seed (section 6, after Thakur, Rabenseifner and Gropp,
  ANL/MCS-P1140-0304, 2004): ``bruck`` up to 256 B, ``linear_shifted`` (i -> i+1, i+2, ...,
  all posted at once; MPICH's block of 32 covers every peer at N <= 32) above 256 B and up to
  32 KB, ``pairwise`` above 32 KB (partner i ^ j for N a power of two, else the ring i + j);
* ``ours``: ``scheduled`` (the Faraj-Yuan contention-free phases with pairwise
  synchronisation), when the core has it (``hc.schedules.algorithms("alltoall")``); skipped
  with a note otherwise.

Beside them: the seed's measured milliseconds (its tables for Figures 6, 7 and 8) and the
bottleneck bound |M_u| x |M_v| x msize / B (B = 100 Mb/s). Hosts: LogGOPS ``o = g = 10 us``,
eager up to 64 KB and rendezvous above, as LAM's TCP transport (``--host`` changes it).

Writes ``benchmarks/results/alltoall_ethernet.json`` (``--out`` another name) and, with
``--plot DIR``, ``DIR/alltoall-ethernet-fig6-8.png``.

    python benchmarks/alltoall_ethernet.py [--plot docs/figures] [--sizes 8,16,...]
        [--host loggops:...] [--nic fifo|interleave] [--out NAME.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import _out

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import hypercuboid as hc  # noqa: E402
from hypercuboid import topology  # noqa: E402

HOST = "loggops:o=10us,g=10us,O=0,S=64KiB"
KB = 1024
SIZES_KB = [8, 16, 32, 64, 128, 256]
TOPOS = {"fig5a": 24, "fig5b": 32, "fig5c": 32}
SWITCHES = {"ethernet": ",switch=ethernet", "vct": ""}

#: The seed's measured completion times in ms (section 6, the tables of Figures 6, 7, 8), a row
#: per msize in KB: (LAM, MPICH, ours) on fig5a, fig5b and fig5c.
_SEED_ROWS = {
    8: ((29.7, 30.7, 56.5), (199.0, 155.0, 212.0), (242.0, 238.0, 271.0)),
    16: ((61.4, 58.1, 71.4), (403.0, 308.0, 341.0), (495.0, 476.0, 443.0)),
    32: ((128.2, 117.6, 86.0), (848.0, 613.0, 632.0), (1034.0, 958.0, 868.0)),
    64: ((468.8, 309.7, 217.7), (1827.0, 1374.0, 1428.0), (2127.0, 2061.0, 1700.0)),
    128: ((633.7, 410.0, 398.0), (3338.0, 2989.0, 2595.0), (4080.0, 4379.0, 3372.0)),
    256: ((1157.0, 721.0, 715.0), (6550.0, 5405.0, 4836.0), (8375.0, 8210.0, 6396.0)),
}
#: ``SEED_MS[topo][msize in KB]``: (LAM, MPICH, ours) in ms.
SEED_MS = {topo: {kb: row[i] for kb, row in _SEED_ROWS.items()} for i, topo in enumerate(TOPOS)}
COLUMNS = ("LAM", "MPICH", "ours")


def mpich(msize: int) -> str:
    """MPICH's choice in the seed (section 6)."""
    if msize <= 256:
        return "bruck"
    if msize <= 32768:
        return "linear_shifted"
    return "pairwise"


def algorithms(topo: str, msize: int) -> dict[str, str | None]:
    """The generator of each column (None: not available in this build)."""
    scheduled = f"scheduled:topo=tree:{topo}"
    have = any(a.name == "scheduled" for a in hc.schedules.algorithms("alltoall"))
    return {"LAM": "linear", "MPICH": mpich(msize), "ours": scheduled if have else None}


def bound_ms(topo: str, msize: int) -> tuple[float, str]:
    """|M_u| x |M_v| x msize / B on the tree's bottleneck link, in ms, and the link."""
    t = topology.analyze(f"tree:{topo}")["tree"]
    bits = t["m_u"] * t["m_v"] * msize * 8
    return bits / (t["bottleneck_bandwidth_gbps"] * 1e9) * 1e3, (
        f"{t['bottleneck']} ({t['m_u']} x {t['m_v']})"
    )


def run(sizes_kb: list[int], host: str, nic: str = "fifo") -> dict:
    rows = []
    notes = []
    for topo, n in TOPOS.items():
        print(f"tree:{topo}, {n} ranks, host {host}, NIC order {nic}")
        print(
            f"  {'KB':>4} {'switch':8} {'LAM ms':>9} {'MPICH ms':>9} {'ours ms':>9} "
            f"{'bound ms':>9} | {'seed LAM':>9} {'seed MPICH':>10} {'seed ours':>9}  wall s"
        )
        for kb in sizes_kb:
            msize = kb * KB
            bound, link = bound_ms(topo, msize)
            seed = SEED_MS[topo].get(kb)
            algs = algorithms(topo, msize)
            for switch, suffix in SWITCHES.items():
                spec = f"tree:{topo}{suffix}"
                sim: dict[str, float | None] = {}
                wall = 0.0
                for col in COLUMNS:
                    alg = algs[col]
                    if alg is None:
                        sim[col] = None
                        note = "scheduled is not in this build: the 'ours' column is empty"
                        if note not in notes:
                            notes.append(note)
                        continue
                    s = hc.schedules.alltoall(alg, n, count=msize, dtype="uint8")
                    t0 = time.perf_counter()
                    r = s.simulate(host, network=spec, level="packet", nic=nic)
                    wall += time.perf_counter() - t0
                    sim[col] = r.completion_time_ns / 1e6
                rows.append(
                    {
                        "topology": topo,
                        "switch": switch,
                        "ranks": n,
                        "msize": msize,
                        "algorithms": algs,
                        "sim_ms": sim,
                        "bound_ms": bound,
                        "bottleneck": link,
                        "seed_ms": dict(zip(COLUMNS, seed, strict=True)) if seed else None,
                        "wall_seconds": wall,
                    }
                )

                def f(x: float | None) -> str:
                    return f"{x:9.1f}" if x is not None else f"{'-':>9}"

                sd = seed or (None, None, None)
                print(
                    f"  {kb:>4} {switch:8} {f(sim['LAM'])} {f(sim['MPICH'])} {f(sim['ours'])} "
                    f"{bound:9.1f} | {f(sd[0])} {f(sd[1]):>10} {f(sd[2])}  {wall:6.1f}"
                )
    for n in notes:
        print(f"note: {n}")
    have = any(a.name == "scheduled" for a in hc.schedules.algorithms("alltoall"))
    return {
        "host": host,
        "nic": nic,
        "scheduled_available": have,
        "rows": rows,
        "notes": notes,
    }


def plot(data: dict, out: Path) -> None:
    """Completion against message size, one panel per topology (Ethernet switches): the
    simulated algorithms, the seed's measurements and the bound."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    colours = {"LAM": "tab:red", "MPICH": "tab:blue", "ours": "tab:green"}
    for ax, (topo, n) in zip(axes, TOPOS.items(), strict=True):
        rows = [r for r in data["rows"] if r["topology"] == topo and r["switch"] == "ethernet"]
        kb = [r["msize"] // KB for r in rows]
        for col in COLUMNS:
            ys = [r["sim_ms"][col] for r in rows]
            if all(y is not None for y in ys):
                ax.plot(kb, ys, "-o", color=colours[col], label=f"{col} (simulated)")
            seed = [r["seed_ms"][col] if r["seed_ms"] else None for r in rows]
            ax.plot(kb, seed, "x:", color=colours[col], label=f"{col} (seed, measured)")
        ax.plot(kb, [r["bound_ms"] for r in rows], "k--", label="bound |Mu||Mv| msize/B")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(kb, [str(k) for k in kb])
        ax.set_xlabel("message size (KB)")
        ax.set_ylabel("alltoall completion (ms)")
        ax.set_title(f"tree:{topo},switch=ethernet ({n} machines)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plot", type=Path, help="directory of the PNG")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES_KB)), help="KB per message")
    ap.add_argument("--host", default=HOST, help="host model (a loggops: spec)")
    ap.add_argument(
        "--nic",
        default="fifo",
        choices=("fifo", "interleave"),
        help="NIC order: whole messages in start order (LogGOPS, default) or shared link (TCP)",
    )
    _out.add(ap, "alltoall_ethernet.json")
    a = ap.parse_args()
    data = run([int(x) for x in a.sizes.split(",")], a.host, a.nic)
    out = _out.path(a.out, "alltoall_ethernet.json")
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {out}")
    if a.plot:
        plot(data, a.plot / "alltoall-ethernet-fig6-8.png")


if __name__ == "__main__":
    main()
