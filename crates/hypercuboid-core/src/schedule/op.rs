//! Operations of a per-rank program and the buffer slices they name.

use crate::units::Time;
use std::fmt;

/// A rank number.
pub type Rank = u32;

/// `peer` of a receive that accepts any source (GOAL `recv ... from -1`), and the peer of
/// operations that have none.
pub const ANY_SOURCE: Rank = u32::MAX;

/// `tag` of a receive that accepts any tag (GOAL `tag -1`).
pub const ANY_TAG: i32 = -1;

/// A per-rank buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    /// The collective's input vector (read only for a correct allreduce).
    Input,
    /// The collective's output vector.
    Output,
    /// A temporary buffer; its size is the largest extent any op of the rank uses.
    Scratch(u16),
}

impl Slot {
    /// The code of "no slice" in a slot column ([`super::columns`]).
    pub const NONE_CODE: i32 = -1;
    /// The code of `scratch 0`; `scratch k` is `SCRATCH_CODE + k`.
    pub const SCRATCH_CODE: i32 = 2;

    /// The slot's code in the columnar encoding: 0 input, 1 output, 2 + k scratch k.
    pub const fn code(self) -> i32 {
        match self {
            Slot::Input => 0,
            Slot::Output => 1,
            Slot::Scratch(k) => Slot::SCRATCH_CODE + k as i32,
        }
    }

    /// The slot of a code (see [`Slot::code`]), if it names one.
    pub fn from_code(code: i32) -> Option<Slot> {
        match code {
            0 => Some(Slot::Input),
            1 => Some(Slot::Output),
            c if c >= Slot::SCRATCH_CODE && c - Slot::SCRATCH_CODE <= u16::MAX as i32 => {
                Some(Slot::Scratch((c - Slot::SCRATCH_CODE) as u16))
            }
            _ => None,
        }
    }
}

/// The kind of an op without its operands: the op-kind code of the columnar encoding and of
/// traces (the discriminant), shared with Python and C through the binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum OpCode {
    /// A send.
    Send = 0,
    /// A receive (fused receive-reduce included).
    Recv = 1,
    /// A local reduction.
    Reduce = 2,
    /// A local copy.
    Copy = 3,
    /// Local computation.
    Compute = 4,
    /// A sleep.
    Sleep = 5,
    /// A gather of a [`Region`] into a contiguous slice.
    Pack = 6,
    /// A scatter of a contiguous slice into a [`Region`].
    Unpack = 7,
}

impl OpCode {
    /// Every kind, in code order.
    pub const ALL: [OpCode; 8] = [
        OpCode::Send,
        OpCode::Recv,
        OpCode::Reduce,
        OpCode::Copy,
        OpCode::Compute,
        OpCode::Sleep,
        OpCode::Pack,
        OpCode::Unpack,
    ];

    /// `send`, `recv`, `reduce`, `copy`, `compute`, `sleep`, `pack`, `unpack`.
    pub const fn name(self) -> &'static str {
        match self {
            OpCode::Send => "send",
            OpCode::Recv => "recv",
            OpCode::Reduce => "reduce",
            OpCode::Copy => "copy",
            OpCode::Compute => "compute",
            OpCode::Sleep => "sleep",
            OpCode::Pack => "pack",
            OpCode::Unpack => "unpack",
        }
    }

    /// The kind of an op.
    pub const fn of(kind: &OpKind) -> OpCode {
        match kind {
            OpKind::Send { .. } => OpCode::Send,
            OpKind::Recv { .. } => OpCode::Recv,
            OpKind::Reduce { .. } => OpCode::Reduce,
            OpKind::Copy { .. } => OpCode::Copy,
            OpKind::Compute { .. } => OpCode::Compute,
            OpKind::Sleep { .. } => OpCode::Sleep,
            OpKind::Pack { .. } => OpCode::Pack,
            OpKind::Unpack { .. } => OpCode::Unpack,
        }
    }

    /// The kind of a code, if it names one.
    pub fn from_code(code: u8) -> Option<OpCode> {
        OpCode::ALL.get(code as usize).copied()
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Slot::Input => write!(f, "in"),
            Slot::Output => write!(f, "out"),
            Slot::Scratch(k) => write!(f, "scratch{k}"),
        }
    }
}

/// A range of elements `[offset, offset + len)` of one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Slice {
    /// The buffer.
    pub slot: Slot,
    /// First element.
    pub offset: u64,
    /// Number of elements.
    pub len: u64,
}

impl Slice {
    /// `len` elements of `slot` from `offset`.
    pub const fn new(slot: Slot, offset: u64, len: u64) -> Slice {
        Slice { slot, offset, len }
    }

