"""``hypercuboid schedule library``: what Open MPI or MPICH would run, size by size."""

from __future__ import annotations

import json

import click

from hypercuboid.cli import options as cliopts
from hypercuboid.cli.common import ranks_option


def _libraries() -> list[str]:
    from hypercuboid import library

    return [lib.name for lib in library.LIBRARIES]


def _collectives() -> list[str]:
    from hypercuboid import library

    return list(library.COLLECTIVES)


@click.command("library")
@click.option(
    "--library",
    "libraries",
    type=click.Choice(_libraries(), case_sensitive=False),
    multiple=True,
    help="The MPI library (repeatable; default: every one, side by side).",
)
@cliopts.choice_option(
    "--collective",
    choices=_collectives(),
    default="allreduce",
    help="The collective.",
    case_sensitive=False,
)
@ranks_option(required=True, help="Ranks.")
@click.option(
    "--sizes",
    default="8:1M",
    show_default=True,
    help="Message sizes in bytes (allreduce: the vector; alltoall: one peer's block): "
    "MIN:MAX (powers of two) or a list 8,1K,1M.",
)
@click.option("--dtype", default="float64", show_default=True, help="Element type.")
@cliopts.json_output()
def library_cmd(
    libraries: tuple[str, ...],
    collective: str,
    nranks: int,
    sizes: str,
    dtype: str,
    as_json: str | None,
    force: bool,
) -> None:
    """Show which algorithm Open MPI 5 (coll/tuned's fixed decision) or MPICH 4 (its default
    selection) would run for a collective on N ranks at each message size, as the algorithm
    of this package that runs it (what trace convert --collectives library uses), with the
    library's own name and how the two differ. Sources: docs/library-selection.md."""
    from hypercuboid import library
    from hypercuboid.cli.bench import _sizes

    cliopts.outputs_free(force, as_json)
    libs = list(dict.fromkeys(lib.lower() for lib in libraries)) or _libraries()
    size_list = _sizes(sizes)
    rows = []
    for size in size_list:
        for lib in libs:
            c = library.choice(lib, collective, nranks, size, dtype=dtype)
            rows.append(
                {
                    "size": size,
                    "library": lib,
                    "algorithm": c.algorithm,
                    "native": c.native,
                    "note": c.note,
                }
            )
    sources = {lib.name: lib.source for lib in library.LIBRARIES if lib.name in libs}
    if as_json:
        doc = {
            "collective": collective,
            "nranks": nranks,
            "dtype": dtype,
            "choices": rows,
            "sources": sources,
        }
        cliopts.write_out(as_json, json.dumps(doc) + "\n")
        return
    _print(collective, nranks, dtype, rows, sources)


def _print(collective: str, nranks: int, dtype: str, rows: list[dict], sources: dict) -> None:
    from hypercuboid.units import format_size

    what = "vector" if collective == "allreduce" else "block per peer"
    click.echo(f"{collective} on {nranks} ranks ({dtype}; size = the {what})")
    head = ("size", "library", "algorithm", "library's name")
    table = [(format_size(r["size"]), r["library"], r["algorithm"], r["native"]) for r in rows]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(head)]
    click.echo("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip())
    notes: dict[str, int] = {}
    for t, r in zip(table, rows, strict=True):
        mark = ""
        if r["note"]:
            mark = f" [{notes.setdefault(r['note'], len(notes) + 1)}]"
        cells = "  ".join(c.ljust(w) for c, w in zip(t, widths, strict=True)).rstrip()
        click.echo(cells + mark)
    for note, i in notes.items():
        click.echo(f"[{i}] {note}")
    for name, source in sources.items():
        click.echo(f"{name}: {source}")
