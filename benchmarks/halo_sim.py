"""The seed's halo-exchange benchmarks (halo-exchange-lattice-boltzmann, chapters 4–6) in
simulation (docs/halo.md), and the simulator's speed on a large halo exchange.

Three configurations of LogGOPS (docs/halo.md explains them):

* ``fit``: fitted to the seed's ARCHER ping-pong (bandwidth saturating near 0.5 MB at 300 MB/s,
  360 MB/s at most): G = 1/360 MB/s, o + L + o = 278 us so that 0.5 MB moves at 300 MB/s;
* ``node``: the same bandwidth with an intra-node latency (L = o = g = 1 us);
* ``jitter``: ``node`` with an exponential delay of mean 1 us before every op (seed 1).

All: S = 0 (every send synchronous: the seed's MPI_Issend), copy = 0.25 ns per packed or
unpacked byte (4 GB/s per core, a 24-core node's memory bandwidth shared), all ranks alike.

1. 24 ranks 4x3x2, cubic subdomains 16^3..88^3 (Figs 4.2-4.5): time for 2,000 calls, B_eff
   (eq 4.3) and N (eq 4.4), blocking vs non-blocking (and reduced, unpack on arrival).
2. Non-cubic x x 1.5x x 2x subdomains (Table 4.1, Fig 4.8).
3. Strong scaling of 96^3, 192^3, 384^3, 768^3 (Tables 5.1-5.4): non-blocking / blocking time
   (Fig 5.11). Simulated for ``--scaling-calls`` calls and scaled to 2,000 (every call of a
   noise-free run of identical ranks takes the same time; checked on one point).
4. Overlap for 256x256x128 (Fig 6.1): 1,000 steps of exchange + a 130 ns/site kernel,
   non-blocking and non-blocking with the interior overlapped, relative to blocking.
5. Simulation speed: 2,000 halo calls on 4,096 ranks (16x16x16) of 64^3 subdomains under
   LogGOPS (wall time and peak memory of a fresh process).

With ``--network`` it runs only the network section instead: the 8-node runs (Figs 4.9-4.11,
192 ranks 8x6x4) and the strong scaling (Fig 5.11) on an Aries-like dragonfly (ARCHER's Cray
XC30; parameters and their sources at ``aries``), 24 ranks a node, on-node messages costing
what the ``node`` configuration says, next to LogGOPS alone.

Run: .venv/bin/python benchmarks/halo_sim.py [--quick] [--skip-speed]
     .venv/bin/python benchmarks/halo_sim.py --network [--quick]
     .venv/bin/python benchmarks/halo_sim.py --network --network-min-ranks 12288 --max-ranks 12288
Prints the tables, writes benchmarks/results/halo_sim.json (halo_network.json) and the figures
docs/figures/halo-*.png (halo-network-*.png).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import _out
from hypercuboid import halo

ROOT = Path(__file__).resolve().parent.parent
# where the results and figures go: --out (benchmarks/_out.py), set in main()
RESULTS = _out.OUT / "halo_sim.json"
NET_RESULTS = _out.OUT / "halo_network.json"
NET_LARGE_RESULTS = _out.OUT / "halo_network_large.json"
FIGURES = _out.OUT

G = "2.778ns"  # 1 / 360 MB/s
NODE = f"loggops:L=1us,o=1us,g=1us,G={G},O=0,S=0,copy=0.25ns"
#: name -> (model, noise)
MODELS = {
    "fit": (f"loggops:L=274us,o=2us,g=2us,G={G},O=0,S=0,copy=0.25ns", None),
    "node": (NODE, None),
    "jitter": (NODE, "exp:mean=1us"),
}
VARIANTS = ["blocking", "nonblocking", "nonblocking:unpack=on_arrival", "reduced"]
CALLS = 2000
#: Seed Table 4.1: x of the x x 1.5x x 2x subdomains.
NONCUBIC = [16, 24, 28, 32, 36, 40, 44, 48, 52, 56]
#: Seed Tables 5.1-5.4: (cores, subdomain) per system size.
SCALING = {
    96: [(24, (24, 32, 48)), (48, (24, 24, 32)), (72, (16, 24, 32)), (96, (16, 24, 24)),
         (144, (16, 16, 24)), (192, (12, 16, 24))],
    192: [(24, (48, 64, 96)), (48, (48, 48, 64)), (96, (32, 48, 48)), (192, (24, 32, 48)),
          (384, (24, 24, 32)), (576, (16, 24, 32)), (768, (16, 24, 24))],
    384: [(96, (64, 96, 96)), (192, (48, 64, 96)), (384, (48, 48, 64)), (576, (32, 48, 64)),
          (768, (32, 48, 48)), (1152, (32, 32, 48)), (1536, (24, 32, 48)),
          (2304, (24, 32, 32)), (3072, (24, 24, 32)), (6144, (16, 24, 24))],
    768: [(384, (128, 192, 192)), (576, (96, 128, 192)), (768, (96, 96, 128)),
          (1152, (64, 96, 128)), (1536, (64, 64, 96)), (2034, (48, 64, 96)),
          (3072, (48, 64, 64)), (6144, (32, 48, 48)), (12288, (24, 32, 48)),
          (24576, (24, 24, 32))],
}  # fmt: skip
KERNEL = "130ns"  # per D3Q19 site update (Fig 6.1)
MAX_RANKS = 24576
#: On the network, strong scaling up to 6,144 ranks (256 nodes, one group) by default: 12,288
#: ranks (2 groups) take minutes a point.
NET_MAX_RANKS = 6144


def halo_bytes(sub: tuple[int, int, int]) -> int:
    """Halo sites of a subdomain times 19 doubles (eq 4.3's numerator, any shape)."""
    x, y, z = sub
    return (2 * (x * y + y * z + x * z) + 4 * (x + y + z) + 8) * 19 * 8


def per_call(variant: str, d: halo.Decomposition, config, calls: int, kernel=None) -> float:
    """Seconds per call of ``variant`` on ``d`` under ``config`` (model, noise), simulating
    ``calls`` calls."""
    model, noise = config
    s = halo.schedule(variant, d, kernel=kernel)
    r = s.simulate(model, calls=calls, noise=noise, seed=1)
    return r.completion_time_ps * 1e-12 / calls


def cubic(sizes: list[int], calls: int) -> list[dict]:
    rows = []
    for name, model in MODELS.items():
        for L in sizes:
            d = halo.Decomposition.of_subdomain((L, L, L), (4, 3, 2))
            row = {"model": name, "L": L, "halo_MB": halo_bytes((L, L, L)) / 1e6}
            for v in VARIANTS:
                t = per_call(v, d, model, calls)
                row[f"{v}_2000_s"] = t * CALLS
                row[f"{v}_beff_MBs"] = halo_bytes((L, L, L)) / t / 1e6
                row[f"{v}_N"] = L**3 / t
            rows.append(row)
    return rows


def noncubic(xs: list[int], calls: int) -> list[dict]:
    rows = []
    for name, model in MODELS.items():
        for x in xs:
            sub = (x, 3 * x // 2, 2 * x)
            d = halo.Decomposition.of_subdomain(sub, (4, 3, 2))
            row = {"model": name, "subdomain": sub, "sites": sub[0] * sub[1] * sub[2]}
            for v in ("blocking", "nonblocking"):
                t = per_call(v, d, model, calls)
                row[f"{v}_2000_s"] = t * CALLS
                row[f"{v}_N"] = row["sites"] / t
            rows.append(row)
    return rows


def scaling(calls: int, max_ranks: int) -> list[dict]:
    rows = []
    for name, model in MODELS.items():
        for size, table in SCALING.items():
            for cores, sub in table:
                dims = tuple(size // s for s in sub)
                n = dims[0] * dims[1] * dims[2]
                if n > max_ranks:
                    continue
                d = halo.Decomposition.of_subdomain(sub, dims)
                tb = per_call("blocking", d, model, calls)
                tn = per_call("nonblocking", d, model, calls)
                rows.append(
                    {
                        "model": name,
                        "system": size,
                        "cores_in_table": cores,
                        "ranks": n,
                        "dims": dims,
                        "subdomain": sub,
                        "blocking_2000_s": tb * CALLS,
                        "nonblocking_2000_s": tn * CALLS,
                        "ratio": tn / tb,
                    }
                )
    return rows


def overlap(ranks: list[int], calls: int) -> list[dict]:
    rows = []
    for name, model in MODELS.items():
        for p in ranks:
            d = halo.Decomposition((256, 256, 128), p)
            t = {
                v: per_call(v, d, model, calls, kernel=KERNEL) * 1000
                for v in ("blocking", "nonblocking", "nonblocking:overlap=on")
            }
            rows.append(
                {
                    "model": name,
                    "ranks": p,
                    "dims": d.dims,
                    "subdomain": d.subdomain(0),
                    "blocking_1000_steps_s": t["blocking"],
                    "nonblocking_rel": t["nonblocking"] / t["blocking"],
                    "overlap_rel": t["nonblocking:overlap=on"] / t["blocking"],
                }
            )
    return rows


SPEED_CODE = """
import json, resource, sys, time
from hypercuboid import halo
variant, calls = sys.argv[1], int(sys.argv[2])
t0 = time.perf_counter()
d = halo.Decomposition.of_subdomain((64, 64, 64), (16, 16, 16))
s = halo.schedule(variant, d)
t1 = time.perf_counter()
r = s.simulate(sys.argv[3], calls=calls)
t2 = time.perf_counter()
print(json.dumps({"variant": variant, "calls": calls, "ranks": s.nranks,
    "ops_per_call": s.total_ops, "generate_s": t1 - t0, "simulate_s": t2 - t1,
    "ops": r.ops, "messages": r.messages, "completion_s": r.completion_time_ps * 1e-12,
    "peak_rss_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def speed(calls: int) -> list[dict]:
    rows = []
    for v in ("blocking", "nonblocking"):
        out = subprocess.run(
            [sys.executable, "-c", SPEED_CODE, v, str(calls), NODE],
            check=True,
            capture_output=True,
            text=True,
        )
        row = json.loads(out.stdout)
        row["Mops_per_s"] = row["ops"] / row["simulate_s"] / 1e6
        rows.append(row)
    return rows


def plots(res: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    FIGURES.mkdir(parents=True, exist_ok=True)
    labels = {"blocking": "blocking (6 msgs)", "nonblocking": "non-blocking (26 msgs)",
              "nonblocking:unpack=on_arrival": "non-blocking, unpack on arrival",
              "reduced": "reduced D3Q19 (18 msgs)"}  # fmt: skip
    fig, axes = plt.subplots(3, 3, figsize=(15, 12))
    for row_ax, name in zip(axes, MODELS, strict=True):
        rows = [r for r in res["cubic"] if r["model"] == name]
        L = [r["L"] for r in rows]
        for v in VARIANTS:
            row_ax[0].plot(L, [r[f"{v}_2000_s"] for r in rows], "o-", label=labels[v])
            row_ax[1].plot(L, [r[f"{v}_beff_MBs"] for r in rows], "o-", label=labels[v])
            row_ax[2].plot(L, [r[f"{v}_N"] / 1e6 for r in rows], "o-", label=labels[v])
        row_ax[0].set_ylabel(f"[{name}] time for 2,000 calls (s)")
        row_ax[1].set_ylabel(f"[{name}] B_eff (MB/s, eq 4.3)")
        row_ax[2].set_ylabel(f"[{name}] N (10^6 updates/core/s, eq 4.4)")
        for a in row_ax:
            a.set_xlabel("L (cubic subdomain L^3)")
            a.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle("24 ranks 4x3x2, cubic subdomains (seed Figs 4.2-4.5), LogGOPS")
    fig.tight_layout()
    fig.savefig(FIGURES / "halo-fig4-cubic.png", dpi=90)
    plt.close(fig)

    def draw_noncubic(a, name: str) -> None:
        rows = [r for r in res["noncubic"] if r["model"] == name]
        cube = [round(r["sites"] ** (1 / 3)) for r in rows]
        for v in ("blocking", "nonblocking"):
            a.plot(cube, [r[f"{v}_N"] / 1e6 for r in rows], "o-", label=labels[v])

    def draw_scaling(a, name: str) -> None:
        for size in SCALING:
            rows = [r for r in res["scaling"] if r["model"] == name and r["system"] == size]
            a.plot([r["ranks"] for r in rows], [r["ratio"] for r in rows], "o-",
                   label=f"{size}^3")  # fmt: skip
        a.axhline(1.0, color="k", lw=0.5)
        a.set_xscale("log")

    def draw_overlap(a, name: str) -> None:
        rows = [r for r in res["overlap"] if r["model"] == name]
        p = [r["ranks"] for r in rows]
        a.plot(p, [1.0] * len(p), "o-", label="blocking")
        a.plot(p, [r["nonblocking_rel"] for r in rows], "o-", label="non-blocking")
        a.plot(p, [r["overlap_rel"] for r in rows], "o-", label="non-blocking + overlap")
        a.set_xscale("log")

    _per_model(
        plt,
        "halo-fig4-8-noncubic.png",
        draw_noncubic,
        "size as cube (x * 1.5x * 2x)^(1/3)",
        "N (10^6 updates/core/s)",
        "non-cubic subdomains (Fig 4.8)",
    )
    _per_model(
        plt,
        "halo-fig5-11-scaling.png",
        draw_scaling,
        "ranks",
        "non-blocking / blocking time",
        "strong scaling (Fig 5.11)",
    )
    _per_model(
        plt,
        "halo-fig6-1-overlap.png",
        draw_overlap,
        "ranks",
        "runtime / blocking runtime",
        "256x256x128, 1,000 steps (Fig 6.1)",
    )


def _per_model(plt, file: str, draw, xlabel: str, ylabel: str, title: str) -> None:
    """One figure of a panel per model: ``draw(axis, model)`` plots a panel, which then gets the
    labels, the title ``[MODEL] TITLE``, a grid and a legend; saved under FIGURES as ``file``."""
    fig, axes = plt.subplots(1, 3, figsize=(16, 4))
    for a, name in zip(axes, MODELS, strict=True):
        draw(a, name)
        a.set_xlabel(xlabel)
        a.set_ylabel(ylabel)
        a.set_title(f"[{name}] {title}")
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(FIGURES / file, dpi=90)
    plt.close(fig)


def crossover(rows: list[dict], name: str) -> int | None:
    """The smallest L from which non-blocking is faster than blocking, for every larger L."""
    rs = [r for r in rows if r["model"] == name]
    ahead = [r["nonblocking_2000_s"] < r["blocking_2000_s"] for r in rs]
    for k in range(len(rs)):
        if all(ahead[k:]):
            return rs[k]["L"]
    return None


# -- On a network (docs/halo.md, "On a network") ------------------------------------------------
#
# An Aries-like dragonfly for ARCHER (Cray XC30). Structure and signalling rates: Alverson,
# Froese, Kaplan and Roweth, "Cray XC Series Network", Cray white paper WP-Aries01-1112 (2012):
# an Aries router serves 4 nodes; a group is 6 chassis of 16 routers, the 16 routers of a
# chassis all-to-all over the backplane (rank 1: one link a pair, 15 links a router), the 6
# routers of the same slot in the 6 chassis all-to-all over copper (rank 2: 3 links a pair, 15
# a router), groups joined by optical links (rank 3: 10 a router). A link is 3 lanes: 14 Gbps
# electrical, 12.5 Gbps optical.
ARIES_CHASSIS, ARIES_BLADES, ARIES_NODES = 6, 16, 4
ARIES_RANK1_GBPS = 3 * 14.0  # one backplane link: 42 Gb/s = 5.25 GB/s per direction
ARIES_RANK2_GBPS = 3 * 3 * 14.0  # a pair's 3 copper links as one: 126 Gb/s
ARIES_RANK3_GBPS = 3 * 12.5  # one optical link: 37.5 Gb/s = 4.7 GB/s per direction
# Assumptions (no figure in the white paper or the seed): the NIC (node) link at 10 GB/s
# (PCIe Gen3 x16 host interface, 15.75 GB/s raw, less protocol), 10 ns electrical and 100 ns
# optical link latency (~20 m of fibre), 100 ns a router (the engine's default), and 10 optical
# links between every pair of groups of the job.
ARIES_NIC_GBPS = 80.0
ARIES_LAT_PS = {"nic": 10_000, "electrical": 10_000, "optical": 100_000}
ARIES_GLOBAL_LINKS = 10
ARIES_NODES_PER_GROUP = ARIES_CHASSIS * ARIES_BLADES * ARIES_NODES  # 384
RANKS_PER_NODE = 24  # ARCHER: 2 x 12-core Ivy Bridge a node (seed section 3.3)
#: The host: the seed's intra-node figures as the `node` configuration models them (on-node
#: messages through memory cost its L, o, g and G; off-node ones cross the dragonfly).
NET_HOST = NODE
#: name -> (level, nic order)
JITTER = MODELS["jitter"][1]  # exp:mean=1us before every op, seed 1
#: name -> (level, nic order, noise)
NET_CONFIGS = {
    "flow": ("flow", "fifo", None),
    "flow-interleave": ("flow", "interleave", None),
    "flow-jitter": ("flow", "fifo", JITTER),
}
NET_PACKET = {
    "packet": ("packet", "fifo", None),
    "packet-interleave": ("packet", "interleave", None),
}
#: Strong scaling with an interleaving NIC up to this many ranks (beyond, minutes a point).
INTERLEAVE_MAX_RANKS = 576


def aries(groups: int, global_links: int = ARIES_GLOBAL_LINKS):
    """The Aries-like dragonfly of ``groups`` groups (a topology from our JSON): routers
    (group, chassis, blade) in that order, their 4 nodes each, so nodes in order fill a blade,
    a chassis, a group — the order a job scheduler allocates consecutive nodes in."""
    from hypercuboid.topology import from_json

    ch, bl = ARIES_CHASSIS, ARIES_BLADES
    per = ch * bl

    def idx(g: int, c: int, b: int) -> int:
        return (g * ch + c) * bl + b

    lat = ARIES_LAT_PS
    routers, endpoints, links = [], [], []
    for g in range(groups):
        for c in range(ch):
            for b in range(bl):
                routers.append({"kind": "aries", "coords": [g, c, b]})
                endpoints += [[idx(g, c, b), ARIES_NIC_GBPS, lat["nic"]]] * ARIES_NODES
        for c in range(ch):
            for b in range(bl):
                for b2 in range(b + 1, bl):
                    links.append([idx(g, c, b), idx(g, c, b2), ARIES_RANK1_GBPS, lat["electrical"]])
                for c2 in range(c + 1, ch):
                    links.append([idx(g, c, b), idx(g, c2, b), ARIES_RANK2_GBPS, lat["electrical"]])
    # group g's j-th link to its t-th other group leaves its router (t * links + j) mod 96
    for g in range(groups):
        for g2 in range(g + 1, groups):
            for j in range(global_links):
                a = g * per + ((g2 - 1) * global_links + j) % per
                b = g2 * per + (g * global_links + j) % per
                links.append([a, b, ARIES_RANK3_GBPS, lat["optical"]])
    doc = {
        "format": "hypercuboid-topology",
        "version": 1,
        "name": f"aries:groups={groups},global={global_links}",
        "family": "aries",
        "params": [["groups", str(groups)], ["global", str(global_links)]],
        "kinds": ["aries"],
        "coord_names": ["group", "chassis", "blade"],
        "routers": routers,
        "endpoints": endpoints,
        "links": links,
    }
    return from_json(json.dumps(doc), "aries")


def groups_for(ranks: int) -> int:
    """Groups a job of ``ranks`` ranks fills, 24 a node, nodes allocated consecutively."""
    nodes = -(-ranks // RANKS_PER_NODE)
    return -(-nodes // ARIES_NODES_PER_GROUP)


def net_per_call(
    variant: str, d: halo.Decomposition, topo, config, calls: int, mapping="linear"
) -> tuple:
    """Seconds per call on the network (24 ranks a node; ``mapping``: linear, or a list of
    endpoints, one per rank) and the run's network totals (queued time per message, busiest
    link)."""
    level, nic, noise = config
    s = halo.schedule(variant, d)
    r = s.simulate(
        NET_HOST, network=topo, ranks_per_endpoint=RANKS_PER_NODE, level=level, nic=nic,
        calls=calls, mapping=mapping, noise=noise, seed=1,
    )  # fmt: skip
    n = r.network
    busiest = n.links[0] if n.links else None  # one node: no message leaves it
    info = {
        "network_messages": n.messages,
        "local_messages": n.local,
        "mean_queued_us": n.queued_ps / max(n.messages, 1) / 1e6,
        "busiest_link": None if busiest is None else f"{busiest.a} -> {busiest.b} ({busiest.kind})",
        "busiest_utilisation": 0.0 if busiest is None else busiest.utilisation,
    }
    return r.completion_time_ps * 1e-12 / calls, info


def eight_nodes(sizes: list[int], calls: int, packet_sizes: list[int], packet_calls: int):
    """Seed Figs 4.9-4.11: 192 ranks 8x6x4 on 8 nodes (two Aries routers of one chassis),
    cubic subdomains: time for 2,000 calls, B_eff, N; LogGOPS alone beside the network."""
    topo = aries(1)
    # the many-group case: the same 8 nodes one per group of an 8-group machine (a scheduler
    # that scatters a job), every x-neighbour message crossing an optical link
    spread = aries(8)
    scattered = [(r // RANKS_PER_NODE) * ARIES_NODES_PER_GROUP for r in range(192)]
    rows = []
    for L in sizes:
        d = halo.Decomposition.of_subdomain((L, L, L), (8, 6, 4))
        row: dict = {"L": L, "halo_MB": halo_bytes((L, L, L)) / 1e6}
        runs = [(name, None, MODELS[name], topo, "linear") for name in MODELS]
        runs += [(name, cfg, None, topo, "linear") for name, cfg in NET_CONFIGS.items()]
        runs.append(("flow-8-groups", NET_CONFIGS["flow"], None, spread, scattered))
        if L in packet_sizes:
            runs += [(name, cfg, None, topo, "linear") for name, cfg in NET_PACKET.items()]
        for name, cfg, model, net, mapping in runs:
            for v in ("blocking", "nonblocking"):
                if cfg is None:
                    t = per_call(v, d, model, calls)
                else:
                    n = packet_calls if cfg[0] == "packet" else calls
                    t, info = net_per_call(v, d, net, cfg, n, mapping)
                    row[f"{name}_{v}_info"] = info
                row[f"{name}_{v}_2000_s"] = t * CALLS
                row[f"{name}_{v}_beff_MBs"] = halo_bytes((L, L, L)) / t / 1e6
                row[f"{name}_{v}_N"] = L**3 / t
            row[f"{name}_ratio"] = (
                row[f"{name}_nonblocking_2000_s"] / row[f"{name}_blocking_2000_s"]
            )
        rows.append(row)
    return rows


def net_scaling(calls: int, max_ranks: int, min_ranks: int = 1) -> list[dict]:
    """Seed Tables 5.1-5.4 / Fig 5.11 on the dragonfly: non-blocking / blocking time, beside
    LogGOPS `node` (the same number of calls)."""
    rows = []
    topos: dict = {}
    for size, table in SCALING.items():
        for cores, sub in table:
            dims = tuple(size // s for s in sub)
            n = dims[0] * dims[1] * dims[2]
            if not min_ranks <= n <= max_ranks:
                continue
            g = groups_for(n)
            if g not in topos:
                topos[g] = aries(g)
            d = halo.Decomposition.of_subdomain(sub, dims)
            # the block of the process grid node 0 holds (x, y, z ranks): which messages leave
            block = tuple(
                len({d.coords(r)[k] for r in range(min(RANKS_PER_NODE, n))}) for k in range(3)
            )
            row = {"system": size, "cores_in_table": cores, "ranks": n, "dims": dims,
                   "subdomain": sub, "nodes": -(-n // RANKS_PER_NODE), "groups": g,
                   "node_block": block}  # fmt: skip
            t0 = time.time()
            for name in ("node", "jitter"):
                tb = per_call("blocking", d, MODELS[name], calls)
                tn = per_call("nonblocking", d, MODELS[name], calls)
                row[f"{name}_ratio"] = tn / tb
            for name, cfg in NET_CONFIGS.items():
                if cfg[1] == "interleave" and n > INTERLEAVE_MAX_RANKS:
                    continue  # an interleaving NIC has every flow active: slow at this size
                tb, _ = net_per_call("blocking", d, topos[g], cfg, calls)
                tn, info = net_per_call("nonblocking", d, topos[g], cfg, calls)
                row[f"{name}_blocking_2000_s"] = tb * CALLS
                row[f"{name}_nonblocking_2000_s"] = tn * CALLS
                row[f"{name}_ratio"] = tn / tb
            row["wall_s"] = time.time() - t0
            rows.append(row)
            il = row.get("flow-interleave_ratio")
            print(
                f"  {size:>4}^3 {n:>6} ranks ({g} group{'s' if g > 1 else ''}) "
                f"{str(sub):>16}: node {row['node_ratio']:.3f} jitter {row['jitter_ratio']:.3f} | "
                f"flow {row['flow_ratio']:.3f} flow-jitter {row['flow-jitter_ratio']:.3f} "
                f"flow-interleave {'-' if il is None else f'{il:.3f}'}  ({row['wall_s']:.0f} s)",
                flush=True,
            )
    return rows


def net_plots(res: dict) -> None:
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    FIGURES.mkdir(parents=True, exist_ok=True)
    rows = res["eight_nodes"]
    L = [r["L"] for r in rows]
    fig, axes = plt.subplots(1, 4, figsize=(20, 4.5))
    # one colour a configuration; blocking solid with circles, non-blocking dashed with squares
    names = ["node", "fit", "jitter", "flow", "flow-interleave", "flow-jitter", "flow-8-groups"]
    colours = dict(zip(names, plt.get_cmap("tab10").colors, strict=False))
    for name in names:
        c = colours[name]
        for v, ls, mk in (("blocking", "-", "o"), ("nonblocking", "--", "s")):
            kw = {"color": c, "ls": ls, "marker": mk, "ms": 4, "label": f"{name} {v}"}
            axes[0].plot(L, [r[f"{name}_{v}_2000_s"] for r in rows], **kw)
            axes[1].plot(L, [r[f"{name}_{v}_beff_MBs"] for r in rows], **kw)
            axes[2].plot(L, [r[f"{name}_{v}_N"] / 1e6 for r in rows], **kw)
        axes[3].plot(L, [r[f"{name}_ratio"] for r in rows], "-", color=c, marker="o", label=name)
    for name, mk in (("packet", "x"), ("packet-interleave", "+")):
        pts = [(r["L"], r[f"{name}_ratio"]) for r in rows if f"{name}_ratio" in r]
        if pts:
            axes[3].plot(*zip(*pts, strict=True), mk, ms=10, label=f"{name} (cross-check)")
    axes[0].set_ylabel("time for 2,000 calls (s)")
    axes[0].set_yscale("log")
    axes[1].set_ylabel("B_eff (MB/s, eq 4.3)")
    axes[2].set_ylabel("N (10^6 updates/core/s, eq 4.4)")
    axes[3].set_ylabel("non-blocking / blocking time")
    axes[3].axhline(1.0, color="k", lw=0.5)
    for a in axes:
        a.set_xlabel("L (cubic subdomain L^3)")
        a.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    axes[3].legend(fontsize=7)
    fig.suptitle(
        "8 nodes, 192 ranks 8x6x4 (seed Figs 4.9-4.11): LogGOPS node / fit / jitter vs the "
        "Aries-like dragonfly (flow level: FIFO NIC, interleaving NIC, FIFO + jitter, 8 groups; "
        "on-node messages as `node`)"
    )
    fig.tight_layout()
    fig.savefig(FIGURES / "halo-network-fig4-9-11.png", dpi=90)
    plt.close(fig)

    panels = ("node", "jitter", "flow", "flow-jitter", "flow-interleave")
    fig, axes = plt.subplots(1, len(panels), figsize=(26, 4))
    for a, name in zip(axes, panels, strict=True):
        for size in SCALING:
            rs = [r for r in res["scaling"] if r["system"] == size and f"{name}_ratio" in r]
            if rs:
                a.plot([r["ranks"] for r in rs], [r[f"{name}_ratio"] for r in rs], "o-",
                       label=f"{size}^3")  # fmt: skip
        a.axhline(1.0, color="k", lw=0.5)
        a.set_xscale("log")
        a.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        a.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        a.set_xlabel("ranks (24 a node)")
        a.set_ylabel("non-blocking / blocking time")
        a.set_title(f"LogGOPS {name}" if name in MODELS else f"dragonfly, {name}")
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.suptitle(
        "Strong scaling (seed Fig 5.11): LogGOPS alone vs the Aries-like dragonfly, 24 ranks a node"
    )
    fig.tight_layout()
    fig.savefig(FIGURES / "halo-network-fig5-11-scaling.png", dpi=90)
    plt.close(fig)


def network_large(a) -> None:
    """Only the strong-scaling rows of ``--network-min-ranks`` to ``--max-ranks`` ranks (the
    rows past one group), into their own JSON."""
    import os

    t0 = time.time()
    res: dict = {"machine": platform.platform(), "load_average_start": os.getloadavg(),
                 "host": NET_HOST, "scaling_calls": a.network_scaling_calls}  # fmt: skip
    print(f"strong scaling on the dragonfly, {a.network_min_ranks}..{a.max_ranks} ranks")
    res["scaling"] = net_scaling(a.network_scaling_calls, a.max_ranks, a.network_min_ranks)
    res["load_average_end"] = os.getloadavg()
    save(NET_LARGE_RESULTS, res, t0)
    print(f"wrote {NET_LARGE_RESULTS} ({res['wall_s']:.0f} s)")


def network_main(a) -> None:
    import os

    if a.network_min_ranks > 1:
        network_large(a)
        return
    t0 = time.time()
    sizes = [16, 32, 48, 64, 88] if a.quick else list(range(16, 89, 8))
    calls = a.network_calls
    res: dict = {
        "machine": platform.platform(),
        "python": sys.version.split()[0],
        "load_average_start": os.getloadavg(),
        "host": NET_HOST,
        "loggops": {k: {"model": m, "noise": n} for k, (m, n) in MODELS.items() if n is None},
        "aries": {
            "chassis_per_group": ARIES_CHASSIS, "routers_per_chassis": ARIES_BLADES,
            "nodes_per_router": ARIES_NODES, "rank1_gbps": ARIES_RANK1_GBPS,
            "rank2_gbps_per_pair": ARIES_RANK2_GBPS, "rank3_gbps": ARIES_RANK3_GBPS,
            "nic_gbps": ARIES_NIC_GBPS, "latency_ps": ARIES_LAT_PS,
            "global_links_per_group_pair": ARIES_GLOBAL_LINKS, "switch_latency": "100ns",
            "ranks_per_node": RANKS_PER_NODE,
        },
        "configs": {**NET_CONFIGS, **NET_PACKET},
        "calls": calls,
        "packet_calls": a.packet_calls,
    }  # fmt: skip
    packet_sizes = [16, 32] if a.quick else [16, 32, 48]
    res["eight_nodes"] = eight_nodes(sizes, calls, packet_sizes, a.packet_calls)
    # every call takes about the same time: check one point with 10x the calls
    d = halo.Decomposition.of_subdomain((32, 32, 32), (8, 6, 4))
    topo = aries(1)
    long_, _ = net_per_call("blocking", d, topo, NET_CONFIGS["flow"], 10 * calls)
    short, _ = net_per_call("blocking", d, topo, NET_CONFIGS["flow"], calls)
    res["calls_check"] = {"L": 32, f"per_call_{10 * calls}": long_, f"per_call_{calls}": short}
    print(f"\n8 nodes (192 ranks 8x6x4, 2 Aries routers), cubic L^3: time for 2,000 calls (s) "
          f"[{calls} calls simulated; blocking per call {short:.6e} s vs {long_:.6e} s over "
          f"{10 * calls}], non-blocking / blocking")  # fmt: skip
    names = [*MODELS, *NET_CONFIGS, "flow-8-groups"]
    print(f"{'L':>3} {'MB':>5} | " + " | ".join(f"{n:>24}" for n in names) + " | packet")
    for r in res["eight_nodes"]:
        cells = " | ".join(
            f"{r[f'{n}_blocking_2000_s']:7.2f} {r[f'{n}_nonblocking_2000_s']:7.2f} "
            f"{r[f'{n}_ratio']:6.3f}"
            for n in names
        )
        pk = " ".join(f"{r[f'{n}_ratio']:.3f}" for n in NET_PACKET if f"{n}_ratio" in r)
        print(f"{r['L']:>3} {r['halo_MB']:5.2f} | {cells} | {pk}")
    print(
        f"\nstrong scaling on the dragonfly, {a.network_scaling_calls} calls, "
        "non-blocking / blocking"
    )
    res["scaling_calls"] = a.network_scaling_calls
    res["scaling"] = net_scaling(a.network_scaling_calls, 2048 if a.quick else a.max_ranks)
    # the ratio settles as the calls fall out of step: one row with 3x the calls
    d = halo.Decomposition.of_subdomain((16, 24, 24), (12, 8, 8))
    k = a.network_scaling_calls
    check = {"system": 192, "ranks": 768, "subdomain": (16, 24, 24)}
    for n in (k, 3 * k):
        tb, _ = net_per_call("blocking", d, topo, NET_CONFIGS["flow"], n)
        tn, _ = net_per_call("nonblocking", d, topo, NET_CONFIGS["flow"], n)
        check[f"ratio_{n}_calls"] = tn / tb
    res["scaling_check"] = check
    print(f"  check, 192^3 on 768 ranks, flow: ratio {check[f'ratio_{k}_calls']:.3f} over {k} "
          f"calls, {check[f'ratio_{3 * k}_calls']:.3f} over {3 * k}")  # fmt: skip
    res["load_average_end"] = os.getloadavg()
    save(NET_RESULTS, res, t0)
    net_plots(res)
    print(
        f"\nwrote {NET_RESULTS} and {FIGURES}/halo-network-*.png "
        f"({res['wall_s']:.0f} s; load average {res['load_average_start'][0]:.1f} at the "
        f"start, {res['load_average_end'][0]:.1f} at the end)"
    )


def save(path: Path, res: dict, t0: float) -> None:
    """Stamps the run's wall time (since ``t0``) into ``res`` and writes it to ``path``."""
    res["wall_s"] = time.time() - t0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer sizes and calls")
    ap.add_argument(
        "--skip-speed",
        action="store_true",
        help="skip the 4,096-rank run (the previous results file's speed rows are kept)",
    )
    ap.add_argument("--scaling-calls", type=int, default=20)
    ap.add_argument("--max-ranks", type=int, default=MAX_RANKS)
    ap.add_argument("--speed-calls", type=int, default=CALLS)
    ap.add_argument(
        "--network",
        action="store_true",
        help="run only the network section (Aries-like dragonfly): halo_network.json",
    )
    ap.add_argument("--network-calls", type=int, default=20)
    ap.add_argument("--network-scaling-calls", type=int, default=20)
    ap.add_argument("--packet-calls", type=int, default=5)
    ap.add_argument(
        "--network-min-ranks",
        type=int,
        default=1,
        help="with --network: only the strong-scaling rows from this many ranks, into "
        "halo_network_large.json",
    )
    _out.add(ap, "halo_sim.json")
    a = ap.parse_args()
    global RESULTS, NET_RESULTS, NET_LARGE_RESULTS, FIGURES
    FIGURES = _out.directory(a.out)
    RESULTS = _out.path(a.out, "halo_sim.json")
    NET_RESULTS, NET_LARGE_RESULTS = (
        FIGURES / "halo_network.json",
        FIGURES / "halo_network_large.json",
    )
    if a.network:
        if a.max_ranks == MAX_RANKS:
            a.max_ranks = NET_MAX_RANKS
        network_main(a)
        return
    sizes = [16, 32, 48, 64, 88] if a.quick else list(range(16, 89, 8))
    t0 = time.time()
    res: dict = {
        "machine": platform.platform(),
        "python": sys.version.split()[0],
        "models": {k: {"model": m, "noise": n} for k, (m, n) in MODELS.items()},
        "kernel_per_site": KERNEL,
    }
    res["cubic"] = cubic(sizes, 200 if a.quick else CALLS)
    print("\n24 ranks 4x3x2, cubic L^3: time for 2,000 calls (s), B_eff (MB/s), N (1e6/s)")
    print(f"{'model':>6} {'L':>3} {'MB':>6} | " + " | ".join(f"{v[:22]:>24}" for v in VARIANTS))
    for r in res["cubic"]:
        cells = " | ".join(
            f"{r[f'{v}_2000_s']:7.3f} {r[f'{v}_beff_MBs']:7.1f} {r[f'{v}_N'] / 1e6:6.2f}"
            for v in VARIANTS
        )
        print(f"{r['model']:>6} {r['L']:>3} {r['halo_MB']:6.2f} | {cells}")
    res["crossover_L"] = {m: crossover(res["cubic"], m) for m in MODELS}
    print("non-blocking ahead from L =", res["crossover_L"], "(seed: similar below ~3 MB, L ~ 57)")

    res["noncubic"] = noncubic(NONCUBIC[::3] if a.quick else NONCUBIC, 200 if a.quick else CALLS)
    print("\nnon-cubic x*1.5x*2x: N (1e6 updates/core/s) blocking / non-blocking")
    for r in res["noncubic"]:
        print(
            f"{r['model']:>6} {str(r['subdomain']):>16} {r['blocking_N'] / 1e6:7.2f} "
            f"{r['nonblocking_N'] / 1e6:7.2f}"
        )

    calls = a.scaling_calls
    res["scaling_calls"] = calls
    res["scaling"] = scaling(calls, 2048 if a.quick else a.max_ranks)
    # every call of these runs takes the same time: check one point with all 2,000 calls
    d = halo.Decomposition.of_subdomain((24, 32, 48), (4, 3, 2))
    full = per_call("nonblocking", d, MODELS["jitter"], CALLS)
    part = per_call("nonblocking", d, MODELS["jitter"], calls)
    res["scaling_check"] = {"per_call_2000": full, f"per_call_{calls}": part}
    print(f"\nstrong scaling, non-blocking / blocking ({calls} calls scaled to 2,000; "
          f"per call {part:.6e} s vs {full:.6e} s over 2,000)")  # fmt: skip
    for r in res["scaling"]:
        print(
            f"{r['model']:>6} {r['system']:>4}^3 {r['ranks']:>6} ranks "
            f"{str(r['subdomain']):>16} blocking {r['blocking_2000_s']:9.4f} s  "
            f"ratio {r['ratio']:.3f}"
        )

    res["overlap"] = overlap([24, 96, 384] if a.quick else [24, 48, 96, 192, 384, 768, 1536], 10)
    print("\n256x256x128, 1,000 steps, runtime relative to blocking")
    for r in res["overlap"]:
        print(
            f"{r['model']:>6} {r['ranks']:>5} ranks {str(r['subdomain']):>15} blocking "
            f"{r['blocking_1000_steps_s']:8.3f} s  non-blocking {r['nonblocking_rel']:.3f}  "
            f"overlap {r['overlap_rel']:.3f}"
        )

    if a.skip_speed:
        # The simulated times above do not depend on the machine's load; the speed rows do, so
        # a run that skips them keeps the previous file's rows, as they were measured then.
        if RESULTS.is_file():
            old = json.loads(RESULTS.read_text())
            if "speed" in old:
                res["speed"] = old["speed"]
                print("\nsimulation speed: skipped (--skip-speed); the previous rows kept")
    else:
        res["speed"] = speed(a.speed_calls)
        print("\nsimulation speed: 4,096 ranks (16x16x16) of 64^3, LogGOPS")
        for r in res["speed"]:
            print(
                f"{r['variant']:>12} {r['calls']} calls: simulate {r['simulate_s']:.1f} s "
                f"({r['Mops_per_s']:.2f} M ops/s), generate {r['generate_s']:.2f} s, "
                f"peak RSS {r['peak_rss_MB']:.0f} MB"
            )
    save(RESULTS, res, t0)
    plots(res)
    print(f"\nwrote {RESULTS} and {FIGURES}/halo-*.png ({res['wall_s']:.0f} s)")


if __name__ == "__main__":
    main()
