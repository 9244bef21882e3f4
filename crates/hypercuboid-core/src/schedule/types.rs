//! What a schedule computes and on what data: the element type ([`Dtype`]), the reduction
//! operator ([`ReduceOp`]), the collective ([`Collective`]) and the [`Meta`] that holds them.

use super::{halo, Rank, ScheduleError};

/// Element type of the vectors a collective works on (NumPy names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dtype {
    Int8,
    Int16,
    Int32,
    Int64,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Float32,
    Float64,
    /// Opaque bytes (schedules without data semantics, e.g. imported GOAL).
    Byte,
}

impl Dtype {
    /// Every dtype, in the order error messages list them.
    pub const ALL: [Dtype; 11] = [
        Dtype::Int8,
        Dtype::Int16,
        Dtype::Int32,
        Dtype::Int64,
        Dtype::Uint8,
        Dtype::Uint16,
        Dtype::Uint32,
        Dtype::Uint64,
        Dtype::Float32,
        Dtype::Float64,
        Dtype::Byte,
    ];

    /// The dtype's code, shared with Python and C: its index in [`Dtype::ALL`].
    pub fn code(self) -> u8 {
        code_in(&Dtype::ALL, self)
    }

    /// Size of one element in bytes.
    pub const fn size(self) -> u32 {
        match self {
            Dtype::Int8 | Dtype::Uint8 | Dtype::Byte => 1,
            Dtype::Int16 | Dtype::Uint16 => 2,
            Dtype::Int32 | Dtype::Uint32 | Dtype::Float32 => 4,
            Dtype::Int64 | Dtype::Uint64 | Dtype::Float64 => 8,
        }
    }

    /// The NumPy name (`float64`, `int32`, ...; `byte` for opaque bytes).
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::Int8 => "int8",
            Dtype::Int16 => "int16",
            Dtype::Int32 => "int32",
            Dtype::Int64 => "int64",
            Dtype::Uint8 => "uint8",
            Dtype::Uint16 => "uint16",
            Dtype::Uint32 => "uint32",
            Dtype::Uint64 => "uint64",
            Dtype::Float32 => "float32",
            Dtype::Float64 => "float64",
            Dtype::Byte => "byte",
        }
    }

    /// Parses a NumPy name.
    pub fn parse(name: &str) -> Result<Dtype, ScheduleError> {
        parse_in(&Dtype::ALL, Dtype::name, "dtype", name)
    }
}

crate::name_display::display_by_name!(Dtype);

/// The code of `x`, shared with Python and C: its index in `all` (its type's `ALL`).
fn code_in<T: PartialEq>(all: &[T], x: T) -> u8 {
    all.iter()
        .position(|a| *a == x)
        .expect("every value is in its type's ALL") as u8
}

/// The value of `all` (its type's `ALL`) whose `name_of` is `name`, or the error that names
/// `what` and every name of `all`.
fn parse_in<T: Copy>(
    all: &[T],
    name_of: fn(T) -> &'static str,
    what: &'static str,
    name: &str,
) -> Result<T, ScheduleError> {
    all.iter()
        .copied()
        .find(|&x| name_of(x) == name)
        .ok_or_else(|| ScheduleError::UnknownName {
            what,
            name: name.to_string(),
            accepted: all.iter().map(|&x| name_of(x).to_string()).collect(),
        })
}

/// The reduction operator of a reducing collective (MPI names, lower case).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
}

impl ReduceOp {
    /// Every operator.
    pub const ALL: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min];

    /// The operator's code, shared with Python and C: its index in [`ReduceOp::ALL`].
    pub fn code(self) -> u8 {
        code_in(&ReduceOp::ALL, self)
    }

    /// `sum`, `prod`, `max`, `min`.
    pub const fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }

    /// Parses `sum`, `prod`, `max` or `min`.
    pub fn parse(name: &str) -> Result<ReduceOp, ScheduleError> {
        parse_in(&ReduceOp::ALL, ReduceOp::name, "reduction op", name)
    }
}

crate::name_display::display_by_name!(ReduceOp);

/// What a schedule computes (its data semantics), which tells the verifier what "correct" means
/// and the executor which buffers a rank has. Each collective carries what it needs: the
/// reduction operator of a reducing collective, the blocks or the decomposition of the ones to
/// come (alltoall, halo exchange).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Collective {
    /// No data semantics (e.g. imported GOAL): only matching and deadlock are checked.
    None,
    /// Every rank's `output` ends as the reduction with `op` of every rank's `input`, element
    /// by element; both have `count` elements.
    Allreduce {
        /// The reduction operator.
        op: ReduceOp,
    },
    /// Personalised all-to-all exchange: rank `i`'s `input` holds `N` blocks of `block`
    /// elements, block `j` for rank `j`; every rank `j`'s `output` ends with rank `i`'s block
    /// `j` at block position `i`, for every `i` (`MPI_Alltoall` with `sendcount = recvcount =
    /// block`). Both buffers have `N × block` elements ([`Meta::count`]).
    Alltoall {
        /// Elements each rank sends to each rank (MPI's `sendcount`).
        block: u64,
    },
    /// Halo exchange of a 3-D decomposition ([`halo`]): every rank's `output` is its local
    /// array with the halo (its own length per rank, [`Meta::rank_buffer_lens`]), updated in
    /// place; every halo value the stencil requires ends as the value of the neighbour's
    /// subdomain site it mirrors, every other element unchanged. The `input` is empty.
    Halo(halo::HaloSpec),
}