    /// One past the last element.
    pub const fn end(&self) -> u64 {
        self.offset + self.len
    }

    /// Whether the two slices share an element of the same buffer.
    pub fn overlaps(&self, other: &Slice) -> bool {
        self.slot == other.slot
            && self.len > 0
            && other.len > 0
            && self.offset < other.end()
            && other.offset < self.end()
    }
}

impl fmt::Display for Slice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}:{}]", self.slot, self.offset, self.end())
    }
}

/// A box of a 4-D C-order array held in one buffer: sites along x, y and z (x slowest) with
/// `dims[3]` values per site (fastest), such as a rank's lattice with its halo. The region is
/// the sites `origin[a] .. origin[a] + extent[a]` on each axis and, of each site, the values
/// `values` selects. Its elements in C order (x, y, z, then value) are what a
/// [`OpKind::Pack`] gathers into a contiguous slice and an [`OpKind::Unpack`] scatters back,
/// so that a face of a 3-D subdomain (thousands of short runs) is one op: the simulator
/// charges its bytes, the verifier reads its exact elements, the executor moves it with one
/// strided array assignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Region {
    /// The buffer holding the array (from its first element).
    pub slot: Slot,
    /// The array's shape: sites along x, y, z, and values per site.
    pub dims: [u32; 4],
    /// The first site of the box on each axis.
    pub origin: [u32; 3],
    /// The sites of the box on each axis.
    pub extent: [u32; 3],
    /// The values of each site the box takes: bit `v` for value `v` (arrays of at most 64
    /// values per site), or [`Region::ALL_VALUES`].
    pub values: u64,
}

impl Region {
    /// `values` taking every value of each site.
    pub const ALL_VALUES: u64 = u64::MAX;

    /// The values of each site the region takes, ascending.
    pub fn value_list(&self) -> Vec<u32> {
        if self.values == Region::ALL_VALUES {
            (0..self.dims[3]).collect()
        } else {
            (0..64).filter(|v| self.values >> v & 1 == 1).collect()
        }
    }

    /// Values taken per site.
    pub fn values_per_site(&self) -> u64 {
        if self.values == Region::ALL_VALUES {
            self.dims[3] as u64
        } else {
            self.values.count_ones() as u64
        }
    }

    /// Sites of the box.
    pub fn sites(&self) -> u64 {
        self.extent.iter().map(|&e| e as u64).product()
    }

    /// Elements of the region (sites × values per site).
    pub fn len(&self) -> u64 {
        self.sites() * self.values_per_site()
    }

    /// Whether the region has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements of the whole array.
    pub fn array_len(&self) -> u64 {
        self.dims.iter().map(|&d| d as u64).product()
    }

    /// Why the region does not fit its array, if it does not: a box beyond the array's sites,
    /// a value beyond its values per site, a value mask on an array of more than 64 values.
    pub fn problem(&self) -> Option<String> {
        for a in 0..3 {
            if self.origin[a] as u64 + self.extent[a] as u64 > self.dims[a] as u64 {
                return Some(format!(
                    "region {self}: sites {}..{} on axis {} are outside the array's {} sites",
                    self.origin[a],
                    self.origin[a] as u64 + self.extent[a] as u64,
                    ["x", "y", "z"][a],
                    self.dims[a]
                ));
            }
        }
        if self.values != Region::ALL_VALUES {
            if self.dims[3] > 64 {
                return Some(format!(
                    "region {self}: a value mask selects among at most 64 values per site, the \
                     array has {}",
                    self.dims[3]
                ));
            }
            if self.dims[3] < 64 && self.values >> self.dims[3] != 0 {
                return Some(format!(
                    "region {self}: it selects values beyond the array's {} values per site",
                    self.dims[3]
                ));
            }
        }
        None
    }

    /// Flat index (in the array) of value `v` of site `(i, j, k)`.
    pub fn index(&self, i: u64, j: u64, k: u64, v: u64) -> u64 {
        let d = self.dims.map(|x| x as u64);
        ((i * d[1] + j) * d[2] + k) * d[3] + v
    }

    /// Calls `f(flat index)` for every element of the region, in C order.
    pub fn for_each_element(&self, mut f: impl FnMut(u64)) {
        let vals: Vec<u64> = self.value_list().into_iter().map(u64::from).collect();
        let (o, e) = (self.origin.map(|x| x as u64), self.extent.map(|x| x as u64));
        for i in o[0]..o[0] + e[0] {
            for j in o[1]..o[1] + e[1] {
                for k in o[2]..o[2] + e[2] {
                    let base = self.index(i, j, k, 0);
                    for &v in &vals {
                        f(base + v);
                    }
                }
            }
        }
    }

