"""Type stubs of the Rust extension ``hypercuboid._core`` (the public API wraps it: see
``hypercuboid.schedule``, ``hypercuboid.topology``, ``hypercuboid.tune``, ``hypercuboid.netsim``).

Times cross the boundary as integer picoseconds (``*_ps``) unless a name says otherwise.
Errors are raised as the classes of :mod:`hypercuboid.errors`. Defaults are written ``...``:
their values are the core's (``DEFAULTS``), not typed again here. ``make lint`` checks these
stubs against the module (mypy's stubtest). The topology part (``Topology``, its analyses, the
``topology_*`` functions, SimGrid platforms) is declared in ``_core_topology.pyi``, the
calibration fits in ``_core_calibrate.pyi``; both are re-exported here.
"""

from typing import Any, Final, final

from typing_extensions import TypedDict, Unpack

from hypercuboid._core_calibrate import R2_THRESHOLD as R2_THRESHOLD
from hypercuboid._core_calibrate import ChainFit as ChainFit
from hypercuboid._core_calibrate import ContentionFit as ContentionFit
from hypercuboid._core_calibrate import FitSegment as FitSegment
from hypercuboid._core_calibrate import LinearFit as LinearFit
from hypercuboid._core_calibrate import LogGopsFit as LogGopsFit
from hypercuboid._core_calibrate import PiecewiseFit as PiecewiseFit
from hypercuboid._core_calibrate import StepsFit as StepsFit
from hypercuboid._core_calibrate import fit_chains as fit_chains
from hypercuboid._core_calibrate import fit_contention as fit_contention
from hypercuboid._core_calibrate import fit_least_squares as fit_least_squares
from hypercuboid._core_calibrate import fit_line as fit_line
from hypercuboid._core_calibrate import fit_loggops as fit_loggops
from hypercuboid._core_calibrate import fit_piecewise as fit_piecewise
from hypercuboid._core_calibrate import fit_steps as fit_steps
from hypercuboid._core_calibrate import node_bandwidth as node_bandwidth
from hypercuboid._core_calibrate import poor_fit as poor_fit
from hypercuboid._core_topology import Bisection as Bisection
from hypercuboid._core_topology import CompareRow as CompareRow
from hypercuboid._core_topology import Topology as Topology
from hypercuboid._core_topology import TopologyAnalysis as TopologyAnalysis
from hypercuboid._core_topology import TreeAnalysis as TreeAnalysis
from hypercuboid._core_topology import topology_compare as topology_compare
from hypercuboid._core_topology import topology_families as topology_families
from hypercuboid._core_topology import topology_from_json as topology_from_json
from hypercuboid._core_topology import topology_from_parts as topology_from_parts
from hypercuboid._core_topology import topology_from_simgrid as topology_from_simgrid
from hypercuboid._core_topology import topology_generate as topology_generate
from hypercuboid._core_topology import topology_graphml_source as topology_graphml_source
from hypercuboid._core_topology import topology_ml3b as topology_ml3b
from hypercuboid._core_topology import topology_to_simgrid as topology_to_simgrid
from hypercuboid._core_topology import topology_tree_preset as topology_tree_preset

__version__: str

DEFAULTS: dict[str, dict[str, Any]]
"""The core's defaults by section: ``allreduce`` (count, dtype, op), ``alltoall`` (count,
dtype), ``verify`` (eager_limit,
semantics, max_problems, threads), ``tune`` (top, pool, max_schedules), ``netsim`` (seed, warmup_ps,
duration_ps, drain, packet_bytes, buffer_bytes, switch_latency_ps, watchdog_ps, top_links, links,
threads)."""

# -- schedules ----------------------------------------------------------------------------------

