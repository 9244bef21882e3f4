"""Model files: a cost model fitted on a machine, for ``simulate --model-file`` and ``tune``.

A model file is JSON::

    {"model": "postal:alpha=1.2us,beta=0.35ns,gamma=0",
     "source": "bench pingpong",
     "fitted": {...},           # the measured values and the fit's quality
     "machine": {...},          # host, MPI library, ranks
     "date": "2025-01-01T12:00:00+00:00"}

``model`` is a cost-model spec string (times with units; β and γ per byte, δ per
reduction), checked by the core's own model parser. Files are read by the core
(``_core.read_model_file``); this module writes them. No mpi4py is imported here: ``simulate``
and ``tune`` read model files on machines without MPI.
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


def load(path: str | Path) -> str:
    """Reads a model file with the core's reader (the one the C API uses) and returns its model
    spec, or raises :class:`~hypercuboid.errors.ModelError` starting with the path and saying
    what is wrong with the file."""
    from hypercuboid import _core

    return _core.read_model_file(str(path))


def fmt_time(seconds: float) -> str:
    """A time for a spec string, in the unit that reads best (``1.34us``, ``0.352ns``)."""
    if seconds <= 0:
        return "0"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            return f"{seconds / scale:.4g}{unit}"
    return f"{seconds / 1e-12:.4g}ps"


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


def write(path: str | Path, spec: str, source: str, fitted: dict, machine: dict) -> Path:
    """Writes a model file (the spec is checked first)."""
    doc = {
        "model": check_spec(spec),
        "source": source,
        "fitted": fitted,
        "machine": machine,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    p = Path(path)
    p.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return p
