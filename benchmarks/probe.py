"""A hostile-input probe of every verb (issue 34): 1,115 bad inputs to the CLI, its files and
specs, the Python API and the MPI verbs under mpiexec (the second stop's verbs are in
``probe_verbs.py``), each run in its own process with a timeout and classified.

Classes: ``valid`` (exit 0), ``clean`` (exit != 0 with exactly one non-empty line on stderr that
holds no "Traceback", "panicked" or "RUST_BACKTRACE"), ``traceback``, ``panic``, ``hang`` (past
the timeout, then again alone with a longer one), ``overwrite`` (a file that existed before a
run without ``--force`` has other bytes after it), ``unclear`` (exit != 0 with no line or more
than one). Python API cases run a
call and print ``ExceptionClass: message`` in one line for a ``ValueError``, ``TypeError``,
``LookupError``, ``OSError`` or ``HypercuboidError`` (exit 2); anything else (a
``PanicException``, an ``OverflowError``, an ``AttributeError``) is a traceback.

    python benchmarks/probe.py --out /tmp/probe.json       # minutes; a pool of 2
    python benchmarks/probe.py --only topo --verbose

It is a benchmark, not a test: ``tests/test_hostile.py`` and ``tests/test_probe_regressions.py``
hold a fast selection of its cases. 2026-11-28 (2 shared cores, load 10-20): 1,114 of 1,115
valid or clean (99.9 %): no traceback, panic, hang or overwrite; one warning line before an
error (``tune allreduce --model-file`` of a LogGOPS file measured at other ranks).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import probe_verbs

TIMEOUT = 10.0
#: A case past TIMEOUT runs again alone with this one before it counts as a hang (a loaded
#: machine makes a slow valid run look like a hang).
RETRY_TIMEOUT = 60.0
KEEP = b"KEEP: this file existed before the run\n"
CLI = [sys.executable, "-c", "from hypercuboid.cli import main; main()"]
API_HEAD = (
    "import sys, math\n"
    "import hypercuboid as hc\n"
    "from hypercuboid import schedules, topology\n"
    "import hypercuboid.library, hypercuboid.tune\n"
    "from hypercuboid import modelfile as mf, predict as hp\n"
    "from hypercuboid.apptrace import AppTrace, library_path, record, synthetic\n"
    "from hypercuboid.otf2_import import otf2_to_goal\n"
    "P = 'postal:alpha=1us'\n"
    "from hypercuboid.errors import HypercuboidError\n"
    "try:\n"
)
API_TAIL = (
    "\nexcept (ValueError, TypeError, LookupError, OSError, HypercuboidError) as e:\n"
    "    print(f'{type(e).__name__}: {e}'.replace(chr(10), ' '), file=sys.stderr)\n"
    "    sys.exit(2)\n"
)

# Numbers, sizes and times a hostile user types.
NUMBERS = ["-1", "0", "nan", "inf", "-inf", "", "abc", "1e999", "99999999999999999999999", "1.5"]
SIZES = ["-1B", "0", "nan", "inf", "1ZiB", "", "12XB", "1e999B", "99999999999999999999999B"]
TIMES = ["-1us", "nan", "inf", "", "1parsec", "1e999s", "0x10ns", "99999999999999999999999ns"]
BIG = "9" * 100_000  # an argument may not exceed 128 KiB (MAX_ARG_STRLEN)

SIM = ["simulate", "allreduce", "-a", "ring", "-n", "4", "-c", "8", "-m", "postal:alpha=1us"]
VER = ["schedule", "verify", "allreduce", "-a", "ring", "-n", "4"]
#: The newcomer's case of issue 34 (after --network SPEC): a 1 Gb/s tree of Ethernet switches.
NEWCOMER = "--model loggops:o=10us,g=10us,O=0,S=64KiB alltoall -a linear -n 8 -c 131072".split()
NETRUN = ["netsim", "run", "-t", "slimfly:q=5", "--load", "0.1", "-j", "1"]
TREE = ["simulate", "-t", "tree:fig5b", "-m", "loggops:o=1us,g=1us,S=64KiB"]


def cases(d: Path) -> list[dict]:
    """The table: each case is ``{name, argv}`` (CLI) or ``{name, code}`` (Python API), with
    ``keep`` (a file that must survive) where the case writes onto an existing file."""
    out: list[dict] = []

    def cli(name: str, *argv: str, keep: str | None = None) -> None:
        out.append({"name": name, "argv": list(argv), "keep": keep})

    def api(name: str, code: str, keep: str | None = None) -> None:
        out.append({"name": name, "code": code, "keep": keep})

    def mpi(name: str, np: int, *argv: str, keep: str | None = None) -> None:
        out.append({"name": name, "argv": list(argv), "np": np, "keep": keep})

    f = {k: str(d / k) for k in ("empty", "dir", "garbage", "trunc.json", "keep.txt", "big.txt")}
    f["zero"] = "/dev/zero"
    f["missing"] = str(d / "no-such-file")

    # Numbers of every numeric option.
    for v in NUMBERS:
        cli(f"simulate -n {v!r}", *SIM[:4], "-n", v, "-c", "8", "-m", "postal:alpha=1us")
        cli(f"simulate -c {v!r}", *SIM[:6], "-c", v, "-m", "postal:alpha=1us")
        cli(f"simulate --seed {v!r}", *SIM, "--noise", "exp:mean=1us", "--seed", v)
        cli(f"simulate --calls {v!r}", *SIM, "--calls", v)
        cli(f"simulate --threads {v!r}", *SIM, "--threads", v)
        cli(f"verify -n {v!r}", *VER[:5], "-n", v)
        cli(f"verify --max-problems {v!r}", *VER, "--max-problems", v)
        cli(f"verify --eager-limit {v!r}", *VER, "--eager-limit", v)
        cli(f"verify --threads {v!r}", *VER, "--threads", v)
        cli(f"tune --pool {v!r}", "tune", "allreduce", "-n", "8", "--pool", v)
        cli(f"topo compare --radix {v!r}", "topo", "compare", "--radix", v)
        cli(f"netsim -j {v!r}", "netsim", "run", "-t", "slimfly:q=5", "--load", "0.1", "-j", v)
        cli(
            f"simulate --top-links {v!r}",
            *TREE,
            "allreduce",
            "-a",
            "ring",
            "-n",
            "4",
            "--top-links",
            v,
        )
        cli(
            f"simulate --ranks-per-endpoint {v!r}",
            *TREE,
            "allreduce",
            "-a",
            "ring",
            "-n",
            "4",
            "--ranks-per-endpoint",
            v,
        )
        cli(f"--load {v!r}", "netsim", "run", "-t", "slimfly:q=5", "--load", v, "-j", "1")
    for v in SIZES:
        cli(f"--packet-size {v!r}", *TREE, "allreduce", "-a", "ring", "-n", "4", "--packet-size", v)
        cli(f"--buffer {v!r}", *TREE, "allreduce", "-a", "ring", "-n", "4", "--buffer", v)
        cli(f"--memory-limit {v!r}", "--memory-limit", v, *VER)
    for v in TIMES:
        cli(
            f"--switch-latency {v!r}",
            *TREE,
            "allreduce",
            "-a",
            "ring",
            "-n",
            "4",
            "--switch-latency",
            v,
        )
        cli(f"netsim --time {v!r}", *NETRUN, "--time", v)
        cli(f"netsim --warmup {v!r}", *NETRUN, "-x", v)
        cli(f"model alpha={v!r}", *SIM[:8], "-m", f"postal:alpha={v}")
        cli(f"loggops o={v!r}", *SIM[:8], "-m", f"loggops:o={v},g=1us")
        cli(f"noise mean={v!r}", *SIM, "--noise", f"exp:mean={v}")
    cli("--load 0.1,,0.2", "netsim", "run", "-t", "slimfly:q=5", "--load", "0.1,,0.2")
    cli("--load 0.1:1:1e-7", "netsim", "run", "-t", "slimfly:q=5", "--load", "0.1:1:1e-7")
    cli("--load 1:0.1:0.1", "netsim", "run", "-t", "slimfly:q=5", "--load", "1:0.1:0.1")
    cli("--load 2", "netsim", "run", "-t", "slimfly:q=5", "--load", "2")
    cli("huge -n", *VER[:5], "-n", "4294967294")
    cli("huge simulate -n", *SIM[:4], "-n", "200000", "-c", "1", "-m", "postal:alpha=1us")
    cli(
        "verify alltoall huge", "schedule", "verify", "alltoall", "-a", "linear", "-n", "4294967294"
    )
    cli(
        "export c huge",
        "schedule",
        "export",
        "--format",
        "c",
        "allreduce",
        "-a",
        "ring",
        "-n",
        "2147483648",
    )

    # Specs: unknown names and keys, repeated keys, huge values.
    for spec in [
        "nosuch:q=5",
        "slimfly:q=5,q=7",
        "slimfly:zz=1",
        "slimfly:q=",
        "slimfly:q=abc",
        "slimfly:q=1000003",
        "slimfly",
        "",
        ":",
        "torus:dims=1000x1000",
        "torus:dims=0x4",
        "torus:dims=-1x4",
        "fattree:k=3,levels=3",
        "fattree:k=8,levels=99",
        "oft:k=0",
        "hyperx:s=8x8,p=-1",
        "tree:nosuch",
        f"tree:{f['missing']}.json",
        f"tree:{f['garbage']}",
        f"slimfly:q={BIG}",
        "slimfly:q=5,,p=1",
        "mlfm:h=1",
        "dragonfly:a=0",
    ]:
        cli(f"topo show {spec[:40]!r}", "topo", "show", spec)
    for m in [
        "postal:alpha=1us,alpha=2us",
        "postal:zz=1",
        "nosuch:a=1",
        "postal:",
        "postal",
        "loggops:S=-1",
        "loggops:G=nan",
        "pipelined:alpha_p=1us",
        f"postal:alpha={BIG}",
        "postal:alpha=1us,beta=inf",
        "loggops:L=1,L=2",
        "postal:alpha=1 us",
        "1e999",
    ]:
        cli(f"model {m[:40]!r}", *SIM[:8], "-m", m)
    for n in [
        "nosuch",
        "exp",
        "exp:mean=-1us",
        "uniform:min=2us,max=1us",
        "normal:sd=-1",
        "exp:mean=1us,mean=2us",
        f"exp:mean={BIG}",
        "none:x=1",
    ]:
        cli(f"noise {n[:40]!r}", *SIM, "--noise", n)
    for a in [
        "nosuch",
        "",
        "ring,ring",
        "recursive_multiplying:",
        "recursive_multiplying:zz",
        f"recursive_multiplying:{BIG}",
        "RING",
        "ring:x=1",
    ]:
        cli(f"algorithm {a[:40]!r}", *VER[:3], "-a", a, "-n", "4")
    for r in [
        "nosuch",
        "min:vcs=none",
        "ugal:n=-1",
        "ugal:n=1,n=2",
        "ugal-th:t=nan",
        "min:zz=1",
        "",
    ]:
        cli(f"netsim cdg -r {r!r}", "netsim", "cdg", "-t", "slimfly:q=5", "-r", r)
    for t in ["nosuch", "shift:", "shift:-1", "shift:abc", "uniform,uniform", ""]:
        cli(
            f"--traffic {t!r}",
            "netsim",
            "run",
            "-t",
            "slimfly:q=5",
            "--traffic",
            t,
            "--load",
            "0.1",
            "-j",
            "1",
        )
    for dt in ["float128", "", "None", "int7"]:
        cli(f"--dtype {dt!r}", *VER, "--dtype", dt)
    for op in ["avg", "", "SUM,MAX"]:
        cli(f"--op {op!r}", *VER, "--op", op)
    for dec in [
        "1000x1000x1000",
        "0x2x2",
        "2x2",
        "axbxc",
        "2x2x2x2",
        "-2x2x2",
        "9" * 5000 + "x2x2",
    ]:
        cli(
            f"--decomp {dec[:30]!r}",
            "schedule",
            "verify",
            "halo",
            "-a",
            "blocking",
            "--decomp",
            dec,
            "--subdomain",
            "2x2x2",
        )
    for pr in ["3-1", "a-b", "0,,1", "-1", "0-99999999999999999999", ""]:
        cli(
            f"--plot-ranks {pr!r}", *SIM, "--plot", str(d / "pr.png"), "--plot-ranks", pr, "--force"
        )
    for mp in [
        "nosuch",
        "random:seed=-1",
        "random:seed=abc",
        "file:",
        f"file:{f['missing']}",
        f"file:{f['empty']}",
        f"file:{d / 'comment.map'}",
        f"file:{d / 'short.map'}",
        f"file:{f['garbage']}",
        f"file:{f['dir']}",
    ]:
        cli(f"--mapping {mp[-30:]!r}", *TREE, "allreduce", "-a", "ring", "-n", "4", "--mapping", mp)
        cli(
            f"alltoall generate --mapping {mp[-30:]!r}",
            "alltoall",
            "generate",
            "-t",
            "tree:fig5b",
            "--mapping",
            mp,
            "-o",
            str(d / "gen-out.c"),
            "--force",
        )

    # Files: missing, empty, directories, /dev/zero, garbage, truncated.
    for k in ("missing", "empty", "dir", "zero", "garbage", "trunc.json"):
        cli(f"verify --goal {k}", "schedule", "verify", "--goal", f[k])
        cli(f"simulate --goal {k}", "simulate", "--goal", f[k], "-m", "postal:alpha=1us")
        cli(f"--model-file {k}", *SIM[:8], "--model-file", f[k])
        cli(f"topo show tree:{k}", "topo", "show", f"tree:{f[k]}")
        cli(f"alltoall phases tree:{k}", "alltoall", "phases", "-t", f"tree:{f[k]}")
    for i, text in enumerate(
        [
            "num_ranks 2\nrank 0 {\nl1: send 8b to 1\n}\n",
            "num_ranks 2\nrank 0 {\nl1: send 8b to 5 tag 0\n}\nrank 1 {\n}\n",
            "num_ranks -1\n",
            "num_ranks 4294967294\nrank 0 {\n}\n",
            "num_ranks 2\nrank 0 {\nl1: calc nan\n}\nrank 1 {\n}\n",
            "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\nl1 requires l9\n}\nrank 1 {\n}\n",
            "num_ranks 2\nrank 0 {\nl1: frobnicate\n}\nrank 1 {\n}\n",
            "num_ranks 1\nrank 0 {\nl1: calc 99999999999999999999999\n}\n",
            "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\n",
            "rank 0 {\n}\n",
            "num_ranks 1\nrank 0 {\nl1: calc 1\nl1: calc 2\n}\n",
            "num_ranks 1\nrank 0 {\nl1: calc 1\nl1 requires l1\n}\n",
            "num_ranks 2\n" + "x" * 200_000 + "\n",
        ]
    ):
        p = d / f"goal{i}.goal"
        p.write_text(text)
        cli(f"verify goal{i}", "schedule", "verify", "--goal", str(p))
        cli(f"simulate goal{i}", "simulate", "--goal", str(p), "-m", "postal:alpha=1us")

    # Outputs: existing files (no --force), '' and unknown plot extensions.
    keep = f["keep.txt"]
    kj = str(d / "keep.json")
    kp = str(d / "keep.png")
    kv = str(d / "keep.csv")
    kc = str(d / "keep.c")
    for name, argv, k in [
        ("topo export -o existing", ["topo", "export", "slimfly:q=5", "-o", kj], kj),
        (
            "schedule generate -o existing",
            ["schedule", "generate", "allreduce", "-a", "ring", "-n", "4", "-o", keep],
            keep,
        ),
        (
            "schedule export -o existing",
            [
                "schedule",
                "export",
                "--format",
                "goal",
                "-o",
                keep,
                "allreduce",
                "-a",
                "ring",
                "-n",
                "4",
            ],
            keep,
        ),
        ("simulate --json existing", [*SIM, "--json", kj], kj),
        ("simulate --trace existing", [*SIM, "--trace", kj], kj),
        ("simulate --plot existing", [*SIM, "--plot", kp], kp),
        (
            "simulate --csv existing",
            [*TREE, "--csv", kv, "allreduce", "-a", "ring", "-n", "4"],
            kv,
        ),
        (
            "simulate --plot-links existing",
            [*TREE, "--plot-links", kp, "allreduce", "-a", "ring", "-n", "4"],
            kp,
        ),
        ("verify --json existing", [*VER, "--json", kj], kj),
        (
            "alltoall phases --plot existing",
            ["alltoall", "phases", "-t", "tree:fig5b", "--plot", kp],
            kp,
        ),
        (
            "alltoall phases --json existing",
            ["alltoall", "phases", "-t", "tree:fig5b", "--json", kj],
            kj,
        ),
        (
            "alltoall generate -o existing",
            ["alltoall", "generate", "-t", "tree:fig5b", "-o", kc],
            kc,
        ),
        ("netsim cdg --json existing", ["netsim", "cdg", "-t", "slimfly:q=5", "--json", kj], kj),
        (
            "netsim run --plot existing",
            [
                "netsim",
                "run",
                "-t",
                "slimfly:q=5",
                "--load",
                "0.1",
                "-j",
                "1",
                "--time",
                "2us",
                "-x",
                "1us",
                "--plot",
                kp,
            ],
            kp,
        ),
        ("tune --json existing", ["tune", "allreduce", "-n", "8", "--json", kj], kj),
        ("topo compare --json existing", ["topo", "compare", "--radix", "8", "--json", kj], kj),
    ]:
        cli(name, *argv, keep=k)
    for name, argv in [
        ("topo export -o ''", ["topo", "export", "slimfly:q=5", "-o", ""]),
        (
            "schedule generate -o ''",
            ["schedule", "generate", "allreduce", "-a", "ring", "-n", "4", "-o", ""],
        ),
        ("simulate --json=''", [*SIM, "--json="]),
        ("simulate --trace ''", [*SIM, "--trace", ""]),
        ("simulate --plot ''", [*SIM, "--plot", ""]),
        ("simulate --plot out.xyz", [*SIM, "--plot", str(d / "out.xyz")]),
        (
            "simulate --plot-links out.xyz",
            [*TREE, "--plot-links", str(d / "o.xyz"), "allreduce", "-a", "ring", "-n", "4"],
        ),
        (
            "alltoall phases --plot out.xyz",
            ["alltoall", "phases", "-t", "tree:fig5b", "--plot", str(d / "o.xyz")],
        ),
        (
            "netsim run --plot out.xyz",
            ["netsim", "run", "-t", "slimfly:q=5", "--load", "0.1", "--plot", str(d / "o.xyz")],
        ),
        ("topo export -o dir", ["topo", "export", "slimfly:q=5", "-o", f["dir"]]),
        (
            "topo export -o missing dir",
            ["topo", "export", "slimfly:q=5", "-o", str(d / "nodir" / "x.json")],
        ),
        ("topo export -o x.weird", ["topo", "export", "slimfly:q=5", "-o", str(d / "x.weird")]),
        ("simulate --trace dir", [*SIM, "--trace", f["dir"]]),
        ("simulate --trace /dev/full", [*SIM, "--trace", "/dev/full", "--force"]),
    ]:
        cli(name, *argv)

    # Misc CLI: unknown options and verbs, odd argument shapes.
    for name, argv in [
        ("unknown verb", ["frobnicate"]),
        ("unknown option", ["simulate", "--frob"]),
        ("simulate no collective", ["simulate", "-m", "postal:alpha=1us"]),
        ("--packet-size without --network", [*SIM, "--packet-size", "1KiB"]),
        ("alltoall sync star", ["alltoall", "sync", "-t", "tree:fig1"]),
        ("topo compare --radix 256", ["topo", "compare", "--radix", "256"]),
        ("topo preset nosuch", ["topo", "preset", "nosuch"]),
        ("lbm huge lattice", ["lbm", "run", "--lattice", "1500x1500x1500", "--steps", "1"]),
        ("lbm lattice 0", ["lbm", "run", "--lattice", "0x4x4", "--steps", "1"]),
        ("lbm steps -1", ["lbm", "run", "--lattice", "8x8x8", "--steps", "-1"]),
        ("lbm init nosuch", ["lbm", "run", "--lattice", "8x8x8", "--init", "nosuch"]),
        (
            "lbm init file missing",
            ["lbm", "run", "--lattice", "8x8x8", "--init", f"file:{f['missing']}"],
        ),
        ("bench -a a3,a3", ["bench", "allreduce", "-a", "ring,ring"]),
        (
            "bench --dtype float128",
            ["bench", "allreduce", "-a", "ring", "--dtype", "float128", "--check"],
        ),
        (
            "simulate halo --calls 100000",
            [
                "simulate",
                "-m",
                "postal:alpha=1us",
                "--calls",
                "100000",
                "halo",
                "-a",
                "blocking",
                "--decomp",
                "2x2x2",
                "--subdomain",
                "2x2x2",
            ],
        ),
        (
            "netsim cdg slimfly min:vcs=none",
            ["netsim", "cdg", "-t", "slimfly:q=5", "-r", "min:vcs=none"],
        ),
        (
            "ethernet tree 1G alltoall",
            ["simulate", "--network", "tree:gbe,switch=ethernet", *NEWCOMER, "--dtype", "uint8"],
        ),
    ]:
        cli(name, *argv)
    for a in ("linear", "linear_shifted"):
        for t in ("tree1g.json", "fig5a-1g.json"):
            cli(
                f"ethernet tree {t} {a}",
                "simulate",
                "--network",
                f"tree:{d / t},switch=ethernet",
                *NEWCOMER[:4],
                a,
                *NEWCOMER[5:],
                "--dtype",
                "uint8",
            )

    # The Python API: wrong types and values.
    for name, code in [
        ("nranks='4'", "schedules.allreduce('ring', nranks='4')"),
        ("nranks=True", "schedules.allreduce('ring', nranks=True)"),
        ("nranks=-1", "schedules.allreduce('ring', nranks=-1)"),
        ("nranks=2**70", "schedules.allreduce('ring', nranks=2**70)"),
        ("nranks=4.0", "schedules.allreduce('ring', nranks=4.0)"),
        ("nranks=None", "schedules.allreduce('ring', nranks=None)"),
        ("count=nan", "schedules.allreduce('ring', nranks=4, count=math.nan)"),
        ("count=-1", "schedules.allreduce('ring', nranks=4, count=-1)"),
        ("count=2**64", "schedules.allreduce('ring', nranks=4, count=2**64)"),
        ("algorithm=123", "schedules.allreduce(123, nranks=4)"),
        ("algorithm=None", "schedules.allreduce(None, nranks=4)"),
        ("algorithm=''", "schedules.allreduce('', nranks=4)"),
        ("dtype=None", "schedules.allreduce('ring', nranks=4, dtype=None)"),
        ("dtype=float128", "schedules.allreduce('ring', nranks=4, dtype='float128')"),
        ("op=None", "schedules.allreduce('ring', nranks=4, op=None)"),
        ("alltoall nranks=0", "schedules.alltoall('linear', nranks=0)"),
        ("alltoall algorithm=b''", "schedules.alltoall(b'linear', nranks=4)"),
        ("simulate model=None", "schedules.allreduce('ring', 4).simulate(model=None)"),
        ("simulate model=123", "schedules.allreduce('ring', 4).simulate(model=123)"),
        ("simulate model=bad", "schedules.allreduce('ring', 4).simulate(model='postal:zz=1')"),
        (
            "simulate seed=-1",
            "schedules.allreduce('ring', 4).simulate(model='postal:alpha=1us',"
            " noise='exp:mean=1us', seed=-1)",
        ),
        (
            "simulate seed=2**80",
            "schedules.allreduce('ring', 4).simulate("
            "model='postal:alpha=1us', noise='exp:mean=1us', seed=2**80)",
        ),
        ("verify eager_limit=-1", "schedules.allreduce('ring', 4).verify(eager_limit=-1)"),
        ("verify threads=10**6", "schedules.allreduce('ring', 4).verify(threads=10**6)"),
        ("show ranks=[99]", "print(schedules.allreduce('ring', 4).show(ranks=[99]))"),
        ("program(-1)", "schedules.allreduce('ring', 4).program(-1)"),
        ("program(99)", "schedules.allreduce('ring', 4).program(99)"),
        ("parse garbage", "hc.parse_schedule('\\x00\\xff garbage')"),
        ("parse None", "hc.parse_schedule(None)"),
        ("read missing", f"hc.read_schedule({f['missing']!r})"),
        ("read dir", f"hc.read_schedule({f['dir']!r})"),
        ("read garbage", f"hc.read_schedule({f['garbage']!r})"),
        (
            "save format=bad",
            f"schedules.allreduce('ring', 4).save({str(d / 'x.txt')!r}, format='xml')",
        ),
        ("save to dir", f"schedules.allreduce('ring', 4).save({f['dir']!r})"),
        ("parse_model ''", "hc.parse_model('')"),
        ("parse_model None", "hc.parse_model(None)"),
        ("topology.generate None", "topology.generate(None)"),
        ("topology.generate bad", "topology.generate('slimfly:q=4')"),
        ("topology.generate huge", "topology.generate('torus:dims=1000x1000')"),
        ("topology.load missing", f"topology.load({f['missing']!r})"),
        ("topology.load garbage", f"topology.load({f['garbage']!r})"),
        ("topology.from_json '{}'", "topology.from_json('{}')"),
        ("topology.from_json '['", "topology.from_json('[')"),
        ("topology.export fmt=bad", "topology.export('slimfly:q=5', 'xml')"),
        ("topology.export to dir", f"topology.export('slimfly:q=5', 'json', {f['dir']!r})"),
        ("topology.bisection seeds=-1", "topology.bisection('slimfly:q=5', seeds=-1)"),
        ("topology.bisection method=bad", "topology.bisection('slimfly:q=5', method='zz')"),
        ("topology.compare radix=-1", "topology.compare(radix=-1)"),
        ("topology.compare radix='a'", "topology.compare(radix='a')"),
        ("tree_preset nosuch", "topology.tree_preset('nosuch')"),
        ("ml3b(-1)", "topology.ml3b(-1)"),
        ("halo bad decomp", "hc.halo.schedule('blocking', decomp=(0, 2, 2))"),
    ]:
        api(f"api {name}", code)
    api("api Schedule.save existing", f"schedules.allreduce('ring', 4).save({keep!r})", keep=keep)
    api(
        "api Schedule.save goal existing",
        f"schedules.allreduce('ring', 4).save({keep!r}, format='goal')",
        keep=keep,
    )
    api("api topology.export existing", f"topology.export('slimfly:q=5', 'json', {kj!r})", keep=kj)
    probe_verbs.cases(d, f, cli, api, mpi)
    return out


def fixtures(d: Path) -> None:
    """The files the cases read: empty, a directory, binary garbage, truncated JSON, mappings, a
    1 Gb/s tree."""
    (d / "empty").write_bytes(b"")
    (d / "dir").mkdir()
    (d / "garbage").write_bytes(bytes(range(256)) * 64)
    (d / "trunc.json").write_text('{"model": "postal:alpha=1us", "name": [1, 2')
    (d / "comment.map").write_text("# nothing but a comment\n\n")
    (d / "short.map").write_text("0\n1\n2\n")
    (d / "big.txt").write_text("x" * 200_000)
    for preset, name in (("fig5b", "tree1g.json"), ("fig5a", "fig5a-1g.json")):
        r = subprocess.run([*CLI, "topo", "preset", preset], capture_output=True, text=True)
        tree = json.loads(r.stdout) if r.returncode == 0 else {}
        (d / name).write_text(json.dumps(_gbps(tree)))
    probe_verbs.fixtures(d, CLI)


def _gbps(x):
    """``x`` (a tree's JSON) with every link's bandwidth set to 1 Gb/s."""
    if isinstance(x, dict):
        return {k: (1.0 if k == "bandwidth_gbps" else _gbps(v)) for k, v in x.items()}
    if isinstance(x, list):
        return [_gbps(v) for v in x]
    return x


def classify(rc: int | None, stderr: str, changed: bool, verdict: bool = False) -> str:
    """The class of one run (see the module's docstring); ``verdict``: the run printed a
    verdict on stdout and nothing on stderr (``schedule verify`` exits 1 on an unsound
    schedule), which is a valid run."""
    if changed:
        return "overwrite"
    if rc is None:
        return "hang"
    if "panicked" in stderr or "RUST_BACKTRACE" in stderr or "internal error" in stderr:
        return "panic"
    if "Traceback" in stderr:
        return "traceback"
    if rc == 0 or (verdict and rc == 1 and not stderr.strip()):
        return "valid"
    if rc < 0:
        return "panic"  # killed by a signal: an abort
    lines = [x for x in stderr.splitlines() if x.strip()]
    return "clean" if len(lines) == 1 else "unclear"


def run(case: dict, d: Path, timeout: float = TIMEOUT) -> dict:
    """Runs one case in a subprocess (its own working directory) and classifies it."""
    keep = case.get("keep")
    if keep:
        Path(keep).write_bytes(KEEP)
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    if "np" in case:
        argv, extra = probe_verbs.mpi_case(case["np"], case["argv"], CLI)
        env.update(extra)
    elif "argv" in case:
        argv = [*CLI, *case["argv"]]
    else:
        argv = [sys.executable, "-c", API_HEAD + "    " + case["code"] + API_TAIL]
    try:
        p = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            cwd=d,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        rc, err, out = p.returncode, p.stderr, p.stdout
    except subprocess.TimeoutExpired as e:
        rc, out = None, ""
        err = (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else ""
    changed = bool(keep) and Path(keep).read_bytes() != KEEP
    if "np" in case:
        err = probe_verbs.launcher_free(err)
    verdict = case.get("argv", [])[:2] == ["schedule", "verify"] and bool(out.strip())
    cls = classify(rc, err, changed, verdict)
    return {
        "name": case["name"],
        "argv": case.get("argv"),
        "code": case.get("code"),
        "np": case.get("np"),
        "class": cls,
        "rc": rc,
        "stderr": err[-2000:],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "probe.json"))
    ap.add_argument("--only", default=None, help="run the cases whose name holds this text")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--verbose", action="store_true", help="print every case's class")
    a = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="hc-probe-"))
    try:
        fixtures(d)
        table = [c for c in cases(d) if a.only is None or a.only in c["name"]]
        # A case that writes onto a file works on a copy of its own so that runs in parallel
        # do not share one.
        for i, c in enumerate(table):
            if c.get("keep"):
                own = d / f"case{i}" / Path(c["keep"]).name
                own.parent.mkdir()
                c["keep"] = str(own)
                if "argv" in c:
                    c["argv"] = [str(own) if x == str(d / own.name) else x for x in c["argv"]]
                else:
                    c["code"] = c["code"].replace(repr(str(d / own.name)), repr(str(own)))
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            results = list(pool.map(lambda c: run(c, d), table))
        for i, r in enumerate(results):
            if r["class"] == "hang":
                results[i] = run(table[i], d, RETRY_TIMEOUT)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    counts = Counter(r["class"] for r in results)
    good = counts["valid"] + counts["clean"]
    print(f"{len(results)} cases")
    for k in ("valid", "clean", "traceback", "panic", "hang", "overwrite", "unclear"):
        print(f"  {k:10s} {counts[k]:4d}")
    print(f"  good: {good}/{len(results)} = {100.0 * good / max(1, len(results)):.1f} %")
    for r in results:
        if a.verbose or r["class"] not in ("valid", "clean"):
            last = [x for x in r["stderr"].splitlines() if x.strip()][-1:] or [""]
            print(f"{r['class']:9s} {r['name']}: {last[0][:160]}")
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"counts": dict(counts), "cases": results}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