@final
class Schedule:
    """A schedule held in Rust memory."""

    nranks: Final[int]
    total_ops: Final[int]
    num_shapes: Final[int]
    memory_bytes: Final[int]
    meta: Final[ScheduleMeta]
    def sends_per_rank(self) -> Any:
        """Sends of each rank's program (uint32 NumPy array)."""
    def program_text(self, rank: int) -> list[str]: ...
    def program(self, rank: int) -> Program:
        """Rank ``rank``'s program as columns, checked against the schedule's buffers."""
    def verify(
        self,
        eager_limit: int = ...,
        semantics: bool = ...,
        max_problems: int = ...,
        threads: int = ...,
    ) -> VerifyReport: ...
    def simulate(
        self,
        model: str,
        trace: bool = ...,
        noise: str | None = ...,
        seed: int = ...,
        chrome_trace: str | None = ...,
        calls: int = ...,
        threads: int = ...,
    ) -> SimulationResult: ...
    def simulate_network(
        self,
        topology: Topology,
        model: str | None = ...,
        routing: str = ...,
        level: str = ...,
        mapping: str = ...,
        mapping_endpoints: list[int] | None = ...,
        ranks_per_endpoint: int = ...,
        nic: str = ...,
        seed: int = ...,
        packet_bytes: int = ...,
        buffer_bytes: int = ...,
        switch_latency_ps: int = ...,
        watchdog_ps: int = ...,
        threads: int = ...,
        trace: bool = ...,
        chrome_trace: str | None = ...,
        records: bool = ...,
        sample_links: bool = ...,
        calls: int = ...,
        noise: str | None = ...,
    ) -> SimulationResult:
        """:meth:`simulate`'s result with its ``network``."""
    def to_goal(self, reduce_ns_per_byte: float = ...) -> str: ...
    def to_text(self) -> str: ...
    def write_goal(self, path: str, reduce_ns_per_byte: float = ...) -> None: ...
    def write_text(self, path: str) -> None: ...
    def to_c(self, name: str | None = ...) -> str: ...
    def write_c(self, path: str, name: str | None = ...) -> None: ...

@final
class HaloMeta:
    lattice: Final[tuple[int, int, int]]
    dims: Final[tuple[int, int, int]]
    periodic: Final[tuple[bool, bool, bool]]
    values: Final[int]
    stencil: Final[str]

@final
class ScheduleMeta:
    """What a schedule computes (``op`` None without a reduction; ``block`` for an alltoall;
    ``halo`` for a halo exchange)."""

    collective: Final[str]
    count: Final[int]
    dtype: Final[str]
    op: Final[str | None]
    block: Final[int | None]
    halo: Final[HaloMeta | None]
    name: Final[str]
    elem_size: Final[int]

@final
class VerifyStats:
    ranks: Final[int]
    ops: Final[int]
    messages: Final[int]
    bytes: Final[int]

@final
class VerifySemantics:
    reduces: Final[bool]
    correct: Final[bool]
    same_order_commutative: Final[bool]
    same_order_noncommutative: Final[bool]
    canonical_order: Final[bool]
    exact: Final[bool]
    noncommutative_difference: Final[str | None]
    commutative_difference: Final[str | None]
    noncanonical: Final[str | None]

@final
class VerifyReport:
    """The verifier's findings (``text``: the report as the CLI prints it)."""

    sound: Final[bool]
    problems: Final[list[str]]
    problem_kinds: Final[list[str]]
    truncated: Final[int]
    notes: Final[list[str]]
    stats: Final[VerifyStats]
    semantics: Final[VerifySemantics | None]
    text: Final[str]

@final
class TraceColumns:
    """Per-op and per-message timings (NumPy arrays, times in ps)."""

    op_rank: Final[Any]
    op_index: Final[Any]
    op_kind: Final[Any]
    op_start: Final[Any]
    op_end: Final[Any]
    msg_src: Final[Any]
    msg_dst: Final[Any]
    msg_src_op: Final[Any]
    msg_dst_op: Final[Any]
    msg_depart: Final[Any]
    msg_arrival: Final[Any]
    msg_bytes: Final[Any]