    /// Calls `f(slice)` for every maximal contiguous run of the region's elements, in order.
    pub fn for_each_run(&self, mut f: impl FnMut(Slice)) {
        let d = self.dims.map(|x| x as u64);
        let (o, e) = (self.origin.map(|x| x as u64), self.extent.map(|x| x as u64));
        if self.is_empty() {
            return;
        }
        let mut run: Option<(u64, u64)> = None;
        let mut emit = |lo: u64, len: u64| match &mut run {
            Some((a, n)) if *a + *n == lo => *n += len,
            _ => {
                if let Some((a, n)) = run.take() {
                    f(Slice::new(self.slot, a, n));
                }
                run = Some((lo, len));
            }
        };
        if self.values == Region::ALL_VALUES {
            // Each (i, j) row of the box is one run of extent_z x values elements.
            for i in o[0]..o[0] + e[0] {
                for j in o[1]..o[1] + e[1] {
                    emit(self.index(i, j, o[2], 0), e[2] * d[3]);
                }
            }
        } else {
            let vals = self.value_list();
            for i in o[0]..o[0] + e[0] {
                for j in o[1]..o[1] + e[1] {
                    for k in o[2]..o[2] + e[2] {
                        let base = self.index(i, j, k, 0);
                        for &v in &vals {
                            emit(base + v as u64, 1);
                        }
                    }
                }
            }
        }
        if let Some((a, n)) = run {
            f(Slice::new(self.slot, a, n));
        }
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, v] = self.dims;
        write!(f, "{}<{a}x{b}x{c}x{v}>[", self.slot)?;
        for ax in 0..3 {
            write!(
                f,
                "{}:{},",
                self.origin[ax],
                self.origin[ax] as u64 + self.extent[ax] as u64
            )?;
        }
        if self.values == Region::ALL_VALUES {
            write!(f, "*]")
        } else {
            let list: Vec<String> = self.value_list().iter().map(|v| v.to_string()).collect();
            write!(f, "{{{}}}]", list.join(" "))
        }
    }
}

/// What a message carries: a slice of a buffer (data semantics: the schedule can be verified
/// symbolically and executed), or only a size (imported GOAL schedules).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Payload {
    /// Elements of a buffer; the byte size is `len × element size`.
    Data(Slice),
    /// An opaque message of this many bytes.
    Bytes(u64),
}

impl Payload {
    /// Size in bytes, given the schedule's element size.
    pub fn bytes(&self, elem_size: u32) -> u64 {
        match self {
            Payload::Data(s) => s.len * elem_size as u64,
            Payload::Bytes(b) => *b,
        }
    }

    /// The slice, if the payload has data semantics.
    pub fn slice(&self) -> Option<Slice> {
        match self {
            Payload::Data(s) => Some(*s),
            Payload::Bytes(_) => None,
        }
    }
}

/// How incoming values combine with the destination slice (`⊕` is the collective's reduction
/// operator; the order of the operands matters for a non-commutative operator and for the bits
/// of a floating-point result).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Combine {
    /// `dst = incoming`.
    Assign,
    /// `dst = incoming ⊕ dst` (incoming is the left operand).
    Before,
    /// `dst = dst ⊕ incoming` (incoming is the right operand).
    After,
}

/// What an operation does.
///
/// Peers are real ranks. Receives may use [`ANY_SOURCE`] and [`ANY_TAG`] (GOAL's `-1`); such a
/// schedule can still be simulated, while its matching is decided at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// Send `data` to `peer` with `tag`. The data is read when the send starts and the buffer
    /// must not be written until the send completes.
    Send { peer: Rank, tag: i32, data: Payload },
    /// Receive from `peer` with `tag` into `data`, combining as `combine` says. A receive with
    /// `combine` other than [`Combine::Assign`] is a fused receive-and-reduce (MSCCL's
    /// receive-reduce-copy): `data = incoming ⊕ operand` ([`Combine::Before`]) or
    /// `data = operand ⊕ incoming` ([`Combine::After`]), where `operand` is a local slice of the
    /// same length read when the receive completes, or `data` itself when `None` (in place).
    /// The reduction costs what a [`OpKind::Reduce`] of the same size costs.
    Recv {
        peer: Rank,
        tag: i32,
        data: Payload,
        combine: Combine,
        operand: Option<Slice>,
    },
    /// Local reduction `dst = dst ⊕ src` ([`Combine::After`]) or `dst = src ⊕ dst`
    /// ([`Combine::Before`]); `src` and `dst` have the same length.
    Reduce {
        src: Slice,
        dst: Slice,
        combine: Combine,
    },
    /// Local copy `dst = src`.
    Copy { src: Slice, dst: Slice },
    /// Local computation taking `time` (GOAL `calc`).
    Compute { time: Time },
    /// Idle for `time` (models skew or a delayed start; not CPU work).
    Sleep { time: Time },
    /// Local gather `dst = src`: the elements of the box `src`, in C order, into the
    /// contiguous slice `dst` (as many elements). Costs what a copy of as many bytes costs.
    Pack { src: Region, dst: Slice },
    /// Local scatter `dst = src`: the contiguous slice `src` into the box `dst`, in C order.
    Unpack { src: Slice, dst: Region },
}

