"""Reproductions on a diameter-two network (issue 14, section 4; docs/networks.md).

1. **Allreduce on Slim Fly q = 5** (200 endpoints, one rank each): ring, recursive doubling
   and recursive multiplying (a8,a5,a5), 8 B to 4 MB, ranks placed linearly or at random, at
   packet level, next to the LogGOPS cost model with the network's zero-load latency as L and
   its link bandwidth as G (no contention). Where the network changes the cost model's
   ranking, the table says so.
2. **The diameter-two seed's exchanges as real schedules**: a linear alltoall of 7.5 KB per
   pair and a 3-D nearest-neighbour exchange of 512 KB per neighbour (the seed's A2A and NN,
   section 4) as schedules on Slim Fly q = 5, beside ``netsim exchange`` of the same bytes
   (synthetic sources that inject everything at once). Hosts cost nothing (o = g = 0), so
   both measure the network.

Writes ``benchmarks/results/networks_repro.json`` and, with ``--plot DIR``, the allreduce
figure ``DIR/networks-allreduce-slimfly.png``.

    python benchmarks/networks_repro.py [--plot docs/figures]
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
from hypercuboid import netsim  # noqa: E402
from hypercuboid.schedule import Schedule  # noqa: E402

NET = "slimfly:q=5"
N = 200
HOST = "loggops:o=200ns,g=20ns,O=0,S=64KiB"
ALGS = ["ring", "recursive_doubling", "recursive_multiplying:a8,a5,a5"]
SIZES = [8, 1024, 65536, 4 << 20]


def cost_model() -> str:
    """LogGOPS with the network's zero-load latency of a 2-hop path as L and its link
    bandwidth as G: the cost model's view of the same machine, without contention."""
    lat = netsim.zero_load_latency(NET, hops=2)
    return f"loggops:L={lat}ns,o=200ns,g=20ns,G=0.08ns,O=0,S=64KiB"


