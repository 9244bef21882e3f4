//! The halo check: execution of a halo exchange ([`Collective::Halo`]) over symbols, element
//! by element.
//!
//! Every element of every rank's local array starts as its own symbol (rank, element), scratch
//! buffers start undefined. Sends read their slice when they start, receives write theirs when
//! they complete (along the verifier's eager execution, an order consistent with dependencies
//! and matching), packs gather their region's elements in C order, unpacks scatter them. At
//! the end every element must hold the symbol [`HaloSpec::expected`] names: the mirrored
//! boundary element of the neighbour for every required halo value, itself everywhere else.
//! That is the seed's `test_halo` ("after the exchange every halo value equals its neighbour's
//! boundary value") as a proof over the schedule for one decomposition: every element is
//! compared, none sampled.
//!
//! Cost: 8 bytes per element of every local array and scratch buffer, so the check refuses
//! (with a note) exchanges of more than [`MAX_ELEMENTS`] elements in all; the schedule's
//! structure (which regions, which messages) is the same for every subdomain size of at least
//! 2 sites per axis, so a small lattice proves the shape.

use super::graph::Exec;
use super::matching::Links;
use super::{Meaning, Problem, Semantics};
use crate::schedule::halo::HaloSpec;
use crate::schedule::{Collective, OpKind, Payload, Rank, Schedule, Slice, Slot};
use rustc_hash::FxHashMap;

/// Elements (over every rank's array and scratch buffers) the check tracks at most.
pub const MAX_ELEMENTS: u64 = 1 << 27;

const UNDEF: u64 = u64::MAX;
const COMBINED: u64 = u64::MAX - 1;

/// The symbolic state of a halo exchange.
pub(super) struct HaloSym {
    spec: HaloSpec,
    /// Symbol of element 0 of each rank's array (prefix sums of the array lengths).
    base: Vec<u64>,
    arrays: Vec<Vec<u64>>,
    scratch: Vec<Vec<Vec<u64>>>,
    msgs: FxHashMap<u64, Vec<u64>>,
    uninit: Vec<Problem>,
    tmp: Vec<u64>,
}

/// Elements the check of `s` would track: every local array and scratch buffer.
pub(super) fn elements(s: &Schedule, spec: &HaloSpec) -> u64 {
    (0..s.nranks())
        .map(|r| {
            let scratch: u64 = s.rank(r).shape.scratch.iter().sum();
            spec.local_len(r) + scratch
        })
        .sum()
}

impl HaloSym {
    pub(super) fn new(s: &Schedule, spec: HaloSpec) -> HaloSym {
        let n = s.nranks();
        let mut base = Vec::with_capacity(n as usize);
        let mut arrays = Vec::with_capacity(n as usize);
        let mut next = 0u64;
        for r in 0..n {
            let len = spec.local_len(r);
            base.push(next);
            arrays.push((next..next + len).collect());
            next += len;
        }
        let scratch = (0..n)
            .map(|r| {
                s.rank(r)
                    .shape
                    .scratch
                    .iter()
                    .map(|&l| vec![UNDEF; l as usize])
                    .collect()
            })
            .collect();
        HaloSym {
            spec,
            base,
            arrays,
            scratch,
            msgs: FxHashMap::default(),
            uninit: Vec::new(),
            tmp: Vec::new(),
        }
    }

    fn buf(&self, r: Rank, slot: Slot) -> &[u64] {
        match slot {
            Slot::Output => &self.arrays[r as usize],
            Slot::Input => &[],
            Slot::Scratch(k) => self.scratch[r as usize]
                .get(k as usize)
                .map_or(&[][..], |v| &v[..]),
        }
    }

    fn buf_mut(&mut self, r: Rank, slot: Slot) -> &mut [u64] {
        match slot {
            Slot::Output => &mut self.arrays[r as usize],
            Slot::Input => &mut [],
            Slot::Scratch(k) => self.scratch[r as usize]
                .get_mut(k as usize)
                .map_or(&mut [][..], |v| &mut v[..]),
        }
    }

    /// Reads `sl` of rank `r` into `out` (out-of-range elements read as undefined).
    fn read(&self, r: Rank, sl: Slice, out: &mut Vec<u64>) {
        out.clear();
        let b = self.buf(r, sl.slot);
        for e in sl.offset..sl.end() {
            out.push(b.get(e as usize).copied().unwrap_or(UNDEF));
        }
    }

    fn write(&mut self, r: Rank, sl: Slice, vals: &[u64]) {
        let b = self.buf_mut(r, sl.slot);
        for (k, &v) in vals.iter().enumerate() {
            if let Some(x) = b.get_mut(sl.offset as usize + k) {
                *x = v;
            }
        }
    }

    fn check_defined(&mut self, s: &Schedule, r: Rank, i: u32, sl: Slice, vals: &[u64]) {
        if let Some(k) = vals.iter().position(|&v| v == UNDEF) {
            let run = vals[k..].iter().take_while(|&&v| v == UNDEF).count() as u64;
            self.uninit.push(Problem::UninitializedRead {
                rank: r,
                op: i,
                what: s.rank(r).op(i as usize),
                slice: Slice::new(sl.slot, sl.offset + k as u64, run),
            });
        }
    }

    /// The symbol's meaning: `(rank, element)` of an array before the exchange.
    fn origin(&self, sym: u64) -> Option<(Rank, u64)> {
        if sym >= COMBINED {
            return None;
        }
        let q = self.base.partition_point(|&b| b <= sym) - 1;
        Some((q as Rank, sym - self.base[q]))
    }