@final
class LinkLoad:
    a: Final[str]
    b: Final[str]
    kind: Final[str]
    bytes: Final[int]
    utilisation: Final[float]
    link: Final[int]

@final
class MessageTotals:
    network: Final[int]
    control: Final[int]
    local: Final[int]
    bytes: Final[int]
    transfer_ps: Final[int]
    queued_ps: Final[int]

@final
class MessageRecord:
    src: Final[int]
    dst: Final[int]
    bytes: Final[int]
    injected_ps: Final[int]
    delivered_ps: Final[int]
    transfer_ps: Final[int]
    queued_ps: Final[int]

@final
class MessageRecords:
    """One row per network message (uint64 NumPy columns)."""

    src: Final[Any]
    dst: Final[Any]
    bytes: Final[Any]
    injected_ps: Final[Any]
    delivered_ps: Final[Any]
    transfer_ps: Final[Any]
    queued_ps: Final[Any]

@final
class TimelineLink:
    index: Final[int]
    utilisation: Final[Any]

@final
class LinkTimeline:
    times_ps: Final[Any]
    links: Final[list[TimelineLink]]

@final
class NetworkRunResult:
    level: Final[str]
    routing: Final[str]
    topology: Final[str]
    links: Final[list[LinkLoad]]
    mean_network_utilisation: Final[float]
    messages: Final[MessageTotals]
    worst: Final[MessageRecord | None]
    records: Final[MessageRecords | None]
    placement: Final[Any]
    wire_units: Final[int]
    wire_events: Final[int]
    timeline: Final[LinkTimeline | None]

@final
class SimulationResult:
    """A simulation's result (``network`` when it ran on a network, ``threads`` on a model)."""

    model: Final[str]
    completion_ps: Final[int]
    rank_finish_ps: Final[Any]
    ops: Final[int]
    messages: Final[int]
    threads: Final[int | None]
    trace: Final[TraceColumns | None]
    network: Final[NetworkRunResult | None]

def allreduce(
    algorithm: str, nranks: int, count: int = ..., dtype: str = ..., op: str = ...
) -> Schedule: ...
def allreduce_program(
    algorithm: str,
    nranks: int,
    rank: int,
    count: int = ...,
    dtype: str = ...,
    op: str = ...,
) -> Program:
    """One rank's program, built alone (O(its own ops))."""

def alltoall(algorithm: str, nranks: int, count: int = ..., dtype: str = ...) -> Schedule:
    """The alltoall schedule; ``count`` elements per pair of ranks."""

def alltoall_program(
    algorithm: str,
    nranks: int,
    rank: int,
    count: int = ...,
    dtype: str = ...,
) -> Program:
    """One rank's alltoall program, built alone (O(its own ops))."""

@final
class Program:
    """One rank's program as columns (the core's one encoding), checked by the core: per-op
    ``kind`` (codes ``OP_KINDS``), ``peer`` (-1 none or any), ``tag``, ``bytes``, ``combine``
    (``COMBINES``), ``cpu``, ``nic``, ``time_ps``, ``buf_slot/offset/len``,
    ``src_slot/offset/len`` (slots ``SLOT_*``); ``deps`` as ``(op, on, kind)`` (``DEP_KINDS``);
    ``scratch`` sizes. Read like a dict of those columns."""

    @staticmethod
    def from_columns(
        columns: Any, *, rank: int, nranks: int, input_len: int, output_len: int
    ) -> Program: ...
    rank: Final[int]
    nranks: Final[int]
    input_len: Final[int]
    output_len: Final[int]
    num_ops: Final[int]
    @property
    def dep_columns(self) -> tuple[Any, Any, Any]:
        """``(dep_op, dep_on, dep_kind)`` NumPy arrays, sorted by op."""
    def __getitem__(self, key: str, /) -> Any: ...
    def __contains__(self, key: str, /) -> bool: ...
    def __iter__(self) -> Any: ...
    def keys(self) -> list[str]: ...

