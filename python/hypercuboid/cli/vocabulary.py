"""The CLI's vocabulary: every option name and what it means, once.

:data:`MEANINGS` is the table: each meaning has its spellings (every verb that takes it spells it
so, short name included), the kind of value it takes, and the further names a verb may accept
(documented aliases). :func:`problems` walks every click command and reports a name used for two
meanings, a meaning spelled two ways, an option missing from the table and a kind that differs;
``tests/test_cli_vocabulary.py`` holds it at zero. :func:`markdown` writes ``docs/cli.md``
(``python -m hypercuboid.cli.vocabulary > docs/cli.md``), which the test compares too.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import click

from hypercuboid.cli.options import Finite, OutFile, PlotFile, Range, Renamed, Size, Time


@dataclass(frozen=True)
class Meaning:
    """One meaning: its spellings, what it means, the kind of value (None: it depends on the
    verb, said in ``meaning``) and the further names some verbs accept."""

    names: tuple[str, ...]
    meaning: str
    kind: str | None
    aliases: tuple[str, ...] = ()


def _m(names: str, meaning: str, kind: str | None, aliases: str = "") -> Meaning:
    return Meaning(tuple(names.split()), meaning, kind, tuple(aliases.split()))


#: Every option of the CLI, by meaning. Kinds: flag, int, float, size, time, text, choice,
#: file (a path to read or write), plot (a figure FILE whose extension names its format),
#: [file] (an optional FILE: stdout without one).
MEANINGS: list[Meaning] = [
    # what to run on
    _m("--topo -t", "The topology: a spec (slimfly:q=5, tree:fig5b, ...)", "text", "--network"),
    _m("--model -m", "The cost model (host model on a network): a spec", "text"),
    _m(
        "--model-file", "A model file (JSON with a 'model' spec): read, or written by bench", "file"
    ),
    _m("--goal", "Read the schedule from a GOAL or lossless text file", "file", "--file"),
    _m("--algorithm -a", "The algorithm(s) to run (bench: a list)", "text", "--variant"),
    _m("--ranks -n", "Number of ranks", "int"),
    _m("--rank", "A rank to show (repeatable)", "int"),
    _m("--count -c", "Elements per rank", "int"),
    _m("--dtype", "Element type", "text"),
    _m("--op", "Reduction operator", "text"),
    _m("--library", "An MPI library whose default choice to reproduce: openmpi or mpich", "choice"),
    _m(
        "--collective",
        "The collective: allreduce or alltoall (whose algorithms are chosen or compared)",
        "choice",
    ),
    _m("--allreduce", "The algorithm an application's allreduce is expanded into", "text"),
    _m("--alltoall", "The algorithm an application's alltoall is expanded into", "text"),
    _m("--compute-scale", "Multiply an application's compute time by this factor", "float"),
    _m("--sizes", "Message sizes of a sweep: MIN:MAX (powers of two) or a list", "text"),
    _m("--message", "The size of each message", "size"),
    _m("--packet-size", "Packet size on a network", "size"),
    _m("--buffer", "Buffer per router port and direction", "size"),
    _m("--switch-latency", "Switch traversal time", "time"),
    _m("--watchdog", "Simulated time without a delivery before a deadlock check", "time"),
    _m("--routing -r", "The routing (min, inr, ugal, ...)", "text"),
    _m("--level", "Network simulation level: packet or flow", "text"),
    _m("--mapping", "Where each rank runs (a mapping spec, or a FILE for alltoall)", None),
    _m("--ranks-per-endpoint", "Ranks per network endpoint", "int"),
    _m(
        "--node",
        "The node level: node:ranks=R,bw=BW (ranks of a node share its bandwidth)",
        "text",
    ),
    _m("--nic", "How a NIC serves its messages: fifo or interleave", "text"),
    _m("--noise", "A random delay before every op: a spec", "text"),
    _m("--seed", "Seed of the random draws, 0..2^64-1 (default: the core's)", "int"),
    _m("--seeds", "How many partitioner seeds to try", "int"),
    _m("--calls", "Runs of the schedule, back to back", "int"),
    _m("--threads", "Engine threads (0: the core's choice)", "int"),
    _m("--jobs -j", "Local worker processes of a sweep", "int"),
    _m("--executor", "Where a sweep's points run", "choice"),
    _m("--memory-limit", "Refuse a run whose memory estimate exceeds this size", "size"),
    _m(
        "--timeout",
        "Abort an MPI job not finished in this many seconds "
        "(a rank waiting for a peer that never comes)",
        "float",
    ),
    # what to write
    _m("--json", "JSON: on stdout, or in FILE", "[file]"),
    _m("--csv", "CSV: on stdout, or in FILE", "[file]"),
    _m("--plot", "Draw a figure to FILE (.png, .pdf, .svg, ...)", "plot"),
    _m("--plot-ranks", "Ranks a timeline draws (0-15, 0,4,8)", "text"),
    _m("--plot-links", "Draw the busiest links' utilisation over time to FILE", "plot"),
    _m("--trace", "Write a Chrome / Perfetto trace to FILE", "file"),
    _m("--output -o", "Write the output to FILE instead of stdout", "file"),
    _m("--out", "A directory for the files of a run", None),
    _m("--format", "Output format", "choice"),
    _m("--name", "The name of a generated C routine", "text"),
    _m("--force", "Overwrite files that exist (refused without it)", "flag"),
    _m("--quiet -q", "Print the result only (no per-step lines, no progress)", "flag"),
    _m("--progress --no-progress", "Progress lines on stderr (default: on a terminal)", "flag"),
    _m("--version", "Print the version", "flag"),
    # schedule verbs
    _m("--reduce-ns-per-byte", "GOAL export: calc cost of reductions per byte", "float"),
    # application traces
    _m("--collectives", "Where a trace's replay takes its allreduce and alltoall", "choice"),
    _m("--partial", "Convert a trace that stops before MPI_Finalize up to where it stops", "flag"),
    _m("--recorder", "The PMPI recorder to preload (libhc_trace.so)", "file"),
    _m("--flush-bytes", "Records a rank keeps in memory before writing them", "size"),
    _m("--eager-limit", "Messages up to this many bytes are buffered", "int"),
    _m("--no-semantics", "Skip the symbolic check of the result", "flag"),
    _m("--max-problems", "Report at most this many problems", "int"),
    _m("--no-per-rank", "Omit per-rank results", "flag"),
    _m("--strict", "Refuse a schedule that does not verify", "flag"),
    _m("--top-links", "How many of the busiest links to show", "int"),
    _m("--links", "Every link's utilisation in the JSON", "flag"),
    # halo and lbm
    _m("--decomp", "Ranks along x, y, z: PxQxR", "text"),
    _m("--subdomain", "Sites of every rank's subdomain: AxBxC", "text"),
    _m("--lattice", "Sites of the global lattice: XxYxZ", "text"),
    _m("--periodic", "The periodic axes (xyz, xz, ..., none)", "text"),
    _m("--values", "Values per lattice site", "int"),
    _m("--bytes", "Bytes per value", "int"),
    _m("--kernel", "Time per lattice-site update", "time"),
    _m("--steps", "Time steps", "int"),
    _m("--halo", "The halo exchange variant of the proxy", "text"),
    _m("--overlap", "Overlap the exchange with the interior update", "flag"),
    _m("--tau", "BGK relaxation time (> 0.5)", "float"),
    _m("--init", "Initial condition", "text"),
    _m("--layout", "Memory layout of the distributions", "text"),
    # netsim
    _m("--traffic", "Synthetic traffic patterns", "text"),
    _m("--load", "Offered loads: one, a list or start:stop:step", "text"),
    _m("--warmup -x", "Warm-up before measuring: iterations (bench), time (netsim)", None),
    _m("--time", "Simulated time measured", "time"),
    _m("--drain", "Run until every packet is delivered", "flag"),
    _m("--pattern", "The exchange: a2a or nn", "choice"),
    _m("--dims", "Torus of the nearest-neighbour exchange: XxYxZ", "text"),
    _m("--order", "Order of an exchange's packets", "choice"),
    # topo
    _m("--bisection", "Also estimate the bisection bandwidth", "flag"),
    _m("--bisection-method", "How bisection starts: metis or fm", "choice"),
    _m("--radix", "Router radix", "int"),
    _m("--radix-max", "Largest radix drawn", "int"),
    _m("--cycle", "anynet: link latencies in cycles of this time", "text"),
    _m("--no-endpoints", "dot: routers only", "flag"),
    # alltoall
    _m("--method", "How the alltoall phases are built", "text"),
    _m("--show", "Phases listed in the text output (0: all)", "int"),
    _m("--sync", "How the phases are kept apart", "choice"),
    _m("--min-size", "Blocks below this size go to the library", "text"),
    _m("--pmpi", "Also define the MPI function, calling the routine", "flag"),
    _m("--compile", "Check that the generated file compiles", "flag"),
    _m("--check", "Also check the results (bench) or the phases (alltoall sync)", "flag"),
    # bench
    _m("--iterations -i", "Timed iterations per size", "int"),
    _m("--block", "Calls timed together per sample", "int"),
    _m("--no-verify", "Run schedules without verifying them first", "flag"),
    _m("--runner", "Who runs the schedules: native, python or auto", "choice"),
    _m("--stat", "Statistic a model is fitted to", "choice"),
    _m(
        "--measure-reductions --no-measure-reductions",
        "Measure the reductions' cost for the model",
        "flag",
    ),
    _m("--messages -b", "Largest number of messages rank 0 issues", "int"),
    _m("--mode", "What a multicast sample times", "choice"),
    _m("--beta", "β of a model: time per byte", "text"),
    # tune
    _m("--alpha-p", "α_p of the pipelined model", "text"),
    _m("--alpha-r", "α_r of the pipelined model", "text"),
    _m("--gamma", "γ of the model: time per byte reduced", "text"),
    _m("--delta", "δ of the model: time per reduction", "text"),
    _m("--top", "Rows of the ranking to print", "int"),
    # predict and validate
    _m("--emit-table", "Write the PMPI library's decision table to FILE", "file"),
    _m("--calibrate", "Calibrate in the same job first and write the model file FILE", "file"),
    _m("--simulate", "Also simulate the best schedules", "flag"),
    _m("--pool", "How many schedules --simulate runs", "int"),
    _m("--max-schedules", "Enumerate at most this many schedules (0: no cap)", "int"),
    _m("--no-split", "Leave out collapse/expand schedules", "flag"),
    _m("--no-merged", "Leave out merged schedules", "flag"),
    # demo
    _m("--scale", "log2 of the rank count of the scale run", "int"),
    _m("--small", "Run the network and halo sections at small sizes", "flag"),
    _m("--mpi --no-mpi", "Run the section under mpiexec (a note where there is none)", "flag"),
]


def _by_name() -> tuple[dict[str, Meaning], list[str]]:
    """Name -> meaning over spellings and aliases, and the names the table gives twice."""
    out: dict[str, Meaning] = {}
    twice = []
    for m in MEANINGS:
        for n in (*m.names, *m.aliases):
            if n in out:
                twice.append(n)
            out[n] = m
    return out, twice


def kind(opt: click.Option) -> str:
    """The kind of value an option takes (see :data:`MEANINGS`)."""
    t = opt.type
    if opt.is_flag:
        return "flag"
    if isinstance(t, PlotFile):
        return "plot"
    if isinstance(t, OutFile) and opt.flag_value == "-":
        return "[file]"
    if isinstance(t, click.Path):
        return "file"
    if isinstance(t, (Range, click.IntRange)) or t is click.INT:
        return "int"
    if isinstance(t, Finite) or t is click.FLOAT:
        return "float"
    if isinstance(t, Size):
        return "size"
    if isinstance(t, Time):
        return "time"
    if isinstance(t, click.Choice):
        return "choice"
    return "text"


def walk(cmd: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Option]]:
    """Every option of every command under ``cmd``, with the command's path."""
    for p in cmd.params:
        if isinstance(p, click.Option):
            yield " ".join(path), p
    if isinstance(cmd, click.Group):
        for name, sub in sorted(cmd.commands.items()):
            yield from walk(sub, (*path, name))


