"""Pieces shared by the CLI verbs: schedule sources, JSON output, error handling."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from hypercuboid import _core
from hypercuboid.cli import options as cliopts
from hypercuboid.cli.options import COUNT, RANKS, Time
from hypercuboid.errors import HypercuboidError


def error_message(e: BaseException) -> click.ClickException | None:
    """The one place errors become what the CLI prints: a hypercuboid error or an OS error (a
    file that cannot be read or written) as a one-line message (exit status 1, no traceback);
    None for anything else (a bug: let it raise)."""
    if isinstance(e, click.ClickException):
        return e
    if isinstance(e, HypercuboidError):
        return click.ClickException(one_line(str(e)))
    if isinstance(e, OverflowError):
        # A whole number past what the core's integer holds (the binding names its argument).
        notes = [n.split("'")[1] for n in getattr(e, "__notes__", []) if n.count("'") == 2]
        where = f"--{notes[0].replace('_', '-')}: " if notes else ""
        return click.ClickException(f"{where}a number too large for the core ({e})")
    if isinstance(e, MemoryError):
        return click.ClickException(one_line(f"not enough memory: {e}"))
    if isinstance(e, OSError):
        if e.filename is not None:
            return click.ClickException(one_line(f"{e.filename}: {e.strerror}"))
        return click.ClickException(one_line(str(e)))
    return None


#: A message's quoted value or word longer than this is cut to its first
#: :data:`options.SHOWN` characters (a file name of a few hundred characters is kept whole).
LONG = 256
_LONG_QUOTE = re.compile(f"'([^'\\n]{{{LONG + 1},}})'")
_LONG_WORD = re.compile(f"[^\\s':,]{{{LONG + 1},}}")


def one_line(msg: str) -> str:
    """``msg`` as one line, with every quoted value cut to a bounded prefix (a 200 KB spec is
    not echoed back)."""
    msg = _LONG_QUOTE.sub(lambda m: f"'{cliopts.shown(m.group(1))}'", msg)
    msg = _LONG_WORD.sub(lambda m: cliopts.shown(m.group(0)), msg)
    return " ".join(x.strip() for x in msg.splitlines() if x.strip())


def _file_value(token: str, exts: tuple[str, ...]) -> bool:
    t = token.lower()
    return t == "-" or t.endswith(exts)


#: ``--json [FILE]`` and ``--csv [FILE]``: the next word is the file when it ends so.
_OPTIONAL_FILES = {"--json": (".json", ".jsonl"), "--csv": (".csv",)}


def optional_files(args: list[str]) -> list[str]:
    """Reads ``--json`` / ``--csv`` followed by a word that is not a file name of theirs (a
    subcommand, a positional SPEC) as ``--json=-`` (stdout), so that ``simulate --json allreduce
    ...`` and ``topo show --json slimfly:q=5`` keep working; ``--json out.json`` writes the file
    (any other name: ``--json=FILE``)."""
    out: list[str] = []
    for i, a in enumerate(args):
        if a == "--":
            return out + args[i:]
        nxt = args[i + 1] if i + 1 < len(args) else None
        if a in _OPTIONAL_FILES and nxt is not None and not nxt.startswith("-"):
            if not _file_value(nxt, _OPTIONAL_FILES[a]):
                a = f"{a}=-"
        out.append(a)
    return out


def interrupted() -> click.exceptions.Exit:
    """Ctrl-C: one line on stderr (rank 0 only under mpiexec), exit status 130."""
    from hypercuboid.cli.options import env_rank

    if env_rank() == 0:
        click.echo("hypercuboid: interrupted", err=True)
    return click.exceptions.Exit(130)


class HypercuboidGroup(click.Group):
    """The top-level group: every command runs inside it, so its errors become messages here
    (:func:`error_message`), and Ctrl-C one line (:func:`interrupted`)."""

    def main(self, args: Any = None, *a: Any, **kw: Any) -> Any:
        if args is None:
            args = sys.argv[1:]
        return super().main(optional_files(list(args)), *a, **kw)

    def make_context(self, *a: Any, **kw: Any) -> click.Context:
        try:
            return super().make_context(*a, **kw)
        except click.UsageError as e:
            raise usage_line(e) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise interrupted() from None
        except click.UsageError as e:
            raise usage_line(e) from None
        except BrokenPipeError:
            raise closed_pipe() from None
        except Exception as e:
            msg = error_message(e)
            if msg is None or msg is e:
                raise
            raise msg from None


def closed_pipe() -> click.exceptions.Exit:
    """The reader of stdout went away (``hypercuboid ... | head``): no message, as a shell
    tool ends on SIGPIPE; stdout is pointed at /dev/null so that the interpreter's last flush
    does not fail again, and the exit status is the shell's for SIGPIPE (128 + 13)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return click.exceptions.Exit(141)


def usage_line(e: click.UsageError) -> click.UsageError:
    """A usage error (an unknown option or command, a missing argument) as its one error line,
    without click's usage and hint lines (exit status 2)."""
    if e.ctx is None:
        return e
    return click.UsageError(one_line(e.format_message()))


