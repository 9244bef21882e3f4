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

Run: .venv/bin/python benchmarks/halo_sim.py [--quick] [--skip-speed]
Prints the tables, writes benchmarks/results/halo_sim.json and the figures
docs/figures/halo-*.png.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

from hypercuboid import halo

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "halo_sim.json"
FIGURES = ROOT / "docs" / "figures"

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

    fig, axes = plt.subplots(1, 3, figsize=(16, 4))
    for a, name in zip(axes, MODELS, strict=True):
        rows = [r for r in res["noncubic"] if r["model"] == name]
        cube = [round(r["sites"] ** (1 / 3)) for r in rows]
        for v in ("blocking", "nonblocking"):
            a.plot(cube, [r[f"{v}_N"] / 1e6 for r in rows], "o-", label=labels[v])
        a.set_xlabel("size as cube (x * 1.5x * 2x)^(1/3)")
        a.set_ylabel("N (10^6 updates/core/s)")
        a.set_title(f"[{name}] non-cubic subdomains (Fig 4.8)")
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(FIGURES / "halo-fig4-8-noncubic.png", dpi=90)
    plt.close(fig)

    fig, axes = plt.subplots(1, 3, figsize=(16, 4))
    for a, name in zip(axes, MODELS, strict=True):
        for size in SCALING:
            rows = [r for r in res["scaling"] if r["model"] == name and r["system"] == size]
            a.plot([r["ranks"] for r in rows], [r["ratio"] for r in rows], "o-",
                   label=f"{size}^3")  # fmt: skip
        a.axhline(1.0, color="k", lw=0.5)
        a.set_xscale("log")
        a.set_xlabel("ranks")
        a.set_ylabel("non-blocking / blocking time")
        a.set_title(f"[{name}] strong scaling (Fig 5.11)")
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(FIGURES / "halo-fig5-11-scaling.png", dpi=90)
    plt.close(fig)

    fig, axes = plt.subplots(1, 3, figsize=(16, 4))
    for a, name in zip(axes, MODELS, strict=True):
        rows = [r for r in res["overlap"] if r["model"] == name]
        p = [r["ranks"] for r in rows]
        a.plot(p, [1.0] * len(p), "o-", label="blocking")
        a.plot(p, [r["nonblocking_rel"] for r in rows], "o-", label="non-blocking")
        a.plot(p, [r["overlap_rel"] for r in rows], "o-", label="non-blocking + overlap")
        a.set_xscale("log")
        a.set_xlabel("ranks")
        a.set_ylabel("runtime / blocking runtime")
        a.set_title(f"[{name}] 256x256x128, 1,000 steps (Fig 6.1)")
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(FIGURES / "halo-fig6-1-overlap.png", dpi=90)
    plt.close(fig)


def crossover(rows: list[dict], name: str) -> int | None:
    """The smallest L from which non-blocking is faster than blocking, for every larger L."""
    rs = [r for r in rows if r["model"] == name]
    ahead = [r["nonblocking_2000_s"] < r["blocking_2000_s"] for r in rs]
    for k in range(len(rs)):
        if all(ahead[k:]):
            return rs[k]["L"]
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer sizes and calls")
    ap.add_argument("--skip-speed", action="store_true", help="skip the 4,096-rank run")
    ap.add_argument("--scaling-calls", type=int, default=20)
    ap.add_argument("--max-ranks", type=int, default=24576)
    ap.add_argument("--speed-calls", type=int, default=CALLS)
    a = ap.parse_args()
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

    if not a.skip_speed:
        res["speed"] = speed(a.speed_calls)
        print("\nsimulation speed: 4,096 ranks (16x16x16) of 64^3, LogGOPS")
        for r in res["speed"]:
            print(
                f"{r['variant']:>12} {r['calls']} calls: simulate {r['simulate_s']:.1f} s "
                f"({r['Mops_per_s']:.2f} M ops/s), generate {r['generate_s']:.2f} s, "
                f"peak RSS {r['peak_rss_MB']:.0f} MB"
            )
    res["wall_s"] = time.time() - t0
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(res, indent=1) + "\n")
    plots(res)
    print(
        f"\nwrote {RESULTS.relative_to(ROOT)} and docs/figures/halo-*.png ({res['wall_s']:.0f} s)"
    )


if __name__ == "__main__":
    main()
