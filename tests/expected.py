"""Lists that the core's Rust tests assert too, read from the one file both use:
``crates/hypercuboid-core/tests/data/expected.json``."""

from __future__ import annotations

import json
from pathlib import Path

_FILE = Path(__file__).resolve().parents[1] / "crates/hypercuboid-core/tests/data/expected.json"
EXPECTED: dict = json.loads(_FILE.read_text(encoding="utf-8"))