def echo_json(obj: Any, dest: str | None = "-") -> None:
    """Prints one JSON object on stdout (``dest`` ``-`` or None) or writes it to ``dest``."""
    from hypercuboid.cli.options import write_out

    write_out(dest or "-", json.dumps(obj, indent=None, separators=(",", ":")) + "\n")


def refuse_overwrite(path: str | Path, force: bool) -> Path:
    """Refuses to overwrite an existing file unless ``force``: nothing the user has is lost."""
    from hypercuboid.cli.options import outputs_free

    outputs_free(force, str(path))
    return Path(path)


# -- schedule sources ---------------------------------------------------------------------------


@dataclass
class Generator:
    """A way to build a schedule from options: a subcommand of every schedule verb."""

    name: str
    help: str
    options: list[Callable]
    build: Callable[..., Any]


def schedule_verb(
    name: str,
    help: str,
    verb_options: list[Callable],
    action: Callable[..., None],
) -> click.Group:
    """A verb that acts on a schedule given as ``--goal FILE`` or by a generator subcommand.

    ``hypercuboid VERB --goal FILE [verb options]`` and
    ``hypercuboid VERB allreduce --algorithm ... [verb options]`` both work; verb options may
    also be given before the subcommand.
    """
    verb_names: set[str] = set()

    def group_callback(ctx: click.Context, goal: str | None, **verb_kwargs: Any) -> None:
        ctx.ensure_object(dict)
        ctx.obj[name] = verb_kwargs
        if ctx.invoked_subcommand is None:
            if goal is None:
                raise click.UsageError(
                    "give a schedule: --goal FILE, or a generator subcommand ("
                    + ", ".join(sorted(GENERATORS))
                    + ")",
                    ctx,
                )
            from hypercuboid.schedule import Schedule

            action(Schedule.read(goal), **verb_kwargs)
        elif goal is not None:
            raise click.UsageError(f"--goal cannot be combined with '{ctx.invoked_subcommand}'")

    goal_opt = click.option(
        "--goal",
        "--file",
        "goal",
        type=click.Path(dir_okay=False),
        help="Read the schedule from a GOAL file (or hypercuboid's lossless text form).",
    )
    group = click.group(name, help=help, invoke_without_command=True)(
        cliopts.with_options([goal_opt, *verb_options])(click.pass_context(group_callback))
    )
    for opt in verb_options:
        probe = opt(lambda: None)
        verb_names.update(
            p.name
            for p in probe.__click_params__  # type: ignore[attr-defined]
            if p.expose_value
        )

    for gen in GENERATORS.values():

        def make(gen: Generator) -> click.Command:
            def callback(ctx: click.Context, **kwargs: Any) -> None:
                parent = ctx.obj.get(name, {}) if ctx.obj else {}
                verb_kwargs = {}
                for k in verb_names:
                    given = kwargs.pop(k)
                    src = ctx.get_parameter_source(k)
                    # an option given after the subcommand wins over the same one given before
                    if src == click.core.ParameterSource.DEFAULT and k in parent:
                        verb_kwargs[k] = parent[k]
                    else:
                        verb_kwargs[k] = given
                action(gen.build(**kwargs), **verb_kwargs)

            return click.command(gen.name, help=gen.help)(
                cliopts.with_options([*gen.options, *verb_options])(click.pass_context(callback))
            )

        group.add_command(make(gen))
    return group


def _algorithm_help(collective: str) -> str:
    from hypercuboid.schedules import algorithms

    names = ", ".join(a.usage for a in algorithms(collective))
    return f"Algorithm: {names} (see 'hypercuboid schedule list')."


#: ``--count``: elements per rank, the core's default.
count_option = click.option(
    "--count",
    "-c",
    type=COUNT,
    default=_core.DEFAULTS["allreduce"]["count"],
    show_default=True,
    help="Elements per rank.",
)

#: ``--dtype``: the element type, the core's default and names.
dtype_option = click.option(
    "--dtype",
    default=_core.DEFAULTS["allreduce"]["dtype"],
    show_default=True,
    help="Element type: " + ", ".join(_core.DTYPES) + ".",
)

#: ``--op``: the reduction, the core's default and names.
op_option = click.option(
    "--op",
    default=_core.DEFAULTS["allreduce"]["op"],
    show_default=True,
    help="Reduction: " + ", ".join(_core.REDUCE_OPS) + ".",
)


def ranks_option(required: bool, help: str = "Number of ranks.") -> Callable:
    """``--ranks/-n``: a number of ranks, at least 1."""
    return click.option("--ranks", "-n", "nranks", type=RANKS, required=required, help=help)


def allreduce_options() -> list[Callable]:
    """Options of the ``allreduce`` generator."""
    return [
        click.option("--algorithm", "-a", required=True, help=_algorithm_help("allreduce")),
        ranks_option(required=True),
        count_option,
        dtype_option,
        op_option,
    ]


