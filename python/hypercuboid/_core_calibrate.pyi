"""Type stubs of the calibration fits of the Rust extension ``hypercuboid._core``
(``crates/hypercuboid-py/src/fit.rs``; ``hypercuboid.mpi.calibrate`` uses them). ``_core.pyi``
re-exports every public name here, and this module only re-exports them at run time: import
them from ``hypercuboid._core``. Conventions as in ``_core.pyi``; ``make lint`` checks them
against the module through it (mypy's stubtest).
"""

from typing import Final, final

class _Fit:
    r2: Final[float]
    predicted: Final[list[float]]
    residuals: Final[list[float]]

@final
class LinearFit(_Fit):
    coef: Final[list[float]]

@final
class FitSegment:
    first: Final[int]
    end: Final[int]
    lo: Final[float]
    hi: Final[float]
    intercept: Final[float]
    slope: Final[float]
    r2: Final[float]

@final
class PiecewiseFit(_Fit):
    segments: Final[list[FitSegment]]
    breaks: Final[list[float]]
    sse: Final[list[float]]
    switches: Final[list[tuple[float, float]]]

@final
class ContentionFit(_Fit):
    bandwidth: Final[float]
    saturated: Final[bool]

@final
class LogGopsFit(_Fit):
    latency: Final[float]
    latency_excess: Final[float]
    overhead: Final[float]
    gap: Final[float]
    gap_per_byte: Final[float]
    alpha_r: Final[float]
    alpha_p: Final[float]
    alpha_p_shortfall: Final[float]
    eager_limit: Final[float | None]
    pingpong: Final[PiecewiseFit]
    train: Final[LinearFit]
    overhead_train: Final[LinearFit]

@final
class ChainFit(_Fit):
    call: Final[float]
    sizes: Final[list[float]]
    step: Final[list[float]]

@final
class StepsFit(_Fit):
    latency: Final[float]
    latency_excess: Final[float]
    gap_per_byte: Final[float]
    two_flows_gap_per_byte: Final[float]
    eager_limit: Final[float]
    eager_found: Final[bool]
    rendezvous: Final[float]
    second_limit: Final[float | None]
    second_rendezvous: Final[float]
    exchange_wait: Final[float]
    switches: Final[list[tuple[float, float]]]
    breaks: Final[list[list[float]]]
    sizes: Final[list[float]]
    exchange: Final[list[bool]]
    times: Final[list[float]]

def fit_least_squares(
    columns: list[list[float]],
    y: list[float],
    weights: list[float] | None = None,
    nonnegative: bool = False,
) -> LinearFit:
    """Least squares ``y ≈ Σ coef_j · columns[j]`` (``nonnegative``: every coef >= 0)."""

def fit_line(x: list[float], y: list[float], relative: bool = False) -> LinearFit:
    """``y ≈ a + b·x`` with ``a, b >= 0`` (``relative``: weights 1/y)."""

def fit_piecewise(
    x: list[float], y: list[float], max_segments: int = 3, min_points: int = 3
) -> PiecewiseFit:
    """Piecewise lines with break points (x ascending, y > 0)."""

def fit_contention(flows: list[float], per_flow: list[float], single: float) -> ContentionFit:
    """``BW`` with ``per_flow[i] ≈ min(single, BW / flows[i])``."""

def fit_loggops(
    sizes: list[float],
    one_way: list[float],
    train_n: list[float],
    train_t: list[float],
    delayed_n: list[float],
    delayed_t: list[float],
    max_segments: int = 3,
) -> LogGopsFit:
    """LogGOPS's L, o, g, G, S (and α_p, α_r) from a ping-pong and two issue-rate trains."""

R2_THRESHOLD: Final[float]

def poor_fit(what: str, r2: float) -> str | None:
    """The warning for a fit whose R² is below ``R2_THRESHOLD``; None when it fits."""

def node_bandwidth(
    fitted: float,
    saturated: bool,
    most_flows_per_node: float,
    two_flows_gap_per_byte: float | None,
) -> float:
    """The node level's bandwidth: 2/G2 of two flows, or ``fitted`` where lower and saturated."""

def fit_chains(sizes: list[float], steps: list[float], times: list[float]) -> ChainFit:
    """``time(k, s) = C + k·x(s)`` from chains of ``k`` steps of ``s`` bytes."""

def fit_steps(
    overhead: float,
    sizes: list[float],
    times: list[float],
    exchange: tuple[list[float], list[float]] | None = None,
    max_segments: int = 3,
) -> StepsFit:
    """LogGOPS's L, G, G2, S, R, S2, R2, X from one-way (and exchange) steps by size."""