OP_KINDS: tuple[str, ...]
COMBINES: tuple[str, ...]
DEP_KINDS: tuple[str, ...]
SLOT_INPUT: int
SLOT_OUTPUT: int
SLOT_SCRATCH: int
SLOT_NONE: int
PROGRAM_COLUMNS: tuple[str, ...]
DTYPES: dict[str, int]
DTYPE_CODES: dict[str, int]
REDUCE_OPS: tuple[str, ...]

def c_codes_header() -> str:
    """The codes of the program encoding as a C header (``hc_codes.h``)."""

def native_sources() -> list[tuple[str, str]]:
    """The native runner's C sources as (name, text): ``hc_codes.h``, ``hc_runner.*``."""

def allreduce_algorithms() -> list[str]: ...

@final
class SpecForm:
    """One entry of a table of spec forms."""

    name: Final[str]
    aliases: Final[list[str]]
    summary: Final[str]
    keys: Final[list[tuple[str, str]]]
    positional: Final[str | None]
    usage: Final[str]
    example: Final[str]

@final
class AlgorithmInfo:
    form: Final[SpecForm]
    needs_topology: Final[bool]
    cost: Final[str | None]
    guarantees: Final[list[tuple[str, str]]]

@final
class CollectiveInfo:
    name: Final[str]
    summary: Final[str]
    algorithms: Final[list[AlgorithmInfo]]

def collectives() -> list[CollectiveInfo]:
    """The registry: every collective and its algorithms."""

def allreduce_cost(
    algorithm: str,
    nranks: int,
    count: int,
    dtype: str,
    alpha_ps: int,
    beta_ps_per_byte: float,
    gamma_ps_per_byte: float = ...,
) -> int: ...
def parse_schedule(text: str, name: str = ...) -> Schedule: ...
def read_schedule(path: str) -> Schedule: ...
def parse_model(spec: str) -> str: ...
def parse_noise(spec: str) -> str: ...
def model_forms() -> list[SpecForm]: ...
def noise_forms() -> list[SpecForm]: ...
def network_mappings() -> str: ...

# -- recursive multiplying and tuning -----------------------------------------------------------

@final
class ScheduleString:
    text: Final[str]
    stages: Final[list[tuple[str, int, int, int]]]
    factored: Final[bool]
    nranks: Final[int | None]

@final
class ScheduleCounts:
    factored: Final[int]
    split: Final[int]
    merged: Final[int]
    total: Final[int]

@final
class OptimalSchedule:
    schedule: Final[str]
    time_ps: Final[int]
    divisors: Final[int]

@final
class TuneParams:
    alpha_p_ps: Final[int]
    alpha_r_ps: Final[int]
    beta_ps_per_byte: Final[float]
    gamma_ps_per_byte: Final[float]
    delta_ps: Final[int]
    bytes: Final[int]

@final
class TuneRow:
    schedule: Final[str]
    stages: Final[int]
    predicted_ps: Final[int]
    simulated_ps: Final[int | None]

@final
class TuneReport:
    nranks: Final[int]
    model: Final[str]
    params: Final[TuneParams]
    b_opt: Final[float | None]
    method: Final[str]
    reason: Final[str | None]
    divisors: Final[int | None]
    counts: Final[ScheduleCounts | None]
    simulated: Final[int]
    rows: Final[list[TuneRow]]

def rm_parse(text: str) -> ScheduleString: ...
def rm_fit(text: str, nranks: int) -> None: ...
def rm_suggest(nranks: int) -> list[str]: ...
def rm_enumerate(
    nranks: int,
    factored: bool = ...,
    split: bool = ...,
    merged: bool = ...,
    max_schedules: int = ...,
) -> list[str]: ...
def rm_count(
    nranks: int, factored: bool = ..., split: bool = ..., merged: bool = ...
) -> ScheduleCounts: ...
def rm_estimate(schedule: str, nranks: int, model: str, bytes: int = ...) -> int: ...
def rm_optimal(nranks: int, model: str, bytes: int = ...) -> OptimalSchedule: ...
def b_opt(ratio: float) -> float: ...
def b_opt_integer(ratio: float) -> int: ...
def tune_allreduce(
    nranks: int,
    model: str,
    count: int = ...,
    dtype: str = ...,
    top: int = ...,
    simulate: bool = ...,
    pool: int = ...,
    max_schedules: int = ...,
    factored: bool = ...,
    split: bool = ...,
    merged: bool = ...,
) -> TuneReport: ...

