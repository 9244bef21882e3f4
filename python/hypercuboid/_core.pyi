"""Type stubs of the Rust extension ``hypercuboid._core`` (the public API wraps it: see
``hypercuboid.schedule``, ``hypercuboid.topology``, ``hypercuboid.tune``, ``hypercuboid.netsim``).

Times cross the boundary as integer picoseconds (``*_ps``) unless a name says otherwise.
Errors are raised as the classes of :mod:`hypercuboid.errors`. Defaults are written ``...``:
their values are the core's (``DEFAULTS``), not typed again here. ``make lint`` checks these
stubs against the module (mypy's stubtest).
"""

from typing import Any, final

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

    @property
    def nranks(self) -> int: ...
    @property
    def total_ops(self) -> int: ...
    @property
    def num_shapes(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...
    @property
    def meta(self) -> dict[str, Any]:
        """``{collective, count, dtype, op, name, elem_size}`` (``op`` None without one)."""
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
    ) -> dict[str, Any]:
        """``{sound, problems, problem_kinds, truncated, notes, stats, semantics, text}``."""
    def simulate(
        self,
        model: str,
        trace: bool = ...,
        noise: str | None = ...,
        seed: int = ...,
        chrome_trace: str | None = ...,
        calls: int = ...,
        threads: int = ...,
    ) -> dict[str, Any]:
        """``{model, completion_ps, rank_finish_ps, ops, messages, trace}``."""
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
    ) -> dict[str, Any]:
        """:meth:`simulate`'s dict plus ``network`` (links, messages, worst, records,
        placement, timeline, wire_units, wire_events)."""
    def to_goal(self, reduce_ns_per_byte: float = ...) -> str: ...
    def to_text(self) -> str: ...
    def write_goal(self, path: str, reduce_ns_per_byte: float = ...) -> None: ...
    def write_text(self, path: str) -> None: ...
    def to_c(self, name: str | None = ...) -> str: ...
    def write_c(self, path: str, name: str | None = ...) -> None: ...

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
    @property
    def rank(self) -> int: ...
    @property
    def nranks(self) -> int: ...
    @property
    def input_len(self) -> int: ...
    @property
    def output_len(self) -> int: ...
    @property
    def num_ops(self) -> int: ...
    @property
    def dep_columns(self) -> tuple[Any, Any, Any]:
        """``(dep_op, dep_on, dep_kind)`` NumPy arrays, sorted by op."""
    def __getitem__(self, key: str, /) -> Any: ...
    def __contains__(self, key: str, /) -> bool: ...
    def __iter__(self) -> Any: ...
    def keys(self) -> list[str]: ...
    def to_dict(self) -> dict[str, Any]: ...

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

def native_sources() -> dict[str, str]:
    """The native runner's C sources: ``hc_codes.h``, ``hc_runner.h``, ``hc_runner.c``."""

def allreduce_algorithms() -> list[str]: ...
def collectives() -> list[dict[str, Any]]:
    """The registry: ``[{name, summary, algorithms: [{name, aliases, summary, keys, positional,
    usage, example, needs_topology, cost, guarantees}]}]``."""

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
def model_forms() -> list[dict[str, Any]]: ...
def noise_forms() -> list[dict[str, Any]]: ...
def network_mappings() -> str: ...

# -- recursive multiplying and tuning -----------------------------------------------------------

def rm_parse(text: str) -> dict[str, Any]: ...
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
) -> dict[str, int]: ...
def rm_estimate(schedule: str, nranks: int, model: str, bytes: int = ...) -> int: ...
def rm_optimal(nranks: int, model: str, bytes: int = ...) -> dict[str, Any]: ...
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
) -> dict[str, Any]: ...

# -- topologies ---------------------------------------------------------------------------------

