"""The CLI's shared option types and options: one spelling and one type per meaning
(``docs/cli.md``, held by ``tests/test_cli_vocabulary.py``).

Values are checked here, at the edge, before any work starts: a seed is an integer in
0..2^64-1, a thread count in 0..1024, a size or a time reads in the units grammar
(:mod:`hypercuboid.units`, which refuses NaN and infinity), a plot file names a format that
matplotlib writes, an output file is not the empty name.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from hypercuboid import _core

#: The defaults of the core that the options name in their help.
DEFAULTS = _core.DEFAULTS
#: Formats matplotlib writes, by file extension.
PLOT_FORMATS = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")
#: A bad value is quoted up to this many characters (a megabyte of digits is not echoed).
SHOWN = 40


def shown(value: Any) -> str:
    """A value as an error quotes it: at most :data:`SHOWN` characters."""
    text = str(value)
    return text if len(text) <= SHOWN else text[:SHOWN] + f"... ({len(text)} characters)"


def dims(text: str, option: str) -> tuple[int, int, int]:
    """``XxYxZ`` as three positive integers (the core's reader), refused in one line that quotes
    at most :data:`SHOWN` characters of ``text``."""
    try:
        x, y, z = _core.parse_dims(text, option)
    except ValueError as e:
        msg = str(e)
        whole = f"'{text}'"
        if len(text) > SHOWN and whole in msg:
            msg = msg.replace(whole, f"'{shown(text)}'", 1)
        raise click.ClickException(msg) from None
    return (x, y, z)


def _bad(param: Any, value: Any, msg: str) -> click.ClickException:
    """The one-line error of a bad option value: ``--NAME VALUE: what is accepted``."""
    name = param.opts[0] if param is not None and param.opts else "value"
    return click.ClickException(f"{name} {shown(value)}: {msg}")


class InputFile(click.Path):
    """A file to read: not a directory, and not a device or pipe such as /dev/zero, which would
    be read without end (a missing file is left to the reader, which names it)."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False)

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        path = super().convert(value, param, ctx)
        if os.path.exists(path) and not os.path.isfile(path):
            raise _bad(param, value, "not a regular file (a device or a pipe is not read)")
        return path


#: The largest whole number an option takes when it names no bound of its own (the core's
#: signed 64-bit integers).
INT_MAX = 2**63 - 1


class Range(click.ParamType):
    """A whole number in ``min..max`` (either open), refused in one line that names the option,
    the value and the bound (``--ranks 0: the number of ranks must be >= 1``)."""

    name = "integer"

    def __init__(
        self, min: int | None = None, max: int | None = None, *, what: str = "", note: str = ""
    ) -> None:
        self.min, self.max, self.what, self.note = (
            min,
            max if max is not None else INT_MAX,
            what,
            note,
        )

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            x = value
        else:
            text = str(value).strip()
            try:
                x = int(text, 10)
            except ValueError:
                if not text.lstrip("+-").isdigit():
                    raise _bad(param, value, "expected a whole number") from None
                # more digits than Python converts: beyond any bound
                x = -(10**100) if text.startswith("-") else 10**100
        what = f"{self.what} must be" if self.what else "must be"
        if self.min is not None and x < self.min:
            raise _bad(param, value, f"{what} >= {self.min}{self.note}")
        if self.max is not None and x > self.max:
            raise _bad(param, value, f"{what} <= {self.max}{self.note}")
        return x


#: Seeds: what the core's u64 holds.
SEED = Range(0, 2**64 - 1, what="a seed")
#: Thread counts: 0 is the core's choice; more than this is a typo, not a machine.
MAX_THREADS = 1024
THREADS = Range(0, MAX_THREADS)
COUNT = Range(0, what="the element count")
RANKS = Range(1, what="the number of ranks")


def at_least(n: int) -> Range:
    return Range(n)


def int_option(*decls: str, least: int, default: int, help: str) -> Callable:
    """An int option of at least ``least`` whose default the help shows."""
    return click.option(*decls, type=Range(least), default=default, show_default=True, help=help)


def choice_option(
    *decls: str, choices: Sequence[str], default: str, help: str, case_sensitive: bool = True
) -> Callable:
    """An option of one of ``choices`` whose default the help shows."""
    return click.option(
        *decls,
        type=click.Choice(choices, case_sensitive=case_sensitive),
        default=default,
        show_default=True,
        help=help,
    )


class Size(click.ParamType):
    """A size of the units grammar (``256``, ``7.5KB``, ``1MiB``) as whole bytes."""

    name = "size"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        from hypercuboid import units
        from hypercuboid.errors import UnitError

        try:
            return units.parse_size(str(value))
        except UnitError as err:
            raise click.ClickException(str(err)) from None


class Time(click.ParamType):
    """A time of the units grammar (``100ns``, ``1.5us``; a bare number is ns), checked and
    kept as written (the APIs it goes to read the text)."""

    name = "time"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        from hypercuboid import units
        from hypercuboid.errors import UnitError

        try:
            units.parse_time_f64(str(value))
        except UnitError as err:
            raise click.ClickException(str(err)) from None
        return str(value)


class Finite(click.ParamType):
    """A finite float at least ``min`` (NaN and infinity refused)."""

    name = "float"

    def __init__(self, min: float | None = None, min_open: bool = False) -> None:
        self.min = min
        self.min_open = min_open

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise _bad(param, value, "expected a number") from None
        if not math.isfinite(x):
            raise _bad(param, value, "expected a finite number")
        if self.min is not None and (x <= self.min if self.min_open else x < self.min):
            raise _bad(param, value, f"must be {'>' if self.min_open else '>='} {self.min:g}")
        return x


class OutFile(click.Path):
    """A file to write: not the empty name, not a directory."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False)

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if str(value) == "":
            raise _bad(param, "''", "give a file name (or leave the option out)")
        return super().convert(value, param, ctx)


class PlotFile(OutFile):
    """A figure to draw: its extension names a format matplotlib writes (checked before the
    run, not after it)."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        value = super().convert(value, param, ctx)
        ext = Path(str(value)).suffix.lower().lstrip(".")
        if ext not in PLOT_FORMATS:
            raise _bad(
                param,
                value,
                f"unknown figure format '{ext or '(no extension)'}'; accepted: "
                + ", ".join(f".{e}" for e in PLOT_FORMATS),
            )
        return value


def split_list(text: str, option: str, *, sep: str = ",") -> list[str]:
    """The items of a comma list, refusing an empty one (``0.1,,0.2``) and a repeated one."""
    items = [x.strip() for x in text.split(sep)]
    if any(x == "" for x in items):
        raise click.ClickException(f"{option} {shown(text)}: an empty item in the list")
    seen: set[str] = set()
    for x in items:
        if x in seen:
            raise click.ClickException(f"{option} {shown(text)}: {shown(x)} is given twice")
        seen.add(x)
    return items


#: The variables that give a process's rank under a launcher (Open MPI, MPICH / Hydra, PMIx,
#: Slurm).
LAUNCHER_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")


def env_rank() -> int:
    """This process's rank as the launcher says, without initialising MPI; 0 when not launched
    by mpiexec. Lines every rank would print alike (a deprecation, Ctrl-C) print on rank 0."""
    for var in LAUNCHER_RANK_VARS:
        v = os.environ.get(var)
        if v is not None and v.isdigit():
            return int(v)
    return 0


# -- deprecated spellings -----------------------------------------------------------------------


class Renamed(click.Option):
    """A spelling kept for one release: hidden, it says on stderr what to use instead and hands
    its value to the option that replaced it (``target``; None: the option is gone and the
    spelling does nothing)."""

    def __init__(self, decls: list[str], *, target: str | None, use: str, **kw: Any) -> None:
        kw.setdefault("hidden", True)
        super().__init__(decls, expose_value=False, **kw)
        self.target = target
        self.use = use

    def handle_parse_result(
        self, ctx: click.Context, opts: Any, args: list[str]
    ) -> tuple[Any, list[str]]:
        if self.name not in opts:
            return None, args
        spelled = "/".join(self.opts + self.secondary_opts)
        if env_rank() == 0:
            click.echo(f"hypercuboid: {spelled} is deprecated, {self.use}", err=True)
        if self.target is None:
            return None, args
        if self.target in opts:
            raise click.UsageError(f"{spelled} and its new spelling given together", ctx)
        target = next(p for p in ctx.command.params if p.name == self.target)
        with click.core.augment_usage_errors(ctx, param=self):
            ctx.params[self.target] = target.process_value(ctx, opts[self.name])
        ctx.set_parameter_source(self.target, click.core.ParameterSource.COMMANDLINE)
        return None, args


def renamed(*decls: str, target: str | None, new: str, **kw: Any) -> Callable:
    """``@renamed("--png", target="plot", new="--plot")``: the old spelling of an option."""
    use = f"use {new}" if target is not None else new
    return click.option(
        *decls,
        "_old_" + decls[0].split("/")[0].lstrip("-").replace("-", "_"),
        cls=Renamed,
        target=target,
        use=use,
        **kw,
    )


# -- options of every verb ----------------------------------------------------------------------


def with_options(options: Sequence[Callable]) -> Callable:
    """A decorator applying click options in the order listed (the first is the first in
    ``--help``)."""

    def deco(f: Callable) -> Callable:
        for o in reversed(options):
            f = o(f)
        return f

    return deco


def json_option(help: str = "Print one JSON object") -> Callable:
    """``--json [FILE]``: JSON on stdout, or in FILE (a name that ends in .json, or
    ``--json=FILE``)."""
    return _out_option("json", help)


def csv_option(help: str = "Print CSV") -> Callable:
    """``--csv [FILE]``, as ``--json``."""
    return _out_option("csv", help)


def _out_option(kind: str, help: str) -> Callable:
    """``--KIND [FILE]`` (parameter ``as_KIND``): on stdout, or in FILE."""
    return click.option(
        f"--{kind}",
        f"as_{kind}",
        is_flag=False,
        flag_value="-",
        default=None,
        type=OutFile(),
        metavar="[FILE]",
        help=f"{help} (on stdout, or in FILE: a name ending in .{kind}, or --{kind}=FILE).",
    )


def force_option(what: str = "existing output files") -> Callable:
    return click.option("--force", is_flag=True, help=f"Overwrite {what}.")


def json_output(help: str = "Print one JSON object") -> Callable:
    """``--json [FILE]`` and the ``--force`` that lets it overwrite an existing FILE: the
    options of a verb whose one output file is its JSON."""
    return with_options([json_option(help), force_option("an existing --json file")])


def plot_option(help: str, name: str = "plot") -> Callable:
    return click.option(
        "--plot",
        name,
        type=PlotFile(),
        default=None,
        metavar="FILE",
        help=help + " (FILE.png, .pdf, .svg, ...).",
    )


def quiet_option(help: str = "Print the result only.") -> Callable:
    return click.option("--quiet", "-q", is_flag=True, help=help)


def progress_option() -> Callable:
    return click.option(
        "--progress/--no-progress",
        default=None,
        help="Progress lines on stderr (default: when stderr is a terminal and not --quiet).",
    )


def compute_scale_option() -> Callable:
    """``--compute-scale``: an application's compute time times this (trace, import-otf2)."""
    return click.option(
        "--compute-scale",
        type=Finite(min=0.0),
        default=1.0,
        show_default=True,
        help="Multiply the compute time between MPI calls (0.5: a CPU twice as fast).",
    )


def reduce_ns_option(help: str) -> Callable:
    """``--reduce-ns-per-byte``: the calc cost of a schedule's reductions (GOAL export, trace
    replay)."""
    return click.option(
        "--reduce-ns-per-byte", type=Finite(min=0.0), default=0.0, show_default=True, help=help
    )


def long_verb(f: Callable) -> Callable:
    """``--quiet/-q`` and ``--progress/--no-progress``: the options of every long verb."""
    return quiet_option()(progress_option()(f))


def seed_option(help: str) -> Callable:
    return click.option(
        "--seed", type=SEED, default=None, help=f"{help} (0..2^64-1; default: the core's)."
    )


def threads_option(help: str, type: click.ParamType = THREADS) -> Callable:
    return click.option(
        "--threads",
        type=type,
        default=None,
        help=f"{help}.",
    )


def topo_option(
    help: str, *, name: str = "topo_spec", extra: tuple[str, ...] = (), **kw: Any
) -> Callable:
    return click.option("--topo", "-t", *extra, name, metavar="SPEC", help=help, **kw)


def _net_option(flag: str, type_: click.ParamType, key: str, help: str) -> Callable:
    """An option of the network engine (a size or a time) that defaults to the core's
    ``DEFAULTS['netsim'][key]``, shown in its help."""
    from hypercuboid.units import format_size, format_time_exact

    fmt = format_size if isinstance(type_, Size) else format_time_exact
    default = fmt(DEFAULTS["netsim"][key])
    return click.option(flag, type=type_, default=None, help=f"{help} [default: {default}].")


def packet_size_option() -> Callable:
    return _net_option("--packet-size", Size(), "packet_bytes", "Packet size")


def buffer_option() -> Callable:
    return _net_option(
        "--buffer", Size(), "buffer_bytes", "Buffer per port per direction (split over the VCs)"
    )


def switch_latency_option() -> Callable:
    return _net_option("--switch-latency", Time(), "switch_latency_ps", "Switch traversal")


class Progress:
    """Progress lines on stderr (``--progress``), whether or not stderr is a terminal; by
    default only on a terminal and without ``--quiet``."""

    def __init__(self, quiet: bool, progress: bool | None) -> None:
        self.on = progress if progress is not None else (not quiet and sys.stderr.isatty())
        self.t0 = time.monotonic()

    def __call__(self, msg: str) -> None:
        if self.on:
            print(f"[{time.monotonic() - self.t0:8.2f} s] {msg}", file=sys.stderr, flush=True)


def outputs_free(force: bool, *paths: str | None) -> None:
    """Refuses, before the run, to overwrite any of ``paths`` (None and ``-``, stdout, skipped)
    unless ``force``; nothing the user has is lost."""
    for p in paths:
        if p is None or p == "-":
            continue
        path = Path(p)
        if path.exists() and not force:
            raise click.ClickException(f"{path} exists; pass --force to overwrite it")
        if not path.parent.exists():
            raise click.ClickException(f"{path}: directory {path.parent} does not exist")


def write_out(dest: str, text: str) -> None:
    """Writes ``text`` to ``dest`` (``-``: stdout)."""
    if dest == "-":
        click.echo(text, nl=False)
    else:
        Path(dest).write_text(text, encoding="utf-8")