# -- predict ------------------------------------------------------------------------------------

@final
class Prediction:
    nranks: Final[int]
    bytes: Final[int]
    algorithm: Final[str]
    schedule: Final[str | None]
    time_ps: Final[int | None]
    error: Final[str | None]
    best: Final[bool]

@final
class Predicted:
    collective: Final[str]
    model: Final[str]
    dtype: Final[str]
    rows: Final[list[Prediction]]

def predict(
    collective: str,
    algorithms: list[str] | None,
    sizes: list[int],
    ranks: list[int],
    model: str,
    dtype: str | None = ...,
    threads: int = ...,
    node: str | None = ...,
    tuning: str | None = ...,
) -> Predicted: ...
def predict_algorithms(collective: str) -> list[str]: ...
def predict_collectives() -> list[tuple[str, str]]: ...

# -- network simulator (hypercuboid.netsim) --------------------------------------------------
@final
class ChannelGraph:
    topology: Final[str]
    routing: Final[str]
    vc_scheme: Final[str]
    vcs: Final[int]
    channels: Final[int]
    dependencies: Final[int]
    acyclic: Final[bool]
    cycle: Final[list[tuple[int, int, int]] | None]
    diameter: Final[int]
    ugal_cost: Final[str]

@final
class NetReport:
    """One netsim run's report: the fields of ``hypercuboid.netsim.Report`` (which is built
    from it), ``link_utilisation`` as (mean, max, endpoint_mean), links as (from, to, link,
    packets, utilisation) rows."""

    topology: Final[str]
    routing: Final[str]
    vc_scheme: Final[str]
    vcs: Final[int]
    traffic: Final[str]
    offered: Final[float]
    generated: Final[float]
    accepted: Final[float]
    latency_avg_ns: Final[float]
    latency_p50_ns: Final[float]
    latency_p99_ns: Final[float]
    latency_min_ns: Final[float]
    latency_max_ns: Final[float]
    hops_avg: Final[float]
    hop_histogram: Final[list[int]]
    indirect_fraction: Final[float]
    delivered: Final[int]
    generated_packets: Final[int]
    injected_total: Final[int]
    delivered_total: Final[int]
    in_flight: Final[int]
    source_queued: Final[int]
    window_ns: Final[tuple[float, float]]
    end_ns: Final[float]
    events: Final[int]
    wall_seconds: Final[float]
    threads: Final[int]
    packets_per_second: Final[float]
    link_utilisation: Final[tuple[float, float, float]]
    top_links: Final[list[tuple[int, int, int, int, float]]]
    links: Final[list[tuple[int, int, int, int, float]] | None]
    completion_ns: Final[float | None]
    effective_throughput: Final[float | None]
    dims: Final[tuple[int, int, int] | None]

class _NetsimOptions(TypedDict, total=False):
    """The router and report keywords of :func:`netsim_run` and :func:`netsim_exchange`."""

    seed: int
    packet_bytes: int
    buffer_bytes: int
    switch_latency_ps: int
    watchdog_ps: int
    top_links: int
    links: bool
    threads: int

