"""The calibration fits of the extension ``hypercuboid._core`` under a name of their own, for
their stubs: ``_core_calibrate.pyi`` declares these names (``_core.pyi`` re-exports them) and
``make lint`` checks it against them here (mypy's stubtest). Import them from
``hypercuboid._core``.
"""

from hypercuboid._core import (  # noqa: F401 (the names the stubs declare)
    R2_THRESHOLD,
    ChainFit,
    ContentionFit,
    FitSegment,
    LinearFit,
    LogGopsFit,
    PiecewiseFit,
    StepsFit,
    fit_chains,
    fit_contention,
    fit_least_squares,
    fit_line,
    fit_loggops,
    fit_piecewise,
    fit_steps,
    node_bandwidth,
    poor_fit,
)