/// One operation: what it does and where (GOAL's `cpu` and `nic`, both 0 by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Op {
    /// What the op does.
    pub kind: OpKind,
    /// The CPU (core) that runs it.
    pub cpu: u16,
    /// The NIC a send or receive uses.
    pub nic: u16,
}

impl Combine {
    /// Every combine, in code order.
    pub const ALL: [Combine; 3] = [Combine::Assign, Combine::Before, Combine::After];

    /// The code in the columnar encoding: 0 assign, 1 before, 2 after.
    pub const fn code(self) -> i8 {
        match self {
            Combine::Assign => 0,
            Combine::Before => 1,
            Combine::After => 2,
        }
    }

    /// `assign`, `before`, `after`.
    pub const fn name(self) -> &'static str {
        match self {
            Combine::Assign => "assign",
            Combine::Before => "before",
            Combine::After => "after",
        }
    }

    /// The combine of a code, if it names one.
    pub fn from_code(code: i8) -> Option<Combine> {
        usize::try_from(code)
            .ok()
            .and_then(|c| Combine::ALL.get(c).copied())
    }

    /// The same operation seen from the other operand: `Before` ⇄ `After`.
    pub const fn flipped(self) -> Combine {
        match self {
            Combine::Assign => Combine::Assign,
            Combine::Before => Combine::After,
            Combine::After => Combine::Before,
        }
    }

    /// The order that puts the lower rank's value on the left (MPI's order for a
    /// non-commutative operator): incoming first when the peer is below `rank`.
    pub const fn rank_order(rank: Rank, peer: Rank) -> Combine {
        if peer < rank {
            Combine::Before
        } else {
            Combine::After
        }
    }
}

impl Op {
    /// An op on CPU 0 and NIC 0.
    pub const fn new(kind: OpKind) -> Op {
        Op {
            kind,
            cpu: 0,
            nic: 0,
        }
    }

    /// The peer of a send or receive, [`ANY_SOURCE`] for a wildcard receive, `None` for local ops.
    pub fn peer(&self) -> Option<Rank> {
        match self.kind {
            OpKind::Send { peer, .. } | OpKind::Recv { peer, .. } => Some(peer),
            _ => None,
        }
    }

    /// The op with its peer replaced (a no-op for local ops).
    pub fn with_peer(mut self, new_peer: Rank) -> Op {
        match &mut self.kind {
            OpKind::Send { peer, .. } | OpKind::Recv { peer, .. } => *peer = new_peer,
            _ => {}
        }
        self
    }

    /// Calls `f(slice, writes)` for every buffer slice the op names: a send reads its slice; a
    /// receive writes its slice and reads its operand; a reduce reads `src` and reads and
    /// writes `dst`; a copy reads `src` and writes `dst`; a pack reads every contiguous run
    /// of its region ([`Region::for_each_run`]) and writes `dst`, an unpack the reverse.
    /// Byte-count payloads name no slice.
    pub fn for_each_slice(&self, mut f: impl FnMut(Slice, bool)) {
        match self.kind {
            OpKind::Send {
                data: Payload::Data(s),
                ..
            } => f(s, false),
            OpKind::Recv { data, operand, .. } => {
                if let Payload::Data(s) = data {
                    f(s, true)
                }
                if let Some(o) = operand {
                    f(o, false)
                }
            }
            OpKind::Reduce { src, dst, .. } | OpKind::Copy { src, dst } => {
                f(src, false);
                f(dst, true);
            }
            OpKind::Pack { src, dst } => {
                src.for_each_run(|s| f(s, false));
                f(dst, true);
            }
            OpKind::Unpack { src, dst } => {
                f(src, false);
                dst.for_each_run(|s| f(s, true));
            }
            _ => {}
        }
    }