def spellings(opt: click.Option) -> tuple[str, ...]:
    return (*opt.opts, *opt.secondary_opts)


def problems(root: click.Command) -> list[str]:
    """Every breach of the vocabulary under ``root`` (empty: none)."""
    names, twice = _by_name()
    out = [f"the table gives {n} twice" for n in twice]
    canonical = {n for m in MEANINGS for n in m.names}
    for path, opt in walk(root):
        where = f"'{path or 'hypercuboid'}' {'/'.join(spellings(opt))}"
        if isinstance(opt, Renamed):
            clash = [n for n in spellings(opt) if n in canonical]
            if clash and opt.target is None:
                out.append(f"{where}: a removed spelling may not be a name of the vocabulary")
            continue
        meanings = {id(names[n]): names[n] for n in spellings(opt) if n in names}
        unknown = [n for n in spellings(opt) if n not in names]
        if unknown:
            out.append(f"{where}: {', '.join(unknown)} is not in the vocabulary (MEANINGS)")
        if len(meanings) > 1:
            out.append(f"{where}: its names have {len(meanings)} meanings")
        for m in meanings.values():
            missing = [n for n in m.names if n not in spellings(opt)]
            if missing:
                out.append(f"{where}: spelled without {', '.join(missing)} ({m.meaning})")
            if m.kind is not None and kind(opt) != m.kind:
                out.append(f"{where}: takes a {kind(opt)}, the vocabulary says {m.kind}")
    return out