impl Collective {
    /// The names schedule text reads, in the order error messages list them (a halo exchange
    /// carries its decomposition, which the text does not hold: it is generated, not read).
    pub const NAMES: &'static [&'static str] = &["none", "allreduce", "alltoall"];

    /// `none`, `allreduce`, `alltoall`, `halo`.
    pub const fn name(&self) -> &'static str {
        match self {
            Collective::None => "none",
            Collective::Allreduce { .. } => "allreduce",
            Collective::Alltoall { .. } => "alltoall",
            Collective::Halo(_) => "halo",
        }
    }

    /// Whether the collective has data semantics (the verifier checks its result).
    pub const fn has_data(&self) -> bool {
        !matches!(self, Collective::None)
    }

    /// The reduction operator of a reducing collective.
    pub const fn op(&self) -> Option<ReduceOp> {
        match self {
            Collective::Allreduce { op } => Some(*op),
            Collective::None | Collective::Alltoall { .. } | Collective::Halo(_) => None,
        }
    }

    /// The elements each rank sends to each rank, for an alltoall.
    pub const fn block(&self) -> Option<u64> {
        match self {
            Collective::Alltoall { block } => Some(*block),
            Collective::None | Collective::Allreduce { .. } | Collective::Halo(_) => None,
        }
    }

    /// The halo exchange, for a halo collective.
    pub const fn halo(&self) -> Option<&halo::HaloSpec> {
        match self {
            Collective::Halo(h) => Some(h),
            _ => None,
        }
    }

    /// The collective named `name` (one of [`Collective::NAMES`]), with `op` where it reduces
    /// (`sum` when not given; the others ignore it). An alltoall comes with a block of 0
    /// elements: set its block with [`Collective::Alltoall`] (the text form gives it apart).
    pub fn parse(name: &str, op: Option<ReduceOp>) -> Result<Collective, ScheduleError> {
        match name {
            "none" => Ok(Collective::None),
            "allreduce" => Ok(Collective::Allreduce {
                op: op.unwrap_or(ReduceOp::Sum),
            }),
            "alltoall" => Ok(Collective::Alltoall { block: 0 }),
            "halo" => Err(ScheduleError::BadParameter {
                name: "collective".into(),
                value: name.to_string(),
                reason: format!(
                    "a halo exchange carries its decomposition, which schedule text does not \
                     hold; generate it (collectives::halo) instead; accepted here: {}",
                    Collective::NAMES.join(", ")
                ),
            }),
            _ => Err(ScheduleError::UnknownName {
                what: "collective",
                name: name.to_string(),
                accepted: Collective::NAMES.iter().map(|n| n.to_string()).collect(),
            }),
        }
    }
}

/// What a schedule computes and on what data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    /// The collective (what correctness means), with its operator where it reduces.
    pub collective: Collective,
    /// Elements in each rank's input vector (and its output vector, for an allreduce).
    pub count: u64,
    /// Element type.
    pub dtype: Dtype,
    /// Free text naming how the schedule was made (`allreduce recursive_doubling`, a file name).
    pub name: String,
}

impl Meta {
    /// A schedule with no data semantics (sizes only).
    pub fn sizes_only(name: impl Into<String>) -> Meta {
        Meta {
            collective: Collective::None,
            count: 0,
            dtype: Dtype::Byte,
            name: name.into(),
        }
    }

    /// An allreduce of `count` elements of `dtype` with `op`.
    pub fn allreduce(count: u64, dtype: Dtype, op: ReduceOp, name: impl Into<String>) -> Meta {
        Meta {
            collective: Collective::Allreduce { op },
            count,
            dtype,
            name: name.into(),
        }
    }

    /// An alltoall on `nranks` ranks of `block` elements of `dtype` per pair of ranks: both
    /// buffers have `nranks × block` elements (`count`). `None` when that overflows a `u64`.
    pub fn alltoall(
        nranks: u32,
        block: u64,
        dtype: Dtype,
        name: impl Into<String>,
    ) -> Option<Meta> {
        Some(Meta {
            collective: Collective::Alltoall { block },
            count: block.checked_mul(nranks as u64)?,
            dtype,
            name: name.into(),
        })
    }

    /// A halo exchange of `spec` with `dtype` values: `count` is the largest local array (the
    /// lengths of each rank's are [`Meta::rank_buffer_lens`]).
    pub fn halo(spec: halo::HaloSpec, dtype: Dtype, name: impl Into<String>) -> Meta {
        Meta {
            collective: Collective::Halo(spec),
            count: spec.max_local_len(),
            dtype,
            name: name.into(),
        }
    }

    /// Bytes per element.
    pub fn elem_size(&self) -> u32 {
        self.dtype.size()
    }

    /// The reduction operator, for a reducing collective.
    pub fn op(&self) -> Option<ReduceOp> {
        self.collective.op()
    }

    /// Elements of a rank's `input` and `output` buffers (`count` both, for every collective
    /// so far: an alltoall's `count` is its `N × block`), which the executor allocates and
    /// every data slice of a program must fit.
    /// A halo exchange's `input` is empty and its `output` as long as the largest local array.
    pub fn buffer_lens(&self) -> (u64, u64) {
        match self.collective {
            Collective::None | Collective::Allreduce { .. } | Collective::Alltoall { .. } => {
                (self.count, self.count)
            }
            Collective::Halo(_) => (0, self.count),
        }
    }

    /// Elements of rank `rank`'s `input` and `output` buffers: [`Meta::buffer_lens`], except
    /// for a halo exchange, whose local arrays differ between ranks.
    pub fn rank_buffer_lens(&self, rank: Rank) -> (u64, u64) {
        match self.collective {
            Collective::Halo(h) => (0, h.local_len(rank)),
            _ => self.buffer_lens(),
        }
    }
}
