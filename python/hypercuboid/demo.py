"""The showcase (``hypercuboid demo`` / ``make demo``): a short tour of the whole toolkit.

1. Generate the classic allreduce family and *prove* each schedule (matching, deadlock freedom
   without MPI buffering, the right result on every rank, and the reduction order).
2. Simulate each on three cost models, next to the closed forms where those are exact.
3. Draw timelines, write a Chrome trace and a GOAL file LogGOPSim can read.
4. Show the scale: recursive doubling on 2^18 ranks under LogGOPS in seconds.
5. Alltoall on the Faraj–Yuan seed's tree: the contention-free phases, and the scheduled
   alltoall against LAM's and MPICH's on simulated Ethernet switches.
6. One schedule on a Slim Fly, at packet level and at flow level, with its links' load.
7. The halo exchanges side by side: verified, then simulated with the lattice update.
8. A short run under ``mpiexec``: the native runner against the library's ``MPI_Allreduce``,
   and the lattice-Boltzmann proxy (skipped with a note where ``mpiexec`` is not available).

Every section writes its pictures (PNG) into the output directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
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
    out: str | Path = "demo-out",
    *,
    big_log2: int = 18,
    small: bool = False,
    mpi: bool = True,
    echo: Callable[[str], None] = print,
) -> dict:
    """Runs the tour, writing its files into ``out``; returns the figures as a dict.

    ``small`` runs sections 5–7 at small sizes (for tests); ``mpi=False`` skips section 8."""
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
    rd7.save(out / "rd7.goal", format="goal", force=True)
    rd7.save(out / "rd7.hcs", format="text", force=True)
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

    summary["alltoall"] = _alltoall_on_a_tree(out, say, summary["files"], small)
    summary["slimfly"] = _slimfly(out, say, summary["files"], small)
    summary["halo"] = _halo(out, say, summary["files"], small)
    summary["mpi"] = _mpi(out, say, summary["files"]) if mpi else None
    if not mpi:
        say("8. MPI: skipped (--no-mpi)")
        say("")
    say(f"Summary written to {out / 'summary.json'} and {out / 'summary.txt'}.")
    say("Next: hypercuboid --help, docs/ for each capability.")
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    assert set(CLASSIC) <= set(allreduce_algorithms())
    return summary


def _say_table(say: Callable[[str], None], headers: list[str], rows: list[list[str]]) -> None:
    for line in _table(headers, rows):
        say("   " + line)


#: The alltoall seed's measurements on its Fig. 5(b) tree (ms, its section 6): LAM, MPICH, ours.
SEED_FIG5B_MS = {8: (199.0, 155.0, 212.0), 32: (848.0, 613.0, 632.0)}
#: The hosts of docs/networks.md's reproduction: LAM's TCP transport, eager up to 64 KiB.
ETHERNET_HOST = "loggops:o=10us,g=10us,O=0,S=64KiB"


def _alltoall_on_a_tree(out: Path, say: Callable[[str], None], files: list, small: bool) -> dict:
    from hypercuboid import phases, plot
    from hypercuboid.schedules import alltoall

    topo = "tree:fig5b"
    say(f"5. Alltoall on the Faraj-Yuan seed's tree {topo} (4 switches of 8 machines)")
    r = phases.alltoall_phases(topo)
    png = phases.plot_occupancy(r, out / "fig5b-phases.png")
    files.append(str(png))
    say(
        f"   {r.phases} contention-free phases (the bottleneck link carries {r.load} messages: "
        f"optimal {_yes(r.optimal)}), rooted at switch {r.root};"
    )
    say(
        f"   every pair sent once: {_yes(r.complete)}; no link shared within a phase: "
        f"{_yes(r.contention_free)}"
    )
    say(f"   {png}: which directed link each phase uses")
    n = 32
    algs = {
        "LAM (linear)": "linear",
        "MPICH (linear_shifted)": "linear_shifted",
        "ours (scheduled)": f"scheduled:topo={topo}",
    }
    sizes = (8,) if small else (8, 32)
    rows: list[list[str]] = []
    result: list[dict[str, Any]] = []
    for kb in sizes:
        times = {}
        for label, alg in algs.items():
            s = alltoall(alg, n, count=kb * 1024, dtype="uint8")
            res = s.simulate(ETHERNET_HOST, network=f"{topo},switch=ethernet", level="packet")
            times[label] = res.completion_time_ns / 1e6
        seed = SEED_FIG5B_MS[kb]
        lam, ours = times["LAM (linear)"], times["ours (scheduled)"]
        rows.append(
            [f"{kb} KB", *(f"{t:,.1f}" for t in times.values()), f"{lam / ours:.2f}x"]
            + [" / ".join(f"{x:,.0f}" for x in seed)]
        )
        result.append({"kb": kb, "ms": times, "seed_ms": dict(zip(algs, seed, strict=True))})
    say("   simulated on Ethernet switches (store-and-forward, 802.3x PAUSE), packet level,")
    say(f"   hosts {ETHERNET_HOST}; completion in ms:")
    _say_table(say, ["message", *algs, "LAM / ours", "seed measured (LAM / MPICH / ours)"], rows)
    labels = [f"{label}, {x['kb']} KB" for x in result for label in algs]
    values = [x["ms"][label] * 1e6 for x in result for label in algs]
    png = plot.bar_comparison(
        labels,
        values,
        out / "fig5b-alltoall.png",
        title=f"alltoall, {n} machines on {topo}, Ethernet",
    )
    files.append(str(png))
    say(f"   {png}: the same as bars")
    from hypercuboid import library

    picks = {
        lib: [library.choice(lib, "alltoall", n, kb * 1024, dtype="uint8") for kb in sizes]
        for lib in ("openmpi", "mpich")
    }
    for lib, cs in picks.items():
        said = ", ".join(
            f"{kb} KB {c.native} (ours: {c.algorithm})" for kb, c in zip(sizes, cs, strict=True)
        )
        say(f"   what {lib} would run here (hypercuboid schedule library): {said}")
    say("")
    return {
        "phases": r.phases,
        "load": r.load,
        "optimal": r.optimal,
        "runs": result,
        "library": {lib: [c.algorithm for c in cs] for lib, cs in picks.items()},
    }


def _slimfly(out: Path, say: Callable[[str], None], files: list, small: bool) -> dict:
    from hypercuboid import plot
    from hypercuboid.schedules import allreduce

    topo, n = "slimfly:q=5", 150
    count = 1024 if small else 128 * 1024
    host = "loggops:L=1us,o=1us,g=100ns,G=0.04ns"
    say(f"6. A schedule on a Slim Fly ({topo}: 50 routers, 200 endpoints, diameter 2)")
    s = allreduce("ring", n, count)
    rows, result = [], {}
    for level in ("packet", "flow"):
        t0 = time.perf_counter()
        res = s.simulate(host, network=topo, level=level, link_timeline=True)
        wall = time.perf_counter() - t0
        net = res.network
        assert net is not None
        png = plot.link_utilisation(
            res, out / f"slimfly-{level}.png", title=f"ring allreduce on {topo}, {level} level"
        )
        files.append(str(png))
        rows.append(
            [
                level,
                f"{res.completion_time_ns:,.1f}",
                f"{net.messages:,}",
                f"{net.mean_network_utilisation:.3f}",
                f"{net.queued_ps / 1e6:,.1f}",
                f"{wall:.2f}",
            ]
        )
        result[level] = {
            "completion_ns": res.completion_time_ns,
            "messages": net.messages,
            "mean_network_utilisation": net.mean_network_utilisation,
            "queued_ns": net.queued_ps / 1e3,
        }
    say(f"   ring allreduce of {count * 8 // 1024} KiB on {n} ranks, minimal routing,")
    say(f"   hosts {host}")
    _say_table(
        say, ["level", "completion ns", "messages", "mean link use", "queued us", "wall s"], rows
    )
    a, b = result["packet"]["completion_ns"], result["flow"]["completion_ns"]
    say(f"   the two levels agree within {abs(a - b) / a * 100:.2f} %; the busiest links over")
    say(f"   time: {out / 'slimfly-packet.png'}, {out / 'slimfly-flow.png'}")
    from hypercuboid import topology

    xml = out / "slimfly.xml"
    topology.export(topo, "simgrid", xml, force=True)
    back = topology.load(xml)
    files.append(str(xml))
    say(
        f"   {xml}: the same network as a SimGrid platform; read back: {back.num_routers} "
        f"routers, {back.num_endpoints} endpoints"
    )
    say("")
    return result


def _halo(out: Path, say: Callable[[str], None], files: list, small: bool) -> dict:
    from hypercuboid import halo, plot

    sub = (8, 8, 8) if small else (32, 32, 32)
    calls = 2 if small else 20
    kernel = "5ns"
    model = MODELS["loggops"]
    d = halo.Decomposition.of_subdomain(sub, (4, 3, 2))
    say(
        f"7. Halo exchanges side by side: 24 ranks (4x3x2) of {'x'.join(map(str, sub))} sites, "
        f"19 float64 values a site,"
    )
    say(f"   the lattice update at {kernel} a site, {calls} calls under {model}")
    variants = ["blocking", "nonblocking", "nonblocking:overlap=on", "reduced"]
    rows, result = [], {}
    for v in variants:
        s = halo.schedule(v, d, kernel=kernel)
        rep = s.verify()
        res = s.simulate(model, calls=calls)
        per_call = res.completion_time_ns / calls
        rows.append([v, str(s.total_ops), _yes(rep.sound), f"{per_call / 1e3:,.1f}"])
        result[v] = {"ops": s.total_ops, "sound": rep.sound, "per_call_ns": per_call}
    _say_table(say, ["variant", "ops", "sound", "us per call"], rows)
    png = plot.bar_comparison(
        variants,
        [result[v]["per_call_ns"] for v in variants],
        out / "halo-variants.png",
        title=f"halo exchange + update per call, 24 ranks of {'x'.join(map(str, sub))}",
    )
    files.append(str(png))
    say(f"   {png}: the same as bars")
    say("")
    return result


def _mpiexec() -> tuple[list[str], dict[str, str]] | None:
    """The launcher beside this Python (the MPI wheels put it there) or on PATH, with the
    arguments and environment of a small shared-memory run; None without one or mpi4py."""
    here = Path(sys.executable).parent / "mpiexec"
    exe = str(here) if here.exists() else shutil.which("mpiexec")
    if exe is None:
        return None
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    env = dict(os.environ)
    cmd = [exe]
    if "Open MPI" in version:
        # more ranks than cores, as root in containers, shared memory only: as `make test-mpi`
        cmd += ["--oversubscribe", "--bind-to", "none"]
        env.update(
            OMPI_ALLOW_RUN_AS_ROOT="1",
            OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
            OMPI_MCA_pml="ob1",
            OMPI_MCA_btl="self,sm",
            OMPI_MCA_mpi_yield_when_idle="1",
        )
    return cmd, env


def _mpi(out: Path, say: Callable[[str], None], files: list) -> dict | None:
    launcher = _mpiexec()
    if launcher is None:
        say("8. MPI: skipped, no mpiexec with mpi4py here (pip install 'hypercuboid[mpi]')")
        say("")
        return None
    mpiexec, env = launcher
    ranks = 4
    cli = [sys.executable, "-c", "from hypercuboid.cli import main; main()"]
    say(f"8. Under mpiexec -n {ranks} (shared memory; more ranks than cores is fine)")
    bench_json, bench_png = out / "mpi-bench.json", out / "mpi-bench.png"
    bench = [
        *mpiexec, "-n", str(ranks), *cli, "bench", "allreduce",
        "--algorithm", "recursive_doubling,ring,native", "--sizes", "8,64K",
        "--runner", "native", "--iterations", "10", "--warmup", "2", "--check",
        "--plot", str(bench_png), "--json", str(bench_json), "--quiet", "--force",
        "--timeout", "240",
    ]  # fmt: skip
    printed = _run(bench, env, "bench")
    say("   hypercuboid bench allreduce --runner native: the schedules run by the compiled C")
    say("   runner, beside the library's MPI_Allreduce ('native'), each result checked:")
    for line in printed.strip().splitlines():
        say("   " + line)
    files += [str(bench_png), str(bench_json)]
    lbm = [
        *mpiexec, "-n", str(ranks), *cli, "lbm", "run", "--lattice", "32x32x32",
        "--steps", "10", "--halo", "reduced", "--overlap", "--quiet", "--timeout", "240",
        "--json",
    ]  # fmt: skip
    res = json.loads(_run(lbm, env, "lbm run"))
    (out / "mpi-lbm.json").write_text(json.dumps(res, indent=2) + "\n")
    say(
        f"   hypercuboid lbm run: D3Q19 on a 32^3 lattice over {res['ranks']} ranks "
        f"({'x'.join(map(str, res['decomp']))}), the reduced halo"
    )
    say(
        f"   overlapped with the interior: {res['steps']} steps, {res['mlups']:.2f} MLUPS; halo "
        f"{res['halo_s']:.3f} s, kernel {res['kernel_s']:.3f} s; mass {res['mass']:,.3f}"
    )
    png = _lbm_plot(res, out / "mpi-lbm.png")
    files += [str(png), str(out / "mpi-lbm.json")]
    say(f"   {bench_png}, {png}: latency by size; halo and kernel time per step")
    model = out / "model.json"
    _run(
        [*mpiexec, "-n", "2", *cli, "calibrate", "-o", str(model), "--force", "-q",
         "--timeout", "240"], env, "calibrate",
    )  # fmt: skip
    files.append(str(model))
    from hypercuboid import predict as hp

    mf = hp.read_model_file(model)
    say(f"   hypercuboid calibrate (2 ranks): {mf.model}")
    say(f"   {' ' * 30}{mf.node}   ({model})")
    p = hp.predict(
        "allreduce", [8, 64 * 1024, 1 << 20], [16], mf.model,
        algorithms=["recursive_doubling", "ring", "rabenseifner", "tree"], node=mf.node,
    )  # fmt: skip
    bests = [(b, p.best(16, b)) for b in p.sizes]
    picks = ", ".join(f"{_size(b)} {best.algorithm}" for b, best in bests if best)
    say(f"   hypercuboid predict with it at 16 ranks (its node level as fitted): best {picks}")
    traced = _trace_lbm(out, cli, [*mpiexec, "-n", str(ranks), *cli], env)
    if traced is None:
        say("   hypercuboid trace: skipped (no libhc_trace.so: make native builds it)")
    else:
        files.append(str(traced["path"]))
        say(
            f"   hypercuboid trace run of a 16^3 lbm run: {traced['records']:,} MPI calls on "
            f"{ranks} ranks, converted to a schedule of {traced['ops']:,} ops ({traced['path']})"
        )
    say("")
    return {
        "bench": json.loads(bench_json.read_text()),
        "lbm": res,
        "model": mf.model,
        "node": mf.node,
        "trace": None if traced is None else {k: traced[k] for k in ("records", "ops")},
    }


def _size(b: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale and b % scale == 0:
            return f"{b // scale} {unit}"
    return f"{b} B"


def _run(cmd: list[str], env: dict[str, str], what: str) -> str:
    """Runs an mpiexec command line of the demo and returns its stdout (a failure raises
    with its stderr)."""
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"mpiexec {what} failed ({r.returncode}):\n{r.stderr.strip()}")
    return r.stdout


def _trace_lbm(out: Path, cli: list[str], launch: list[str], env: dict[str, str]) -> dict | None:
    """Records a small lbm run (``launch``: mpiexec and the CLI) with ``cli trace run`` and
    converts it; None without the recorder."""
    from hypercuboid import apptrace

    try:
        apptrace.library_path(apptrace.which_mpi(launch[0]))
    except ValueError:
        return None
    hct = out / "lbm.hct"
    hct.unlink(missing_ok=True)
    lbm = ["lbm", "run", "--lattice", "16x16x16", "--steps", "5", "--quiet", "--timeout", "240"]
    _run([*cli, "trace", "run", "-o", str(hct), "--", *launch, *lbm], env, "trace run")
    c = apptrace.AppTrace.load(hct).convert()
    return {"path": hct, "records": c.records, "ops": c.schedule.total_ops}


def _lbm_plot(res: dict, path: Path) -> Path:
    from hypercuboid.plot import _pyplot

    plt = _pyplot()
    steps = range(1, len(res["per_step"]) + 1)
    halo = [s["halo_s"] * 1e3 for s in res["per_step"]]
    kernel = [s["kernel_s"] * 1e3 for s in res["per_step"]]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.bar(steps, kernel, color="#55A868", label="kernel")
    ax.bar(steps, halo, bottom=kernel, color="#4C72B0", label="halo exchange")
    ax.set_xlabel("step")
    ax.set_ylabel("ms (slowest rank)")
    ax.set_title(f"lbm run, {res['ranks']} ranks, halo {res['halo']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
