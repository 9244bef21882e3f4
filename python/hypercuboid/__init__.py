"""hypercuboid: design, verify, simulate and run the communication of HPC programs."""

from __future__ import annotations

from hypercuboid import _core

__version__: str = _core.__version__

__all__ = ["__version__"]