def _verb(path: str) -> str:
    from hypercuboid.cli.common import GENERATORS

    words = path.split()
    if len(words) > 1 and words[-1] in GENERATORS and words[0] in ("schedule", "simulate"):
        words = words[:-1]  # a generator subcommand of a schedule verb
    return " ".join(words) or "(every verb)"


def markdown(root: click.Command) -> str:
    """``docs/cli.md``: the vocabulary and where each option is taken."""
    names, _ = _by_name()
    verbs: dict[int, set[str]] = {}
    old: dict[tuple[str, str], set[str]] = {}
    for path, opt in walk(root):
        if isinstance(opt, Renamed):
            old.setdefault(("/".join(spellings(opt)), opt.use), set()).add(_verb(path))
            continue
        m = names.get(spellings(opt)[0])
        if m is not None:
            verbs.setdefault(id(m), set()).add(_verb(path))
    lines = [
        "# The command line's vocabulary",
        "",
        "Every verb of `hypercuboid` spells an option the same way and gives it one meaning.",
        "This page is generated from `python/hypercuboid/cli/vocabulary.py`",
        "(`python -m hypercuboid.cli.vocabulary > docs/cli.md`), and",
        "`tests/test_cli_vocabulary.py` fails when a command breaks it: a name used for two",
        "meanings, a meaning spelled two ways, or an option the table does not know.",
        "",
        "Rules that hold everywhere:",
        "",
        "- `--json [FILE]` and `--csv [FILE]`: without FILE on stdout (instead of the text",
        "  output); FILE is a name ending in `.json` / `.csv` (any other name: `--json=FILE`).",
        "- A verb that writes a file refuses to overwrite one that exists unless `--force`, and",
        "  checks that before it runs. A `--plot` FILE's extension names its format (`.png`,",
        "  `.pdf`, `.svg`, ...), also checked before the run.",
        "- Long verbs take `-q/--quiet` (the result only) and `--progress/--no-progress`",
        "  (progress lines on stderr; default: when stderr is a terminal and not `--quiet`).",
        "- Defaults are the core's: an option left out is not passed on.",
        "- Values are checked at the edge: seeds are 0..2^64-1, thread counts 0..1024, lists",
        "  refuse an empty or repeated item, sizes and times read in the units grammar",
        "  (`docs/units.md`: no NaN, no infinity). A bad value is one line naming it.",
        "- `hypercuboid --memory-limit SIZE VERB ...` refuses a run whose memory estimate",
        "  exceeds SIZE. Ctrl-C prints `hypercuboid: interrupted` and exits with status 130.",
        "",
        "| option | value | meaning | verbs |",
        "|---|---|---|---|",
    ]
    for m in MEANINGS:
        if id(m) not in verbs:
            continue
        spelled = ", ".join(f"`{n}`" for n in m.names)
        if m.aliases:
            spelled += " (also " + ", ".join(f"`{n}`" for n in m.aliases) + ")"
        used = ", ".join(sorted(verbs[id(m)]))
        lines.append(f"| {spelled} | {m.kind or 'see meaning'} | {m.meaning} | {used} |")
    lines += [
        "",
        "## Old spellings",
        "",
        "These work for one more release and print one line on stderr, e.g.",
        "`hypercuboid: --png is deprecated, use --plot`.",
        "",
        "| old | now | verbs |",
        "|---|---|---|",
    ]
    for (spelled, use), where in sorted(old.items()):
        lines.append(f"| `{spelled}` | {use} | {', '.join(sorted(where))} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m hypercuboid.cli.vocabulary > docs/cli.md
    from hypercuboid.cli import cli

    print(markdown(cli), end="")