def netsim_run(
    topology: Topology,
    routing: str,
    traffic: str,
    loads: list[float],
    *,
    warmup_ps: int = ...,
    duration_ps: int = ...,
    drain: bool = ...,
    **options: Unpack[_NetsimOptions],
) -> list[NetReport]: ...
def netsim_exchange(
    topology: Topology,
    routing: str,
    pattern: str,
    *,
    dims: tuple[int, int, int] | None = ...,
    message_bytes: int | None = ...,
    interleave: bool = ...,
    **options: Unpack[_NetsimOptions],
) -> NetReport: ...
def netsim_cdg(topology: Topology, routing: str) -> ChannelGraph: ...
def netsim_pattern(topology: Topology, traffic: str, *, seed: int = ...) -> list[int] | None: ...
def netsim_routing(spec: str) -> str: ...
def netsim_traffic(spec: str) -> str: ...
def netsim_forms() -> tuple[list[SpecForm], list[SpecForm], list[SpecForm]]: ...
def netsim_fit_torus(n: int) -> tuple[int, int, int] | None: ...
def netsim_zero_load_latency(
    topology: Topology, hops: int, *, packet_bytes: int = ..., switch_latency_ps: int = ...
) -> int: ...

# -- alltoall phases (hypercuboid.phases) ---------------------------------------------------------

@final
class AlltoallPhases:
    """Contention-free phases of the all-to-all exchange with the lower bound and the checks."""

    topology: Final[str]
    method: Final[str]
    routing: Final[str]
    machines: Final[int]
    phases: Final[int]
    messages: Final[int]
    load: Final[int]
    lower_bound: Final[int]
    gap: Final[int]
    ratio: Final[float]
    root: Final[str | None]
    root_router: Final[int | None]
    subtrees: Final[list[list[int]]]
    complete: Final[bool]
    contention_free: Final[bool]
    optimal: Final[bool]
    violations: Final[tuple[str | None, str | None, str | None]]
    def schedule(self) -> list[list[tuple[int, int]]]: ...
    def arrays(self) -> tuple[Any, Any]: ...
    def occupancy(self) -> tuple[list[str], Any]: ...

def alltoall_phases(
    topology: Topology, method: str = ..., routing: str = ...
) -> AlltoallPhases: ...
def alltoall_random_tree(
    machines: int, switches: int, shape: str = ..., seed: int = ...
) -> Topology: ...
def alltoall_random_tree_json(
    machines: int, switches: int, shape: str = ..., seed: int = ...
) -> str: ...

@final
class SyncCheck:
    sync: Final[str]
    pairs: Final[int]
    violated: Final[int]
    violation: Final[str | None]

@final
class SyncCounts:
    ranks: Final[int]
    messages: Final[int]
    phases: Final[int]
    pairwise: Final[int]
    pairwise_reduced: Final[int]
    barrier: Final[int]
    checks: Final[list[SyncCheck]]

@final
class RoutineCounts:
    ranks: Final[int]
    phases: Final[int]
    messages: Final[int]
    syncs: Final[int]

def alltoall_sync_counts(
    topology: Topology, mapping: str | None = ..., check: bool = ...
) -> SyncCounts: ...
def alltoall_routine(
    topology: Topology,
    mapping: str | None = ...,
    sync: str = ...,
    min_size: int = ...,
    pmpi: bool = ...,
    name: str = ...,
    provenance: str = ...,
) -> tuple[str, RoutineCounts]: ...

# -- units (hypercuboid.units) ------------------------------------------------------------------
def parse_time(text: str) -> int: ...
def parse_time_f64(text: str) -> float: ...
def parse_size(text: str) -> int: ...
def parse_bandwidth(text: str) -> float: ...
def format_size(bytes: int) -> str: ...
def set_memory_limit(limit: int | None) -> None: ...
def memory_limit() -> int | None: ...
def available_memory() -> int | None: ...
def read_text(path: str) -> str: ...
def format_time_exact(ps: int) -> str: ...

