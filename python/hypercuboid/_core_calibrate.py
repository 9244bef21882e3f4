"""The calibration fits of ``hypercuboid._core``, for their stubs (``_core_calibrate.pyi``), as
``_core_topology`` is for the topology part. Import them from ``hypercuboid._core``."""

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