@final
class Topology:
    """A topology held in Rust memory."""

    @property
    def name(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def params(self) -> list[tuple[str, str]]: ...
    @property
    def num_routers(self) -> int: ...
    @property
    def num_endpoints(self) -> int: ...
    @property
    def num_links(self) -> int: ...
    @property
    def kinds(self) -> list[str]: ...
    @property
    def coord_names(self) -> list[str]: ...
    def router_kinds(self) -> list[int]: ...
    def coords(self) -> list[list[int]]: ...
    def endpoint_routers(self) -> list[int]: ...
    def endpoint_links(self) -> list[tuple[float, int]]: ...
    def links(self) -> list[tuple[int, int, float, int]]: ...
    def csr(self) -> tuple[list[int], list[int], list[int]]: ...
    def router_endpoints(self, r: int) -> list[int]: ...
    def router_names(self) -> list[str] | None: ...
    def endpoint_names(self) -> list[str] | None: ...
    def analyze(self) -> dict[str, Any]: ...
    def distances(self) -> bytes: ...
    def refine_bisection(self, sides: list[bool]) -> dict[str, Any]: ...
    def bisect(self, starts: int = ..., seed: int = ...) -> dict[str, Any]: ...
    def to_json(self) -> str: ...
    def to_graphml(self) -> str: ...
    def to_anynet(self, cycle_ps: int | None = ...) -> str: ...
    def to_dot(self, endpoints: bool = ...) -> str: ...

def topology_generate(spec: str) -> Topology: ...
def topology_from_json(text: str, what: str = ...) -> Topology: ...
def topology_from_parts(
    name: str,
    family: str,
    params: list[tuple[str, str]],
    kinds: list[str],
    router_kinds: list[int],
    coord_names: list[str],
    coords: list[list[int]],
    endpoint_routers: list[int],
    endpoint_links: list[tuple[float, int]],
    links: list[tuple[int, int, float, int]],
    router_names: list[str] | None = ...,
    endpoint_names: list[str] | None = ...,
) -> Topology: ...
def topology_families() -> list[dict[str, Any]]: ...
def topology_graphml_source(spec: str) -> tuple[str, int] | None: ...
def topology_compare(radix: int) -> list[dict[str, Any]]: ...
def topology_tree_preset(name: str) -> str: ...
def topology_ml3b(k: int) -> list[list[int]]: ...

# -- network simulator (hypercuboid.netsim) --------------------------------------------------
def netsim_run(
    topology: Topology,
    routing: str,
    traffic: str,
    loads: list[float],
    *,
    seed: int = ...,
    warmup_ps: int = ...,
    duration_ps: int = ...,
    drain: bool = ...,
    packet_bytes: int = ...,
    buffer_bytes: int = ...,
    switch_latency_ps: int = ...,
    watchdog_ps: int = ...,
    top_links: int = ...,
    links: bool = ...,
    threads: int = ...,
) -> list[dict[str, Any]]: ...
def netsim_exchange(
    topology: Topology,
    routing: str,
    pattern: str,
    *,
    dims: tuple[int, int, int] | None = ...,
    message_bytes: int | None = ...,
    interleave: bool = ...,
    seed: int = ...,
    packet_bytes: int = ...,
    buffer_bytes: int = ...,
    switch_latency_ps: int = ...,
    watchdog_ps: int = ...,
    top_links: int = ...,
    links: bool = ...,
    threads: int = ...,
) -> dict[str, Any]: ...
def netsim_cdg(topology: Topology, routing: str) -> dict[str, Any]: ...
def netsim_pattern(topology: Topology, traffic: str, *, seed: int = ...) -> list[int] | None: ...
def netsim_routing(spec: str) -> str: ...
def netsim_traffic(spec: str) -> str: ...
def netsim_forms() -> dict[str, list[dict[str, Any]]]: ...
def netsim_fit_torus(n: int) -> tuple[int, int, int] | None: ...
def netsim_zero_load_latency(
    topology: Topology, hops: int, *, packet_bytes: int = ..., switch_latency_ps: int = ...
) -> int: ...

# -- alltoall phases (hypercuboid.phases) ---------------------------------------------------------

@final
class AlltoallPhases:
    """Contention-free phases of the all-to-all exchange with the lower bound and the checks."""

    @property
    def topology(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def routing(self) -> str: ...
    @property
    def machines(self) -> int: ...
    @property
    def phases(self) -> int: ...
    @property
    def messages(self) -> int: ...
    @property
    def load(self) -> int: ...
    @property
    def lower_bound(self) -> int: ...
    @property
    def gap(self) -> int: ...
    @property
    def ratio(self) -> float: ...
    @property
    def root(self) -> str | None: ...
    @property
    def root_router(self) -> int | None: ...
    @property
    def subtrees(self) -> list[list[int]]: ...
    @property
    def complete(self) -> bool: ...
    @property
    def contention_free(self) -> bool: ...
    @property
    def optimal(self) -> bool: ...
    @property
    def violations(self) -> tuple[str | None, str | None, str | None]: ...
    def schedule(self) -> list[list[tuple[int, int]]]: ...
    def arrays(self) -> tuple[Any, Any]: ...
    def occupancy(self) -> dict[str, Any]: ...

def alltoall_phases(
    topology: Topology, method: str = ..., routing: str = ...
) -> AlltoallPhases: ...
def alltoall_random_tree(
    machines: int, switches: int, shape: str = ..., seed: int = ...
) -> Topology: ...
def alltoall_random_tree_json(
    machines: int, switches: int, shape: str = ..., seed: int = ...
) -> str: ...
def alltoall_sync_counts(
    topology: Topology, mapping: str | None = ..., check: bool = ...
) -> dict[str, Any]: ...
def alltoall_routine(
    topology: Topology,
    mapping: str | None = ...,
    sync: str = ...,
    min_size: int = ...,
    pmpi: bool = ...,
    name: str = ...,
    provenance: str = ...,
) -> tuple[str, dict[str, int]]: ...

# -- units (hypercuboid.units) ------------------------------------------------------------------
def parse_time(text: str) -> int: ...
def parse_time_f64(text: str) -> float: ...
def parse_size(text: str) -> int: ...
def parse_bandwidth(text: str) -> float: ...
def format_size(bytes: int) -> str: ...
def set_memory_limit(limit: int | None) -> None: ...
def memory_limit() -> int | None: ...
def available_memory() -> int | None: ...
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
    @property
    def lattice(self) -> tuple[int, int, int]: ...
    @property
    def dims(self) -> tuple[int, int, int]: ...
    @property
    def periodic(self) -> tuple[bool, bool, bool]: ...
    @property
    def nranks(self) -> int: ...
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

# -- choice tables, "XxYxZ" sizes, model files (crates/hypercuboid-py/src/tables.rs) ----------

@final
class Choice:
    """One value of an enumerated option of the core: its name, the other names it answers to
    (matched without regard to case) and one line of help."""

    @property
    def name(self) -> str: ...
    @property
    def aliases(self) -> list[str]: ...
    @property
    def help(self) -> str: ...
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