@final
class HaloDecomposition:
    """A 3-D Cartesian decomposition of a lattice (``hypercuboid.halo.Decomposition``)."""

    def __new__(
        cls,
        lattice: tuple[int, int, int],
        ranks: int,
        dims: tuple[int, int, int] | None = ...,
        periodic: tuple[bool, bool, bool] = ...,
    ) -> HaloDecomposition: ...
    @staticmethod
    def of_subdomain(
        subdomain: tuple[int, int, int],
        dims: tuple[int, int, int],
        periodic: tuple[bool, bool, bool] = ...,
    ) -> HaloDecomposition: ...
    lattice: Final[tuple[int, int, int]]
    dims: Final[tuple[int, int, int]]
    periodic: Final[tuple[bool, bool, bool]]
    nranks: Final[int]
    def coords(self, rank: int) -> tuple[int, int, int]: ...
    def subdomain(self, rank: int) -> tuple[int, int, int]: ...
    def offset(self, rank: int) -> tuple[int, int, int]: ...
    def neighbour(self, rank: int, d: tuple[int, int, int]) -> int | None: ...
    def rank_at(self, c: tuple[int, int, int]) -> int: ...

def halo(
    algorithm: str,
    decomp: HaloDecomposition,
    values: int = ...,
    bytes: int = ...,
    kernel_ps: int = ...,
) -> Schedule: ...
def halo_program(
    algorithm: str,
    decomp: HaloDecomposition,
    rank: int,
    values: int = ...,
    bytes: int = ...,
    kernel_ps: int = ...,
) -> Program: ...
def halo_saving(decomp: HaloDecomposition, rank: int) -> tuple[int, int]: ...

HALO_DIRECTIONS: tuple[tuple[int, int, int], ...]
D3Q19_VELOCITIES: tuple[tuple[int, int, int], ...]
REGION_FIELDS: int

# -- lattice Boltzmann (D3Q19 BGK; arrays of shape (nx + 2, ny + 2, nz + 2, 19), float64) -----

LBM_VELOCITIES: list[list[int]]
"""The 19 velocities ``[cx, cy, cz]`` in the order of a site's values."""
LBM_WEIGHTS: list[float]
LBM_BYTES_PER_UPDATE: int
LBM_INIT_FORMS: list[str]
LBM_LAYOUTS: list[str]
"""The memory layouts of a distribution array: ``soa``, ``aos``."""

def lbm_step(src: Any, dst: Any, tau: float, region: str = ...) -> None:
    """One collide–stream step from ``src`` into ``region`` of ``dst``, in place."""

def lbm_initialise(f: Any, offset: list[int], lattice: list[int], init: str) -> None: ...
def lbm_parse_init(init: str) -> str: ...
def lbm_viscosity(tau: float) -> float: ...
def lbm_totals(f: Any) -> tuple[float, list[float], float]:
    """``(mass, [momentum x, y, z], kinetic energy)``."""

def lbm_macroscopic(f: Any) -> tuple[Any, Any]:
    """Density (flat, ``nx·ny·nz``) and velocity ``(nx, ny, nz, 3)``."""

def lbm_region_sites(subdomain: list[int], region: str) -> int: ...
def lbm_periodic_halo(f: Any) -> None: ...
def lbm_triad(a: Any, b: Any, c: Any, s: float) -> None: ...
def lbm_layout(f: Any) -> str:
    """The layout (``soa``, ``aos``) of a distribution array, from its strides."""

def lbm_parse_layout(name: str) -> str: ...

LBM_TRIAD_BYTES_PER_ELEMENT: int

# -- the binding's boundaries (tests only) ------------------------------------------------------

def _panic_for_test(message: str, worker: bool = ...) -> None:
    """Panics with ``message`` inside the panic boundary (with ``worker``, in a thread the call
    starts): raises ``ScheduleError`` ("_panic_for_test: internal error: <message>; please
    report")."""

def _wait_for_test(seconds: float) -> int:
    """Polls the core's stop flag every millisecond for ``seconds`` with the GIL released and
    Ctrl-C wired to it, as a long call does; returns the polls made, or raises
    ``KeyboardInterrupt`` when interrupted."""

# -- choice tables, "XxYxZ" sizes, model files (crates/hypercuboid-py/src/tables.rs) ----------