def allreduce_table() -> list[dict]:
    rows = []
    model = cost_model()
    print(f"1. allreduce on {NET}, {N} ranks; cost model {model}")
    print(
        f"   {'bytes':>8} {'algorithm':32} {'model us':>10} {'linear us':>10} "
        f"{'random us':>10} {'queued/msg ns':>13}"
    )
    for size in SIZES:
        count = max(size // 8, 1)
        per = {}
        for alg in ALGS:
            s = hc.schedules.allreduce(alg, N, count=count)
            m = s.simulate(model).completion_time_ns
            lin = s.simulate(HOST, network=NET)
            rnd = s.simulate(HOST, network=NET, mapping="random:seed=1")
            q = lin.network.queued_ps / 1e3 / max(lin.network.messages, 1)
            per[alg] = (m, lin.completion_time_ns, rnd.completion_time_ns)
            print(
                f"   {size:>8} {alg:32} {m / 1e3:>10.2f} {lin.completion_time_ns / 1e3:>10.2f} "
                f"{rnd.completion_time_ns / 1e3:>10.2f} {q:>13.1f}"
            )
            rows.append(
                {
                    "bytes": size,
                    "algorithm": alg,
                    "model_ns": m,
                    "linear_ns": lin.completion_time_ns,
                    "random_ns": rnd.completion_time_ns,
                    "queued_per_message_ns": q,
                }
            )
        rank = [sorted(ALGS, key=lambda a, k=k: per[a][k])[0] for k in range(3)]
        note = "" if len(set(rank)) == 1 else "   <- the network changes the ranking"
        print(f"   {'':>8} best: model {rank[0]}, linear {rank[1]}, random {rank[2]}{note}")
    return rows


def allreduce_q13() -> list[dict]:
    """The same on the seed's Slim Fly q = 13, p = 9 (3042 ranks), at 8 B and 64 KB."""
    net, n = "slimfly:q=13,p=9", 3042
    algs = ["ring", "recursive_doubling", "recursive_multiplying:a13,a13,a18"]
    lat = netsim.zero_load_latency(net, hops=2)
    model = f"loggops:L={lat}ns,o=200ns,g=20ns,G=0.08ns,O=0,S=64KiB"
    rows = []
    print(f"\n1b. allreduce on {net}, {n} ranks")
    print(f"   {'bytes':>8} {'algorithm':36} {'model us':>10} {'linear us':>10} {'random us':>10}")
    for size in (8, 65536):
        for alg in algs:
            s = hc.schedules.allreduce(alg, n, count=max(size // 8, 1))
            m = s.simulate(model).completion_time_ns
            lin = s.simulate(HOST, network=net).completion_time_ns
            rnd = s.simulate(HOST, network=net, mapping="random:seed=1").completion_time_ns
            print(f"   {size:>8} {alg:36} {m / 1e3:>10.2f} {lin / 1e3:>10.2f} {rnd / 1e3:>10.2f}")
            rows.append(
                {"bytes": size, "algorithm": alg, "model_ns": m, "linear_ns": lin, "random_ns": rnd}
            )
    return rows


def nn_goal(dims: tuple[int, int, int], nbytes: int, path: Path) -> None:
    """A 3-D periodic nearest-neighbour exchange: every rank posts its 6 receives and 6 sends
    at once (tags by direction), as the seed's NN exchange."""
    x, y, z = dims
    n = x * y * z
    lines = [f"num_ranks {n}"]
    for r in range(n):
        i, j, k = r % x, (r // x) % y, r // (x * y)
        lines.append(f"rank {r} {{")
        op = 0
        for d, (di, dj, dk) in enumerate(
            [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]
        ):
            to = (i + di) % x + ((j + dj) % y) * x + ((k + dk) % z) * x * y
            fr = (i - di) % x + ((j - dj) % y) * x + ((k - dk) % z) * x * y
            lines.append(f"l{op}: recv {nbytes}b from {fr} tag {d}")
            lines.append(f"l{op + 1}: send {nbytes}b to {to} tag {d}")
            op += 2
        lines.append("}")
    path.write_text("\n".join(lines) + "\n")


def exchanges(tmp: Path) -> list[dict]:
    host = "loggops:o=0,g=0,O=0,S=16MiB"
    rows = []
    print(f"\n2. the diameter-two seed's exchanges on {NET}: schedule vs netsim exchange")
    print(f"   {'exchange':34} {'schedule us':>12} {'netsim us':>12} {'ratio':>7}")
    # A2A: 7.5 KB to every other rank.
    a2a = hc.schedules.alltoall("linear", N, count=960)
    sched = a2a.simulate(host, network=NET).completion_time_ns
    ex = netsim.exchange(NET, "min", "a2a", message="7680B", order="sequential")
    rows.append(("a2a 7.5 KB, linear alltoall", sched, ex.completion_ns))
    # The same bytes with every rank starting at a different peer (MPICH's scattered order).
    shifted = hc.schedules.alltoall("linear_shifted:block=256", N, count=960)
    sched = shifted.simulate(host, network=NET).completion_time_ns
    rows.append(("a2a 7.5 KB, linear_shifted", sched, ex.completion_ns))
    # NN: 512 KB to each of 6 neighbours on the torus netsim fits.
    dims = netsim.fit_torus(N)
    goal = tmp / "nn.goal"
    nn_goal(tuple(dims), 512 * 1024, goal)
    nn = Schedule.read(goal)
    sched = nn.simulate(host, network=NET).completion_time_ns
    ex = netsim.exchange(NET, "min", "nn", dims=tuple(dims), message="512KiB")
    rows.append((f"nn 512 KB, torus {dims[0]}x{dims[1]}x{dims[2]}", sched, ex.completion_ns))
    out = []
    for name, s, e in rows:
        print(f"   {name:34} {s / 1e3:>12.2f} {e / 1e3:>12.2f} {s / e:>7.3f}")
        out.append({"exchange": name, "schedule_ns": s, "netsim_ns": e, "ratio": s / e})
    return out


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for a, key, title in zip(
        ax,
        ("model_ns", "linear_ns", "random_ns"),
        ("cost model (no contention)", "network, linear mapping", "network, random mapping"),
        strict=True,
    ):
        for alg in ALGS:
            pts = [(r["bytes"], r[key] / 1e3) for r in rows if r["algorithm"] == alg]
            a.loglog(*zip(*pts, strict=True), marker="o", label=alg)
        a.set_title(title, fontsize=9)
        a.set_xlabel("bytes")
    ax[0].set_ylabel("completion (us)")
    ax[0].legend(fontsize=7)
    fig.suptitle(f"allreduce on {NET} ({N} ranks)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plot", default=None, help="folder for the figure")
    ap.add_argument(
        "--q13", action="store_true", help="also the seed's Slim Fly q = 13 (a few minutes)"
    )
    _out.add(ap, "networks_repro.json")
    args = ap.parse_args()
    args.out = _out.path(args.out, "networks_repro.json")
    import tempfile

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        rows = allreduce_table()
        q13 = allreduce_q13() if args.q13 else None
        ex = exchanges(Path(tmp))
    if args.plot:
        p = Path(args.plot) / "networks-allreduce-slimfly.png"
        plot(rows, p)
        print(f"\nplot {p}")
    res = {"network": NET, "host": HOST, "allreduce": rows, "exchanges": ex}
    if q13 is not None:
        res["allreduce_q13"] = q13
    res["wall_s"] = time.perf_counter() - t0
    Path(args.out).write_text(json.dumps(res, indent=1) + "\n")
    print(f"wrote {args.out} ({res['wall_s']:.0f} s)")


if __name__ == "__main__":
    main()