def alltoall_options() -> list[Callable]:
    """Options of the ``alltoall`` generator."""
    return [
        click.option("--algorithm", "-a", required=True, help=_algorithm_help("alltoall")),
        ranks_option(required=True),
        click.option(
            "--count",
            "-c",
            type=COUNT,
            default=_core.DEFAULTS["alltoall"]["count"],
            show_default=True,
            help="Elements each rank sends to each rank (MPI's sendcount); each buffer has "
            "ranks x count elements.",
        ),
        click.option(
            "--dtype",
            default=_core.DEFAULTS["alltoall"]["dtype"],
            show_default=True,
            help="Element type: " + ", ".join(d for d in _core.DTYPES if d != "byte") + ".",
        ),
    ]


def _build_alltoall(algorithm: str, nranks: int, count: int, dtype: str):
    from hypercuboid.schedules import alltoall

    return alltoall(algorithm, nranks, count, dtype=dtype)


def _build_allreduce(algorithm: str, nranks: int, count: int, dtype: str, op: str):
    from hypercuboid.schedules import allreduce

    return allreduce(algorithm, nranks, count, dtype=dtype, op=op)


def _triple_option(text: str | None, option: str) -> tuple[int, int, int] | None:
    if text is None:
        return None
    return cliopts.dims(text, option)


def _periodic_axes(text: str) -> tuple[bool, bool, bool]:
    t = text.lower()
    if t == "none":
        return (False, False, False)
    if not t or any(ch not in "xyz" for ch in t) or len(set(t)) != len(t):
        raise click.ClickException(
            f"--periodic '{text}': expected the periodic axes (xyz, xy, z, ...) or none"
        )
    return ("x" in t, "y" in t, "z" in t)


def halo_options() -> list[Callable]:
    """Options of the ``halo`` generator."""
    return [
        click.option(
            "--algorithm",
            "-a",
            "--variant",
            "variant",
            required=True,
            help="blocking | nonblocking | nonblocking:unpack=on_arrival | reduced (also "
            "halo_<variant>; keys: overlap=on; see 'hypercuboid schedule list').",
        ),
        click.option(
            "--decomp",
            default=None,
            help="Ranks along x, y, z as PxQxR (default: as close to cubic as possible for "
            "--ranks, MPI_Dims_create).",
        ),
        click.option(
            "--subdomain",
            default=None,
            help="Sites of every rank's subdomain, AxBxC (the lattice is decomp x subdomain).",
        ),
        click.option("--lattice", default=None, help="Sites of the global lattice, XxYxZ."),
        ranks_option(required=False, help="Ranks (without --decomp)."),
        click.option(
            "--periodic",
            default="xyz",
            show_default=True,
            help="The periodic axes (xyz, xz, ..., none).",
        ),
        cliopts.int_option(
            "--values", least=1, default=19, help="Values per site (19: D3Q19 distributions)."
        ),
        cliopts.int_option(
            "--bytes", "nbytes", least=1, default=8, help="Bytes per value: 8 (float64), 4, 2, 1."
        ),
        click.option(
            "--kernel",
            type=Time(),
            default=None,
            help="Time per lattice-site update (e.g. 20ns): the schedule also computes "
            "the sites (after the exchange, or with overlap=on the interior during it).",
        ),
    ]


def _build_halo(variant, decomp, subdomain, lattice, nranks, periodic, values, nbytes, kernel):
    from hypercuboid import halo

    per = _periodic_axes(periodic)
    dims = _triple_option(decomp, "--decomp")
    sub = _triple_option(subdomain, "--subdomain")
    lat = _triple_option(lattice, "--lattice")
    if (sub is None) == (lat is None):
        raise click.ClickException("give the sites as --subdomain AxBxC or --lattice XxYxZ (one)")
    if sub is not None:
        if dims is None:
            raise click.ClickException("--subdomain needs --decomp PxQxR")
        if nranks is not None and nranks != dims[0] * dims[1] * dims[2]:
            raise click.ClickException(
                f"--ranks {nranks}: --decomp {decomp} has {dims[0] * dims[1] * dims[2]} ranks"
            )
        d = halo.Decomposition.of_subdomain(sub, dims, per)
    else:
        assert lat is not None
        if dims is None and nranks is None:
            raise click.ClickException("--lattice needs --decomp PxQxR or --ranks N")
        n = nranks if nranks is not None else dims[0] * dims[1] * dims[2]  # type: ignore[index]
        d = halo.Decomposition(lat, n, dims, per)
    return halo.schedule(variant, d, values=values, bytes=nbytes, kernel=kernel)


#: The generator subcommands of every schedule verb, one per collective of the core's registry
#: (``hypercuboid schedule list``). A complete table, not filled by imports.
GENERATORS: dict[str, Generator] = {
    "allreduce": Generator(
        name="allreduce",
        help="An allreduce schedule from one of the generators.",
        options=allreduce_options(),
        build=_build_allreduce,
    ),
    "alltoall": Generator(
        name="alltoall",
        help="An alltoall schedule from one of the generators.",
        options=alltoall_options(),
        build=_build_alltoall,
    ),
    "halo": Generator(
        name="halo",
        help="A halo exchange of a 3-D decomposition (blocking, nonblocking, reduced).",
        options=halo_options(),
        build=_build_halo,
    ),
}


def stderr(msg: str) -> None:
    """Prints a line on stderr."""
    print(msg, file=sys.stderr)
