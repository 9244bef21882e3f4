"""Model files: a cost model fitted on a machine, for ``simulate --model-file`` and ``tune``.

A model file is JSON::

    {"model": "loggops:L=1.2us,o=400ns,g=300ns,G=0.08ns,S=65535",
     "node": "node:ranks=16,bw=12GB/s",       # optional
     "models": {"postal": "postal:...", "pipelined": "pipelined:..."},   # optional
     "library": "Open MPI v5.0.8",            # optional
     "nranks": 16, "ranks_per_node": 16,      # optional
     "fits": {...},                           # optional, free-form
     "source": "calibrate",
     "fitted": {...},           # the measured values and the fit's quality
     "machine": {...},          # host, MPI library, ranks
     "date": "2025-01-01T12:00:00+00:00"}

Keys:

- ``model`` (required): the point-to-point / host cost-model spec string (``postal:...``,
  ``pipelined:...``, ``loggops:...``; times with units, β and γ per byte, δ per reduction),
  checked by the core's own model parser.
- ``node``: a node spec ``node:ranks=R,bw=BW[,nic=BW][,map=block|round_robin]`` (ranks per
  node and the bandwidth their concurrent transfers share; ``docs/simulate.md``, "The node
  level"), checked by the core's node parser. ``simulate --model-file`` uses it unless
  ``--node`` is given.
- ``models``: further fitted model specs by name, each checked.
- ``library``: the MPI library measured; ``nranks``: the job's rank count;
  ``ranks_per_node``: its ranks per node (whole numbers >= 1).
- ``fits``: each fit's parameters, residuals and R², free-form JSON.
- ``source``, ``fitted``, ``machine``, ``date``: descriptive, not read by the core.

Files without the optional keys read as before. Files are read by the core
(``_core.read_model_file`` for the model spec, ``_core.load_model_file`` for every key:
:func:`load`, :func:`load_file`); this module writes them. No mpi4py is imported here:
``simulate`` and ``tune`` read model files on machines without MPI.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
from pathlib import Path
from typing import Any

from hypercuboid.errors import ModelError


def check_spec(spec: str) -> str:
    """Checks a cost-model spec with the core's parser (the one ``simulate`` uses) and returns
    it stripped; raises :class:`~hypercuboid.errors.ModelError` naming what is wrong."""
    if not isinstance(spec, str) or not spec.strip():
        raise ModelError(f"model spec must be a non-empty string, not {spec!r}")
    from hypercuboid import _core

    _core.parse_model(spec.strip())
    return spec.strip()


def check_call(text: Any) -> str:
    """A model file's ``call`` (the runner's cost per collective call) as written: a time
    such as ``201.3ns``; anything else is a :class:`ModelError` naming it."""
    from hypercuboid.units import parse_time

    try:
        if not isinstance(text, str):
            raise ValueError
        parse_time(text)
    except ValueError:
        raise ModelError(
            f"'call' must be a time such as '200ns' or '0.2us' (the runner's cost per call), "
            f"not {text!r}"
        ) from None
    return text


def check_node(spec: str) -> str:
    """Checks a node spec with the core's parser and returns it stripped; raises
    :class:`~hypercuboid.errors.ModelError` naming what is wrong."""
    if not isinstance(spec, str) or not spec.strip():
        raise ModelError(
            f"node spec must be a non-empty string such as 'node:ranks=16,bw=12GB/s', not {spec!r}"
        )
    from hypercuboid import _core

    _core.parse_node(spec.strip())
    return spec.strip()


def node_forms() -> list[dict[str, Any]]:
    """The node specs a ``node`` spec may name, as the core's table has them (dicts as
    :func:`hypercuboid.schedule.model_forms`)."""
    from hypercuboid import _core
    from hypercuboid.schedule import _form

    return [_form(f) for f in _core.node_forms()]


def load(path: str | Path) -> str:
    """Reads a model file with the core's reader (the one the C API uses) and returns its model
    spec, or raises :class:`~hypercuboid.errors.ModelError` starting with the path and saying
    what is wrong with the file."""
    from hypercuboid import _core

    return _core.read_model_file(str(path))


def load_file(path: str | Path) -> Any:
    """Reads a model file with the core's reader and returns all it says: a frozen
    ``ModelFile`` with ``model`` (the model spec), ``node`` (the node spec or None),
    ``models`` (a dict of further model specs by name), ``library``, ``nranks``,
    ``ranks_per_node`` (None each when absent) and ``fits`` (the JSON value or None). Raises
    :class:`~hypercuboid.errors.ModelError` starting with the path and saying what is wrong."""
    from hypercuboid import _core

    return _core.load_model_file(str(path))


def fmt_time(seconds: float, rate: bool = False) -> str:
    """A time for a spec string, in the unit that reads best (``1.34us``, ``350ps``), to 4
    significant digits. A time below a nanosecond is rounded to whole picoseconds, the
    simulator's resolution (its parser refuses ``374.8ps``); a ``rate`` (a time per byte, such as
    ``beta`` or ``G``) keeps its fraction (``27.61ps``)."""
    if seconds <= 0:
        return "0"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            return f"{seconds / scale:.4g}{unit}"
    ps = seconds / 1e-12
    return f"{ps:.4g}ps" if rate else f"{round(ps)}ps"


def machine_info(mpi_library: str | None = None, nranks: int | None = None) -> dict:
    """Where a measurement was made."""
    info: dict[str, Any] = {
        "host": platform.node(),
        "system": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
    }
    if mpi_library is not None:
        info["mpi_library"] = mpi_library
    if nranks is not None:
        info["nranks"] = nranks
    return info


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2**32:
        raise ModelError(f"{name} must be a whole number from 1 to {2**32 - 1}, not {value!r}")
    return value


def write(
    path: str | Path,
    spec: str,
    source: str,
    fitted: dict,
    machine: dict,
    *,
    node: str | None = None,
    models: dict[str, str] | None = None,
    library: str | None = None,
    nranks: int | None = None,
    ranks_per_node: int | None = None,
    fits: Any = None,
    call: str | None = None,
    force: bool = False,
) -> Path:
    """Writes a model file (an existing ``path`` raises
    :class:`~hypercuboid.errors.OutputExistsError` unless ``force=True``). The model spec, the
    ``node`` spec and every spec of ``models`` are checked by the core's parsers first;
    ``nranks`` and ``ranks_per_node`` must be whole numbers >= 1, ``library`` a string,
    ``fits`` JSON-serialisable. Optional keys left as None are not written, so the file reads
    as before. ``call`` (a time such as ``201.3ns``: the native runner's cost per collective
    call beyond its messages, which predict and validate add to every simulated call) is
    checked by :func:`hypercuboid.units.parse_time`."""
    doc: dict[str, Any] = {"model": check_spec(spec)}
    if node is not None:
        doc["node"] = check_node(node)
    if models is not None:
        if not isinstance(models, dict):
            raise ModelError(f"models must be a dict of model specs by name, not {models!r}")
        doc["models"] = {str(k): check_spec(v) for k, v in models.items()}
    if library is not None:
        if not isinstance(library, str):
            raise ModelError(f"library must be a string, not {library!r}")
        doc["library"] = library
    if nranks is not None:
        doc["nranks"] = _count("nranks", nranks)
    if ranks_per_node is not None:
        doc["ranks_per_node"] = _count("ranks_per_node", ranks_per_node)
    if fits is not None:
        doc["fits"] = fits
    if call is not None:
        doc["call"] = check_call(call)
    doc.update(
        {
            "source": source,
            "fitted": fitted,
            "machine": machine,
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
    )
    try:
        text = json.dumps(doc, indent=2, allow_nan=False) + "\n"
    except (TypeError, ValueError) as e:
        raise ModelError(f"a model file holds JSON values only: {e}") from None
    from hypercuboid.schedule import refuse_existing

    p = Path(refuse_existing(path, force))
    p.write_text(text, encoding="utf-8")
    return p