    /// The op's kind without its operands.
    pub const fn code(&self) -> OpCode {
        OpCode::of(&self.kind)
    }

    /// Short name of the op's kind: `send`, `recv`, `reduce`, `copy`, `compute`, `sleep`.
    pub const fn name(&self) -> &'static str {
        self.code().name()
    }

    /// Bytes moved (send, recv), reduced (reduce) or copied (copy), given the element size.
    pub fn bytes(&self, elem_size: u32) -> u64 {
        match self.kind {
            OpKind::Send { data, .. } | OpKind::Recv { data, .. } => data.bytes(elem_size),
            OpKind::Reduce { src, .. } | OpKind::Copy { src, .. } => src.len * elem_size as u64,
            OpKind::Pack { dst: s, .. } | OpKind::Unpack { src: s, .. } => s.len * elem_size as u64,
            OpKind::Compute { .. } | OpKind::Sleep { .. } => 0,
        }
    }

    /// Bytes this op reduces (a reduce, or a receive that combines), given the element size.
    pub fn reduced_bytes(&self, elem_size: u32) -> u64 {
        match self.kind {
            OpKind::Reduce { src, .. } => src.len * elem_size as u64,
            OpKind::Recv { data, combine, .. } if combine != Combine::Assign => {
                data.bytes(elem_size)
            }
            _ => 0,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn payload(f: &mut fmt::Formatter<'_>, p: &Payload) -> fmt::Result {
            match p {
                Payload::Data(s) => write!(f, "{s}"),
                Payload::Bytes(b) => write!(f, "{b}b"),
            }
        }
        fn peer(p: Rank) -> String {
            if p == ANY_SOURCE {
                "any".into()
            } else {
                p.to_string()
            }
        }
        match &self.kind {
            OpKind::Send { peer: p, tag, data } => {
                write!(f, "send ")?;
                payload(f, data)?;
                write!(f, " to {} tag {tag}", peer(*p))?;
            }
            OpKind::Recv {
                peer: p,
                tag,
                data,
                combine,
                operand,
            } => {
                write!(f, "recv ")?;
                payload(f, data)?;
                write!(
                    f,
                    " from {} tag {}",
                    peer(*p),
                    if *tag == ANY_TAG {
                        "any".to_string()
                    } else {
                        tag.to_string()
                    }
                )?;
                match combine {
                    Combine::Assign => {}
                    Combine::Before => write!(f, " reduce before")?,
                    Combine::After => write!(f, " reduce after")?,
                }
                if let Some(o) = operand {
                    write!(f, " with {o}")?;
                }
            }
            OpKind::Reduce { src, dst, combine } => {
                let side = if *combine == Combine::Before {
                    "before"
                } else {
                    "after"
                };
                write!(f, "reduce {src} into {dst} {side}")?;
            }
            OpKind::Copy { src, dst } => write!(f, "copy {src} to {dst}")?,
            OpKind::Pack { src, dst } => write!(f, "pack {src} to {dst}")?,
            OpKind::Unpack { src, dst } => write!(f, "unpack {src} to {dst}")?,
            OpKind::Compute { time } => write!(f, "compute {}", crate::units::format_time(*time))?,
            OpKind::Sleep { time } => write!(f, "sleep {}", crate::units::format_time(*time))?,
        }
        if self.cpu != 0 {
            write!(f, " cpu {}", self.cpu)?;
        }
        if self.nic != 0 {
            write!(f, " nic {}", self.nic)?;
        }
        Ok(())
    }
}

/// A dependency kind, as in GOAL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DepKind {
    /// `a requires b`: `a` starts after `b` completes.
    Requires,
    /// `a irequires b`: `a` starts after `b` starts.
    IRequires,
}

impl DepKind {
    /// Both kinds, in code order.
    pub const ALL: [DepKind; 2] = [DepKind::Requires, DepKind::IRequires];

    /// The code in the columnar encoding: 0 requires, 1 irequires.
    pub const fn code(self) -> u8 {
        match self {
            DepKind::Requires => 0,
            DepKind::IRequires => 1,
        }
    }

    /// `requires`, `irequires` (GOAL's words).
    pub const fn name(self) -> &'static str {
        match self {
            DepKind::Requires => "requires",
            DepKind::IRequires => "irequires",
        }
    }

    /// The kind of a code, if it names one.
    pub fn from_code(code: u8) -> Option<DepKind> {
        DepKind::ALL.get(code as usize).copied()
    }
}

/// A dependency of an op on another op of the same rank (by index in the rank's program).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dep {
    /// Index of the op depended on.
    pub on: u32,
    /// Completion or start.
    pub kind: DepKind,
}