@final
class Choice:
    """One value of an enumerated option of the core: its name, the other names it answers to
    (matched without regard to case) and one line of help."""

    name: Final[str]
    aliases: Final[list[str]]
    help: Final[str]
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

def choices(what: str) -> list[Choice]:
    """The values of the option ``what`` (a name of :func:`choice_tables`), the default first
    where it has one."""

def choice_name(what: str, text: str) -> str:
    """The canonical name of the value of ``what`` that ``text`` names (names and aliases match
    without regard to case); raises ``ValueError`` ``"unknown WHAT 'TEXT'; accepted: ..."``."""

def choice_tables() -> list[str]:
    """The options with a choice table: ``sync``, ``level``, ``nic``, ``routing``, ..."""

def parse_dims(text: str, what: str, count: int | None = ...) -> list[int]:
    """Sizes joined by ``x`` (``64x64x64``): ``count`` (default 3) whole numbers >= 1 (any
    number if ``None``); a bad value raises ``ValueError`` ``"WHAT 'TEXT': accepted ..."``."""

def read_model_file(path: str) -> str:
    """The model spec of the model file at ``path``; raises ``ModelError`` starting with the
    path."""

# application traces (crates/hypercuboid-py/src/apptrace.rs)

TRACE_DEFAULTS: dict[str, str]

@final
class TraceSummary:
    categories: Final[list[str]]
    time: Final[list[list[int]]]
    calls: Final[list[list[int]]]
    total: Final[list[int]]
    matrix: Final[list[int]]

@final
class ConvertedTrace:
    schedule: Final[Schedule]
    records: Final[int]
    note: Final[str | None]
    measured: Final[int]

@final
class AppTrace:
    @staticmethod
    def load(path: str) -> AppTrace: ...
    @property
    def nranks(self) -> int: ...
    @property
    def library(self) -> str: ...
    @property
    def complete(self) -> bool: ...
    @property
    def stops(self) -> list[str | None]: ...
    def calls(self, rank: int) -> list[str]: ...
    def summary(self) -> TraceSummary: ...
    def convert(
        self,
        *,
        compute_scale: float = ...,
        allreduce: str | None = ...,
        alltoall: str | None = ...,
        reduce_ns_per_byte: float = ...,
        partial: bool = ...,
        name: str | None = ...,
        library: bool = ...,
    ) -> ConvertedTrace: ...
    def write_chrome(self, path: str) -> None: ...

def trace_pack(files: list[str], out: str) -> None: ...

# -- what the MPI library would run (collectives::library) --------------------------------------

@final
class LibraryChoice:
    algorithm: Final[str]
    native: Final[str]
    note: Final[str]

def library_choice(
    library: str, collective: str, nranks: int, nbytes: int, dtype: str | None = ...
) -> LibraryChoice: ...
def library_names() -> list[tuple[str, list[str], str, str]]: ...
def library_collectives() -> list[str]: ...

@final
class ModelFile:
    """A model file as the core reads it (``load_model_file``)."""

    model: Final[str]
    node: Final[str | None]
    models: Final[dict[str, str]]
    library: Final[str | None]
    nranks: Final[int | None]
    ranks_per_node: Final[int | None]
    fits: Final[Any]

def load_model_file(path: str) -> ModelFile:
    """Every key of the model file at ``path`` the core reads; raises ``ModelError`` starting
    with the path."""

def parse_node(spec: str) -> str:
    """Validates a node spec (``node:ranks=16,bw=12GB/s``); returns it in canonical form."""

def node_forms() -> list[SpecForm]: ...
def simulate_node(
    schedule: Schedule,
    model: str,
    node: str,
    trace: bool = ...,
    noise: str | None = ...,
    seed: int = ...,
    chrome_trace: str | None = ...,
    calls: int = ...,
) -> SimulationResult:
    """Simulates ``schedule`` on the node level: ``model`` (loggops) hosts on ``node``."""