    fn render(&self, sym: u64) -> String {
        match sym {
            UNDEF => "uninitialized data".into(),
            COMBINED => "a reduction of received data".into(),
            _ => {
                let (q, e) = self.origin(sym).expect("a symbol of an array");
                self.element(q, e)
            }
        }
    }

    /// `rank q site (i, j, k) value v` of element `e` of rank `q`'s array.
    fn element(&self, q: Rank, e: u64) -> String {
        let d = self.spec.local_dims(q).map(|x| x as u64);
        let v = e % d[3];
        let site = e / d[3];
        let k = site % d[2];
        let j = (site / d[2]) % d[1];
        let i = site / (d[2] * d[1]);
        format!("rank {q}'s site ({i}, {j}, {k}) value {v}")
    }

    /// The semantics, the wrong results (at most `max`, 0: all), how many more, and the
    /// uninitialized reads.
    pub(super) fn finish(self, max: usize) -> (Semantics, Vec<Problem>, usize, Vec<Problem>) {
        let mut wrong = Vec::new();
        let mut more = 0usize;
        for r in 0..self.arrays.len() as Rank {
            let d = self.spec.local_dims(r);
            let arr = &self.arrays[r as usize];
            let mut first: Option<(u64, u64, u64, u64)> = None; // lo, hi, got, want
            let mut nwrong = 0u64;
            let mut e = 0u64;
            for i in 0..d[0] {
                for j in 0..d[1] {
                    for k in 0..d[2] {
                        for v in 0..d[3] {
                            let (q, x) = self.spec.expected(r, [i, j, k], v);
                            let want = self.base[q as usize] + x;
                            let got = arr[e as usize];
                            if got != want {
                                nwrong += 1;
                                match &mut first {
                                    None => first = Some((e, e + 1, got, want)),
                                    Some(f) if f.1 == e => f.1 = e + 1,
                                    _ => {}
                                }
                            }
                            e += 1;
                        }
                    }
                }
            }
            if let Some((lo, hi, got, want)) = first {
                if max == 0 || wrong.len() < max {
                    let (wq, we) = self.origin(want).expect("expected values are elements");
                    let reason = if (wq, we) == (r, lo) {
                        format!("{} must be left unchanged", self.element(r, lo))
                    } else {
                        format!(
                            "{} mirrors {}, which it must hold",
                            self.element(r, lo),
                            self.element(wq, we)
                        )
                    };
                    wrong.push(Problem::WrongResult {
                        rank: r,
                        elements: (lo, hi),
                        wrong: nwrong,
                        got: self.render(got),
                        reason,
                    });
                } else {
                    more += 1;
                }
            }
        }
        let correct = wrong.is_empty() && more == 0;
        let sem = Semantics::data_movement(Meaning::Halo, correct);
        (sem, wrong, more, self.uninit)
    }
}

impl Exec for HaloSym {
    fn start(&mut self, s: &Schedule, _l: &Links, r: Rank, i: u32) {
        let op = s.rank(r).shape.ops[i as usize];
        let mut tmp = std::mem::take(&mut self.tmp);
        match op.kind {
            OpKind::Send {
                data: Payload::Data(sl),
                ..
            } => {
                self.read(r, sl, &mut tmp);
                self.check_defined(s, r, i, sl, &tmp);
                self.msgs.insert(s.op_offset(r) + i as u64, tmp.clone());
            }
            OpKind::Copy { src, dst } => {
                self.read(r, src, &mut tmp);
                self.check_defined(s, r, i, src, &tmp);
                self.write(r, dst, &tmp);
            }
            OpKind::Reduce { dst, .. } => {
                let n = dst.len as usize;
                self.write(r, dst, &vec![COMBINED; n]);
            }
            OpKind::Pack { src, dst } => {
                tmp.clear();
                let b = self.buf(r, src.slot);
                src.for_each_element(|e| tmp.push(b.get(e as usize).copied().unwrap_or(UNDEF)));
                self.check_defined(s, r, i, Slice::new(dst.slot, dst.offset, dst.len), &tmp);
                self.write(r, dst, &tmp);
            }
            OpKind::Unpack { src, dst } => {
                self.read(r, src, &mut tmp);
                self.check_defined(s, r, i, src, &tmp);
                let b = self.buf_mut(r, dst.slot);
                let mut k = 0;
                dst.for_each_element(|e| {
                    if let (Some(x), Some(&v)) = (b.get_mut(e as usize), tmp.get(k)) {
                        *x = v;
                    }
                    k += 1;
                });
            }
            _ => {}
        }
        self.tmp = tmp;
    }

    fn end(&mut self, s: &Schedule, l: &Links, r: Rank, i: u32) {
        let op = s.rank(r).op(i as usize);
        let OpKind::Recv {
            data: Payload::Data(sl),
            combine,
            ..
        } = op.kind
        else {
            return;
        };
        let Some(mut msg) = l.matched_send(s, r, i).and_then(|f| self.msgs.remove(&f)) else {
            return;
        };
        msg.resize(sl.len as usize, UNDEF);
        if combine != crate::schedule::Combine::Assign {
            msg.iter_mut().for_each(|x| *x = COMBINED);
        }
        self.write(r, sl, &msg);
    }
}

/// The halo exchange of a schedule, if it is one.
pub(super) fn spec_of(s: &Schedule) -> Option<HaloSpec> {
    match s.meta().collective {
        Collective::Halo(h) => Some(h),
        _ => None,
    }
}
