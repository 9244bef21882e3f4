"""Shared by the example scripts that draw figures: their ``--out`` directory."""

from __future__ import annotations

import argparse


def add_out(ap: argparse.ArgumentParser, what: str = "the figures") -> None:
    """Adds ``--out``, the directory for ``what`` (default ``out/`` in the current directory;
    the docs' copies are in ``docs/figures``)."""
    ap.add_argument(
        "--out",
        default="out",
        help=f"directory for {what} (default out/ in the current directory; the docs' are in "
        "docs/figures)",
    )
