"""LogGOPS issue order side by side with LogGOPSim: program order and a stock build's order.

When one event frees many ops on a rank (an alltoall posts 2(N-1) at once), a stock LogGOPSim
issues them in the order its unstable ``std::sort`` by op type leaves them, which beyond 16 ops
permutes the sends among themselves and the receives among themselves. hypercuboid's LogGOPS
model issues them in program order by default (``loggops:...``, ``order=program``: LogGOPSim
built with ``std::stable_sort``) and in the stock order on request (``order=gcc``).

This script generates alltoall-like GOAL programs (12-32 ranks, every rank posting its N-1
receives and N-1 sends at once, in LAM's linear order or MPICH's shifted one; messages below and
above the eager limit S; O = 0 and O > 0) and one program that MPI's non-overtaking rule
decides (a trailer sent after 16 other sends, to the same peer with the same tag as the first),
runs each on both LogGOPSim builds and on hypercuboid in both orders, and prints completion
times and whether every rank's finish time agrees: stock <-> ``order=gcc`` and stable <->
``order=program``. It also counts, from hypercuboid's trace, the messages that landed in a
receive of another size (a message paired with the wrong receive).

LogGOPSim (spcl/LogGOPSim, public) is built outside this repository; this script never
contains its code. Either point ``LOGGOPSIM_SRC`` at a checkout (the repository, or its
``src/LogGOPSim`` folder): the script copies that folder to ``$TMPDIR/hypercuboid-loggopsim/``,
applies two one-line edits to the copy of ``LogGOPSim.cpp`` and runs its ``make`` (needs g++,
gengetopt, re2c and libcgraph: Debian's ``gengetopt re2c libgraphviz-dev``):

- both builds: print every host's finish time, not only for up to 16 hosts
  (``sed -i 's/if(p <= 16 \\&\\& !args_info.batchmode_given)/if(!args_info.batchmode_given)/'``);
- the stable build: ``sed -i 's/std::sort(free_ops.begin()/std::stable_sort(free_ops.begin()/'``.

Or give built binaries: ``LOGGOPSIM`` (stock), ``LOGGOPSIM_STABLE`` and ``TXT2BIN`` (default:
the ``txt2bin`` beside ``LOGGOPSIM``). Without the first edit a build prints only the maximum for
more than 16 ranks, and only that is compared. Without any of these the script says so and
exits 0. ``LOGGOPSIM_COMMIT`` names the commit in the JSON where the checkout is no git work tree.
Writes ``benchmarks/results/loggopsim_order.json``.

    LOGGOPSIM_SRC=/path/to/LogGOPSim python benchmarks/loggopsim_order.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import _out
import hypercuboid as hc

#: The two parameter sets (times in ns, S in bytes) and a message size below and above S.
PARAMS = {
    "O=0": ({"L": 3000, "o": 1500, "g": 1000, "G": 6, "O": 0, "S": 65535}, (1024, 100000)),
    "O>0": ({"L": 2500, "o": 200, "g": 500, "G": 2, "O": 1, "S": 4096}, (1000, 8000)),
}
RANKS = (12, 17, 24, 32)
STYLES = ("linear", "shifted")

PRINT_ALL = ("if(p <= 16 && !args_info.batchmode_given)", "if(!args_info.batchmode_given)")
STABLE = ("std::sort(free_ops.begin()", "std::stable_sort(free_ops.begin()")


@dataclass
class Program:
    """A GOAL program and the declared size of every receive, by (rank, op index)."""

    name: str
    text: str
    recv_bytes: dict[tuple[int, int], int]


class Goal:
    """Writes GOAL text rank by rank, ops labelled in program order."""

    def __init__(self, nranks: int):
        self.lines = [f"num_ranks {nranks}", ""]
        self.recv_bytes: dict[tuple[int, int], int] = {}
        self.rank = -1
        self.k = 0

    def begin(self, rank: int) -> None:
        self.rank, self.k = rank, 0
        self.lines.append(f"rank {rank} {{")

    def send(self, size: int, peer: int, tag: int = 0) -> None:
        self.lines.append(f"l{self.k}: send {size}b to {peer} tag {tag}")
        self.k += 1

    def recv(self, size: int, peer: int, tag: int = 0) -> None:
        self.recv_bytes[(self.rank, self.k)] = size
        self.lines.append(f"l{self.k}: recv {size}b from {peer} tag {tag}")
        self.k += 1

    def end(self) -> None:
        self.lines += ["}", ""]

    def program(self, name: str) -> Program:
        return Program(name, "\n".join(self.lines), self.recv_bytes)


def alltoall(n: int, size: int, style: str) -> Program:
    """Every rank posts its N-1 receives, then its N-1 sends, none depending on another: peers
    in ascending order (``linear``, LAM's post-everything alltoall) or rank+1, rank+2, ...
    (``shifted``, MPICH's scattered order)."""
    g = Goal(n)
    for r in range(n):
        if style == "linear":
            peers = [p for p in range(n) if p != r]
        else:
            peers = [(r + i) % n for i in range(1, n)]
        g.begin(r)
        for p in peers:
            g.recv(size, p)
        for p in peers:
            g.send(size, p)
        g.end()
    return g.program(f"alltoall_{style}{n}_{size}b")


def trailer(payload: int) -> Program:
    """17 ranks. Rank 0 sends a payload to rank 1, one message to each of ranks 2..16, then an
    8-byte trailer to rank 1 with the payload's tag; rank 1 receives the payload, then the
    trailer. MPI delivers them in that order (non-overtaking); a stock LogGOPSim issues the
    17th send before the first."""
    g = Goal(17)
    g.begin(0)
    g.send(payload, 1)
    for p in range(2, 17):
        g.send(payload, p)
    g.send(8, 1)
    g.end()
    g.begin(1)
    g.recv(payload, 0)
    g.recv(8, 0)
    g.end()
    for r in range(2, 17):
        g.begin(r)
        g.recv(payload, 0)
        g.end()
    return g.program(f"trailer17_{payload}b")


def cases() -> list[tuple[str, Program]]:
    out = []
    for pname, (_, sizes) in PARAMS.items():
        for style in STYLES:
            for n in RANKS:
                for size in sizes:
                    out.append((pname, alltoall(n, size, style)))
        for size in sizes:
            out.append((pname, trailer(size)))
    return out


def spec(params: dict[str, int], order: str | None) -> str:
    text = "loggops:" + ",".join(f"{k}={v}" for k, v in params.items())
    return text + (f",order={order}" if order else "")


# -- LogGOPSim -------------------------------------------------------------------------------
@dataclass
class Build:
    binary: Path
    txt2bin: Path


def edit(path: Path, old: str, new: str, count: int) -> None:
    text = path.read_text()
    if text.count(old) != count:
        raise SystemExit(
            f"{path}: expected {count} occurrence(s) of {old!r}, found {text.count(old)} "
            "(a LogGOPSim version this script does not know)"
        )
    path.write_text(text.replace(old, new))


def build(src: Path, variant: str) -> Build:
    """Copies LogGOPSim's source folder and builds it with the edits of ``variant`` (once per
    source: the build folder is named after a hash of the sources)."""
    folder = src / "src" / "LogGOPSim" if (src / "src" / "LogGOPSim").is_dir() else src
    if not (folder / "LogGOPSim.cpp").is_file():
        raise SystemExit(f"LOGGOPSIM_SRC={src}: no LogGOPSim.cpp in {folder}")
    digest = hashlib.sha256()
    for f in sorted(folder.iterdir()):
        if f.is_file() and f.suffix in (".cpp", ".hpp", ".h", ".c", ".ggo", ".re", ""):
            digest.update(f.name.encode() + b"\0" + f.read_bytes())
    root = (
        Path(tempfile.gettempdir())
        / "hypercuboid-loggopsim"
        / f"{variant}-{digest.hexdigest()[:12]}"
    )
    if not (root / "LogGOPSim").is_file() or not (root / "txt2bin").is_file():
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(folder, root)
        edit(root / "LogGOPSim.cpp", *PRINT_ALL, 1)
        if variant == "stable":
            edit(root / "LogGOPSim.cpp", *STABLE, 2)
        r = subprocess.run(["make"], cwd=root, capture_output=True, text=True)
        if r.returncode != 0:
            tail = (r.stderr or r.stdout).strip().splitlines()[-1:]
            raise SystemExit(
                f"building LogGOPSim ({variant}) in {root} failed: {' '.join(tail)}; it needs "
                "g++, gengetopt, re2c and libcgraph (Debian: gengetopt re2c libgraphviz-dev)"
            )
    return Build(root / "LogGOPSim", root / "txt2bin")


def builds() -> tuple[dict[str, Build], str]:
    """The builds to compare (``stock``, ``stable``) and where they come from."""
    src = os.environ.get("LOGGOPSIM_SRC")
    if src:
        commit = (
            os.environ.get("LOGGOPSIM_COMMIT")
            or subprocess.run(
                ["git", "-C", src, "rev-parse", "HEAD"], capture_output=True, text=True
            ).stdout.strip()
        )
        origin = f"built from {src} (commit {commit or 'unknown'})"
        return {v: build(Path(src), v) for v in ("stock", "stable")}, origin
    found = {}
    for variant, var in (("stock", "LOGGOPSIM"), ("stable", "LOGGOPSIM_STABLE")):
        if os.environ.get(var):
            binary = Path(os.environ[var])
            txt2bin = Path(os.environ.get("TXT2BIN", binary.parent / "txt2bin"))
            for p in (binary, txt2bin):
                if not p.is_file():
                    raise SystemExit(f"{var}: {p} does not exist")
            found[variant] = Build(binary, txt2bin)
    return found, "LOGGOPSIM / LOGGOPSIM_STABLE"


def loggopsim(b: Build, goal: Path, params: dict[str, int]) -> tuple[int, dict[int, int], str]:
    """Runs one build: (completion ns, {host: finish ns} as printed, raw output)."""
    binfile = goal.with_suffix(".bin")
    subprocess.run(
        [str(b.txt2bin), "-i", str(goal), "-o", str(binfile)], check=True, capture_output=True
    )
    args = [str(b.binary), "-f", str(binfile)]
    for k, v in params.items():
        args += [f"-{k}", str(v)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    hosts = {int(h): int(t) for h, t in re.findall(r"^Host (\d+): (\d+)$", out, re.M)}
    m = re.search(r"^Maximum finishing time at host (\d+): (\d+)", out, re.M)
    if m:
        hosts.setdefault(int(m.group(1)), int(m.group(2)))
    if not hosts:
        raise SystemExit(f"{b.binary} printed no finish times for {goal}:\n{out}")
    return max(hosts.values()), hosts, out


# -- the comparison ---------------------------------------------------------------------------
def wrong_pairs(p: Program, r: hc.SimResult) -> int:
    """Messages that landed in a receive declared with another size."""
    t = r.trace
    assert t is not None
    return sum(
        int(b) != p.recv_bytes[(int(d), int(op))]
        for d, op, b in zip(t.msg_dst, t.msg_dst_op, t.msg_bytes, strict=True)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", help="write each GOAL program and LogGOPSim's output to this folder")
    _out.add(ap, "loggopsim_order.json")
    args = ap.parse_args()
    args.out = _out.path(args.out, "loggopsim_order.json")

    found, origin = builds()
    if not found:
        print(
            "skipped: no LogGOPSim build (set LOGGOPSIM_SRC to a checkout of spcl/LogGOPSim, or "
            "LOGGOPSIM / LOGGOPSIM_STABLE / TXT2BIN to built binaries; see docs/simulate.md)"
        )
        return
    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="hc-lgs-order-"))

    pairs = [("stock", "gcc"), ("stable", "program")]
    print(f"LogGOPSim: {origin}; builds: {', '.join(found)}")
    head = f"{'program':26} {'params':6}"
    for build_name, order in pairs:
        head += f" {build_name + ' ns':>12} {'order=' + order:>13} {'ranks':>5}"
    head += f" {'gcc/program':>11} {'wrong pairs':>11}"
    print(head)
    rows = []
    for pname, prog in cases():
        params = PARAMS[pname][0]
        goal = (keep or work) / f"{prog.name}.{'p1' if pname == 'O=0' else 'p2'}.goal"
        goal.write_text(prog.text)
        schedule = hc.parse_schedule(prog.text, prog.name)
        row: dict = {"program": prog.name, "params": spec(params, None), "nranks": schedule.nranks}
        line = f"{prog.name:26} {pname:6}"
        for build_name, order in pairs:
            r = schedule.simulate(spec(params, order), trace=True)
            ours = [int(x) for x in r.rank_finish_ps]
            row[f"hc_{order}_ns"] = r.completion_time_ns
            row[f"hc_{order}_wrong_pairs"] = wrong_pairs(prog, r)
            if build_name in found:
                done, hosts, out = loggopsim(found[build_name], goal, params)
                if keep:
                    goal.with_suffix(f".{build_name}.out").write_text(out)
                agree = all(ours[h] == t * 1000 for h, t in hosts.items())
                row[f"{build_name}_ns"] = done
                row[f"{build_name}_ranks_compared"] = len(hosts)
                row[f"{build_name}_agrees"] = agree and r.completion_time_ps == done * 1000
                ok = f"{len(hosts)}/{schedule.nranks}" if row[f"{build_name}_agrees"] else "DIFF"
                line += f" {done:>12} {r.completion_time_ns:>13.0f} {ok:>5}"
            else:
                line += f" {'-':>12} {r.completion_time_ns:>13.0f} {'-':>5}"
        differ = row["hc_gcc_ns"] != row["hc_program_ns"]
        row["orders_differ"] = differ
        wrong = f"{row['hc_gcc_wrong_pairs']}/{row['hc_program_wrong_pairs']}"
        line += f" {'differ' if differ else 'same':>11} {wrong:>11}"
        print(line, flush=True)
        rows.append(row)
    shutil.rmtree(work, ignore_errors=True)

    checked = [(b, r[f"{b}_agrees"]) for r in rows for b in found]
    bad = [b for b, ok in checked if not ok]
    print(
        f"{len(checked) - len(bad)}/{len(checked)} runs agree exactly (every printed rank); "
        f"{sum(r['orders_differ'] for r in rows)}/{len(rows)} programs finish at another time "
        "under order=gcc than under order=program"
    )
    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout
    out = Path(args.out)
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "machine": platform.machine(),
                "python": platform.python_version(),
                "loggopsim": origin,
                "compiler": gxx.splitlines()[0] if gxx else "unknown",
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {out}")
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
