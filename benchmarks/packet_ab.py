"""The packet engine alone, an earlier commit beside this working tree, side by side in one run.

Builds a small Rust driver twice, once over the core crate of ``--base`` (a git revision,
extracted with ``git archive``) and once over this working tree's, both with the release
profile of the workspace (fat LTO, one codegen unit). Each driver generates the topology, runs
uniform synthetic traffic for ``--duration`` with a ``--duration / 10`` warm-up, and prints the
delivered packets, the events, the engine's wall time and a fingerprint of the report (every
field but ``events``, ``wall_seconds`` and ``threads``). Runs alternate (base, new, base,
new, ...) for each thread count, ``--repeat`` times; the table gives the best and the median of
the CPU time of each process (user + system, all threads, from ``wait4``: what a machine
shared with other jobs disturbs least; it includes generating the network) and of the
engine's wall time, the peak resident memory of one process, and the load average after the
row's last run. The script stops if the fingerprints differ between the builds or between
thread counts. Writes ``benchmarks/results/packet_ab.json``.

    python benchmarks/packet_ab.py [--base main] [--topo slimfly:q=13,p=9] [--routing min]
                                   [--load 0.3] [--duration 200] [--threads 1,2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

import _out

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "packet_ab"

MAIN_RS = r"""
use hypercuboid_core::network::{NetParams, Network, RoutingSpec, Synthetic, TrafficSpec, Workload};
use hypercuboid_core::topology::generate;
use hypercuboid_core::units::us;
use std::hash::{Hash, Hasher};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let topo = generate(&a[1]).unwrap();
    let (load, dur, threads): (f64, u64, usize) =
        (a[3].parse().unwrap(), a[4].parse().unwrap(), a[5].parse().unwrap());
    let p = NetParams { threads, ..NetParams::default() };
    let net = Network::new(&topo, &RoutingSpec::parse(&a[2]).unwrap(), p).unwrap();
    let pattern = TrafficSpec::Uniform.resolve(&topo, net.routes(), 1).unwrap();
    let mut s = Synthetic::new(pattern, load);
    s.warmup = us(dur) / 10;
    s.duration = us(dur);
    let t0 = std::time::Instant::now();
    let mut r = net.run(&Workload::Synthetic(s), "uniform").unwrap();
    let engine = t0.elapsed().as_secs_f64();
    let events = r.events;
    r.events = 0;
    r.wall_seconds = 0.0;
    r.threads = 0;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{r:?}").hash(&mut h);
    println!(
        "{{\"delivered_total\": {}, \"events\": {}, \"engine_seconds\": {}, \
         \"fingerprint\": \"{:016x}\"}}",
        r.delivered_total, events, engine, h.finish()
    );
}
"""


def build(name: str, core: Path) -> Path:
    """Builds the driver over the core crate at `core`; returns its binary."""
    d = WORK / f"driver-{name}"
    (d / "src").mkdir(parents=True, exist_ok=True)
    (d / "Cargo.toml").write_text(
        f'[package]\nname = "packet-ab-{name}"\nversion = "0.1.0"\nedition = "2021"\n\n'
        f'[dependencies]\nhypercuboid-core = {{ path = "{core}" }}\n\n'
        '[profile.release]\nlto = "fat"\ncodegen-units = 1\n\n[workspace]\n'
    )
    (d / "src" / "main.rs").write_text(MAIN_RS)
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=d, check=True)
    return d / "target" / "release" / f"packet-ab-{name}"


def run(binary: Path, args: list[str]) -> dict:
    """One run of a driver: its JSON line, with the process's CPU and wall seconds."""
    t = time.perf_counter()
    p = subprocess.Popen([str(binary), *args], stdout=subprocess.PIPE, text=True)
    out = p.stdout.read() if p.stdout else ""
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise SystemExit(f"{binary.name} {' '.join(args)} failed (wait status {status})")
    r = json.loads(out)
    r["process_seconds"] = time.perf_counter() - t
    r["cpu_seconds"] = ru.ru_utime + ru.ru_stime
    r["peak_rss_mb"] = ru.ru_maxrss / 1024
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="main", help="git revision to compare with")
    ap.add_argument("--topo", default="slimfly:q=13,p=9")
    ap.add_argument("--routing", default="min")
    ap.add_argument("--load", default="0.3")
    ap.add_argument("--duration", type=int, default=200, help="simulated microseconds")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=3)
    _out.add(ap, "packet_ab.json")
    args = ap.parse_args()
    args.out = _out.path(args.out, "packet_ab.json")

    rev = subprocess.run(
        ["git", "rev-parse", "--short", args.base],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    src = WORK / f"src-{rev}"
    if not src.exists():
        src.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "archive", rev], cwd=ROOT, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    binaries = {
        f"base {rev}": build("base", src / "crates" / "hypercuboid-core"),
        "new": build("new", ROOT / "crates" / "hypercuboid-core"),
    }
    threads = [int(x) for x in args.threads.split(",")]
    runs: dict[tuple[str, int], list[dict]] = {}
    fingerprints = set()
    for _ in range(args.repeat):
        for th in threads:
            for name, b in binaries.items():
                r = run(b, [args.topo, args.routing, args.load, str(args.duration), str(th)])
                r["load_average"] = os.getloadavg()[0]
                runs.setdefault((name, th), []).append(r)
                fingerprints.add((r["fingerprint"], r["delivered_total"]))
    if len(fingerprints) != 1:
        raise SystemExit(f"the builds or thread counts gave different results: {fingerprints}")
    print(
        f"{args.topo} {args.routing} load {args.load}, {args.duration} us, "
        f"{args.repeat} runs each, identical results ({fingerprints.pop()[1]} packets)"
    )
    print(
        f"{'build':14} {'thr':>3} {'cpu s best':>10} {'cpu s med':>9} {'engine s best':>13} "
        f"{'engine s med':>12} {'Mpkt/cpu-s':>10} {'Mpkt/s':>7} {'RSS MB':>6} {'load':>5}"
    )
    rows = []
    for th in threads:
        for name in binaries:
            rs = runs[(name, th)]
            cpu = [r["cpu_seconds"] for r in rs]
            eng = [r["engine_seconds"] for r in rs]
            n = rs[0]["delivered_total"]
            row = {
                "build": name,
                "threads": th,
                "delivered_total": n,
                "events": rs[0]["events"],
                "cpu_seconds": cpu,
                "engine_seconds": eng,
                "load_average": [r["load_average"] for r in rs],
                "peak_rss_mb": max(r["peak_rss_mb"] for r in rs),
                "packets_per_cpu_second_best": n / min(cpu),
                "packets_per_second_best": n / min(eng),
            }
            rows.append(row)
            print(
                f"{name:14} {th:3d} {min(cpu):10.3f} {statistics.median(cpu):9.3f} "
                f"{min(eng):13.3f} {statistics.median(eng):12.3f} {n / min(cpu) / 1e6:10.3f} "
                f"{n / min(eng) / 1e6:7.3f} {row['peak_rss_mb']:6.0f} {rs[-1]['load_average']:5.2f}"
            )
    meta = {
        "base": rev,
        "topology": args.topo,
        "routing": args.routing,
        "load": float(args.load),
        "duration_us": args.duration,
        "repeat": args.repeat,
        "cpus": os.cpu_count(),
    }
    Path(args.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
