"""Model files: a cost model fitted on a machine, for ``simulate --model-file`` and ``tune``.

A model file is JSON::

    {"model": "postal:alpha=1.2us,beta=0.35ns,gamma=0",
     "source": "bench pingpong",
     "fitted": {...},           # the measured values and the fit's quality
     "machine": {...},          # host, MPI library, ranks
     "date": "2025-01-01T12:00:00+00:00"}

``model`` is a cost-model spec string (times with units; β and γ per byte, δ per
reduction). This module is plain Python: it imports neither mpi4py nor the Rust core.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
import re
from pathlib import Path
from typing import Any

from hypercuboid.errors import ModelError

#: Parameters each model family takes (the spec may leave some out).
MODEL_PARAMS: dict[str, tuple[str, ...]] = {
    "postal": ("alpha", "beta", "gamma", "delta"),
    "pipelined": ("alpha_p", "alpha_r", "beta", "gamma", "delta"),
    "loggops": ("L", "o", "g", "G", "O", "S", "gamma", "delta"),
}

_VALUE = re.compile(r"^[+]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?(ps|ns|us|µs|ms|s)?$")


def check_spec(spec: str) -> str:
    """Checks the syntax of a cost-model spec (``NAME:key=value,...``: a known model, known
    keys, each once, non-negative numbers with an optional time unit) and returns it stripped.
    The core re-reads it; this catches a corrupt file early with a clear message."""
    if not isinstance(spec, str) or not spec.strip():
        raise ModelError(f"model spec must be a non-empty string, not {spec!r}")
    spec = spec.strip()
    name, _, params = spec.partition(":")
    if name not in MODEL_PARAMS:
        raise ModelError(
            f"model '{name}' in spec '{spec}' is unknown; accepted: {', '.join(MODEL_PARAMS)}"
        )
    seen = set()
    for part in filter(None, params.split(",")):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq:
            raise ModelError(f"'{part}' in model spec '{spec}' is not key=value")
        if key not in MODEL_PARAMS[name]:
            raise ModelError(
                f"'{key}' is not a parameter of model '{name}'; accepted: "
                f"{', '.join(MODEL_PARAMS[name])}"
            )
        if key in seen:
            raise ModelError(f"'{key}' appears twice in model spec '{spec}'")
        seen.add(key)
        if not _VALUE.match(value.strip()):
            raise ModelError(
                f"{key}={value} in model spec '{spec}' is not a non-negative number with an "
                "optional unit (ps, ns, us, ms, s)"
            )
    return spec


def load(path: str | Path) -> str:
    """Reads a model file and returns its model spec, or raises
    :class:`~hypercuboid.errors.ModelError` saying what is wrong with the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ModelError(f"{p}: not a model file (not UTF-8 text)") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ModelError(
            f"{p}: not a model file (invalid JSON at line {e.lineno}, column {e.colno}: {e.msg})"
        ) from None
    if not isinstance(doc, dict):
        raise ModelError(
            f"{p}: not a model file (expected a JSON object, got {type(doc).__name__})"
        )
    if "model" not in doc:
        raise ModelError(
            f"{p}: not a model file (no 'model' key; keys: {', '.join(sorted(doc)) or 'none'})"
        )
    try:
        return check_spec(doc["model"])
    except ModelError as e:
        raise ModelError(f"{p}: {e}") from None


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
