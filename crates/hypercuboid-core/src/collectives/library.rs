//! What an MPI library would run: the algorithm Open MPI 5 and MPICH 4 choose for a
//! collective, by the communicator's size and the message's bytes, mapped onto this registry.
//!
//! [`library_choice`] answers with a [`LibraryChoice`]: the algorithm of our registry to run
//! (a spec [`crate::collectives::allreduce::Algorithm::parse`] or the alltoall's parser reads
//! back), the library's own name for what it runs, and a note that says how close the mapping
//! is. The rules are the libraries' defaults, read from their sources (facts and thresholds,
//! not code); `docs/library-selection.md` has the tables and the comparison with SimGrid's
//! selectors.
//!
//! # Open MPI 5 (`openmpi`)
//! `coll/tuned`'s fixed decision, `ompi/mca/coll/tuned/coll_tuned_decision_fixed.c` of Open
//! MPI v5.0.9 (branch v5.0.x): `ompi_coll_tuned_allreduce_intra_dec_fixed` and
//! `ompi_coll_tuned_alltoall_intra_dec_fixed`. Each picks by communicator size (bands
//! `size < 4`, `< 8`, ...) and then by bytes (`total_dsize < 4096`, ...): for allreduce the
//! whole vector's bytes (`dsize × count`), for alltoall one peer's block (`dsize × scount`).
//! The rules for a commutative operator are used (a sum, our schedules' operator). What the
//! chosen function then does is in `ompi/mca/coll/base/coll_base_allreduce.c`:
//! - `segmented_ring` runs with the fixed decision's segment size 0, so its segment count is
//!   the whole count and `count < size × segcount` always sends it to the plain `ring`;
//! - `ring` with `count < size` runs `recursive_doubling`;
//! - `rabenseifner` (`redscat_allgather`) with `count < pof2` (the largest power of two ≤
//!   size) runs `basic_linear`.
//!
//! The alltoall's `linear_sync` gets `coll_tuned_alltoall_algorithm_max_requests`, default 0
//! (`coll_tuned_alltoall_decision.c`): no limit. A communicator of one rank is `coll/self`'s.
//! On several nodes `coll/han` (priority 35 against tuned's 30) takes allreduce over, with a
//! hierarchical algorithm; this is tuned's choice, which han disqualifies itself for on one
//! node or with `--mca coll ^han`.
//!
//! # MPICH 4 (`mpich`)
//! MPICH v4.3.2's default selection (`MPIR_CVAR_*_INTRA_ALGORITHM=auto`, no
//! `MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE`): the decision tree of
//! `maint/tuning/coll/mpir/generic.json`, compiled into the library, walked by
//! `src/mpi/coll/src/csel.c` (`avg_msg_size` is `type size × count` of the allreduce vector
//! and of the alltoall's send block; `count<pow2` compares the count with the communicator's
//! `pof2`). The rules for a built-in commutative operator and a separate send buffer (not
//! `MPI_IN_PLACE`) are used. The ch4 device first picks a composition
//! (`maint/tuning/coll/ch4/generic.json`): a node-aware one for a communicator spread over
//! nodes with several ranks per node, the shared-memory one within a node; what is given here
//! is the flat choice (`MPIR_Allreduce_impl`) that its network path runs.

use crate::schedule::{ScheduleError, MAX_RANKS};
use crate::spec::{Choice, Choices};

/// An MPI library whose default choice [`library_choice`] reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Library {
    /// Open MPI 5.0 (`coll/tuned`'s fixed decision).
    OpenMpi,
    /// MPICH 4 (the default collective selection tree).
    Mpich,
}

/// The libraries (`--library`), in the order listed.
pub const LIBRARIES: Choices<Library> = Choices::new(
    "MPI library",
    &[
        Choice::aka(
            "openmpi",
            &["ompi", "open-mpi"],
            Library::OpenMpi,
            "Open MPI 5.0: coll/tuned's fixed decision (coll_tuned_decision_fixed.c, v5.0.9)",
        ),
        Choice::new(
            "mpich",
            Library::Mpich,
            "MPICH 4: the default selection tree (maint/tuning/coll/mpir/generic.json, v4.3.2)",
        ),
    ],
);

impl Library {
    /// Where its rules come from: the library's version and files.
    pub const fn source(self) -> &'static str {
        match self {
            Library::OpenMpi => {
                "Open MPI v5.0.9, ompi/mca/coll/tuned/coll_tuned_decision_fixed.c \
                 (commutative operator), ompi/mca/coll/base/coll_base_allreduce.c"
            }
            Library::Mpich => {
                "MPICH v4.3.2, maint/tuning/coll/mpir/generic.json walked by \
                 src/mpi/coll/src/csel.c (built-in commutative operator, not in place)"
            }
        }
    }
}

/// The collectives whose choice [`library_choice`] knows, in the order listed.
pub const LIBRARY_COLLECTIVES: &[&str] = &["allreduce", "alltoall"];

/// The bytes of an element when a caller gives bytes alone: a float64, the default dtype.
pub const DEFAULT_ELEMENT_BYTES: u32 = 8;

/// What a library would run for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryChoice {
    /// The algorithm of our registry that runs it: a spec the collective's parser reads
    /// (`recursive_doubling`, `linear_sync:max=0`).
    pub algorithm: String,
    /// The library's own name for it (`rabenseifner`, `MPIR_Alltoall_intra_brucks`).
    pub native: &'static str,
    /// How our algorithm differs from the library's, and which of the library's fallbacks
    /// applied; empty where ours is the library's algorithm.
    pub note: String,
}

/// What `library` runs for `collective` (`allreduce`, `alltoall`) on `nranks` ranks with
/// `bytes` bytes (allreduce: the vector; alltoall: one peer's block), with elements of
/// [`DEFAULT_ELEMENT_BYTES`] bytes: [`library_choice_for`].
pub fn library_choice(
    library: Library,
    collective: &str,
    nranks: u32,
    bytes: u64,
) -> Result<LibraryChoice, ScheduleError> {
    library_choice_for(library, collective, nranks, bytes, DEFAULT_ELEMENT_BYTES)
}

/// What `library` runs for `collective` on `nranks` ranks with `bytes` bytes made of
/// elements of `element_bytes` bytes (the element count decides the libraries' fallbacks for
/// short vectors). Errors: an unknown collective, `nranks` outside 1 ..= [`MAX_RANKS`], an
/// element size of 0, or bytes that are not whole elements.
pub fn library_choice_for(
    library: Library,
    collective: &str,
    nranks: u32,
    bytes: u64,
    element_bytes: u32,
) -> Result<LibraryChoice, ScheduleError> {
    let collective = LIBRARY_COLLECTIVES
        .iter()
        .copied()
        .find(|c| c.eq_ignore_ascii_case(collective.trim()))
        .ok_or_else(|| ScheduleError::UnknownName {
            what: "collective",
            name: collective.to_string(),
            accepted: LIBRARY_COLLECTIVES.iter().map(|c| c.to_string()).collect(),
        })?;
    if nranks == 0 || nranks as u64 > MAX_RANKS {
        return Err(ScheduleError::BadParameter {
            name: "nranks".into(),
            value: nranks.to_string(),
            reason: format!("a communicator has 1 ..= {MAX_RANKS} ranks"),
        });
    }
    if element_bytes == 0 {
        return Err(ScheduleError::BadParameter {
            name: "element bytes".into(),
            value: "0".into(),
            reason: "an element has 1 or more bytes".into(),
        });
    }
    if !bytes.is_multiple_of(element_bytes as u64) {
        return Err(ScheduleError::BadParameter {
            name: "bytes".into(),
            value: bytes.to_string(),
            reason: format!("not a whole number of {element_bytes}-byte elements"),
        });
    }
    let count = bytes / element_bytes as u64;
    let choice = match (library, collective) {
        (Library::OpenMpi, "allreduce") => ompi_allreduce(nranks, bytes, count),
        (Library::OpenMpi, _) => ompi_alltoall(nranks, bytes),
        (Library::Mpich, "allreduce") => mpich_allreduce(nranks, bytes, count),
        (Library::Mpich, _) => mpich_alltoall(nranks, bytes),
    };
    Ok(choice)
}

fn choice(algorithm: &str, native: &'static str, note: impl Into<String>) -> LibraryChoice {
    LibraryChoice {
        algorithm: algorithm.to_string(),
        native,
        note: note.into(),
    }
}

/// One communicator-size band of a fixed decision: communicators of fewer than `below` ranks
/// run, for messages of fewer than each cut's bytes, the first cut's algorithm, and `rest`
/// for longer ones.
struct Band {
    below: u64,
    cuts: &'static [(u64, u8)],
    rest: u8,
}

/// A [`Band`]: one line of a table.
const fn band(below: u64, cuts: &'static [(u64, u8)], rest: u8) -> Band {
    Band { below, cuts, rest }
}

/// The algorithm a band table gives (the first band whose `below` exceeds `n`; the last
/// band has no bound).
fn pick(bands: &[Band], n: u32, bytes: u64) -> u8 {
    let band = bands
        .iter()
        .find(|b| (n as u64) < b.below)
        .unwrap_or(&bands[bands.len() - 1]);
    band.cuts
        .iter()
        .find(|&&(cut, _)| bytes < cut)
        .map_or(band.rest, |&(_, alg)| alg)
}

const ANY: u64 = u64::MAX;

/// `ompi_coll_tuned_allreduce_intra_dec_fixed`, commutative branch (Open MPI v5.0.9).
/// Algorithms: 1 basic_linear, 2 nonoverlapping, 3 recursive_doubling, 4 ring,
/// 5 segmented_ring, 6 rabenseifner.
#[rustfmt::skip]
const OMPI_ALLREDUCE: &[Band] = &[
    band(4, &[(8, 4), (4096, 3), (8192, 4), (16384, 3), (65536, 4), (262144, 5)], 6),
    band(8, &[(16, 4), (8192, 3)], 6),
    band(16, &[(8192, 3)], 6),
    band(32, &[(64, 5), (4096, 3)], 6),
    band(64, &[(128, 5)], 6),
    band(128, &[(262144, 3)], 6),
    band(256, &[(131072, 2), (262144, 3)], 6),
    band(512, &[(4096, 2)], 6),
    band(2048, &[(2048, 2), (16384, 3)], 6),
    band(4096, &[(2048, 2), (4096, 5), (16384, 3)], 6),
    band(ANY, &[(2048, 2), (16384, 5), (32768, 3)], 6),
];

/// `ompi_coll_tuned_alltoall_intra_dec_fixed` (Open MPI v5.0.9), for 2 ranks and more (the
/// first band is `communicator_size == 2`). Algorithms: 1 linear, 2 pairwise,
/// 3 modified_bruck, 4 linear_sync, 5 two_proc.
#[rustfmt::skip]
const OMPI_ALLTOALL: &[Band] = &[
    band(3, &[
        (2, 2), (4, 5), (16, 2), (64, 5), (256, 2), (4096, 5), (32768, 2), (262144, 4), (1048576, 5),
    ], 2),
    band(8, &[(8192, 4), (16384, 1), (65536, 4), (524288, 1), (1048576, 2)], 1),
    band(16, &[(262144, 4)], 1),
    band(32, &[(4, 4), (512, 3), (8192, 4), (32768, 1), (262144, 4), (524288, 1)], 4),
    band(64, &[(512, 3), (524288, 1)], 4),
    band(128, &[(1024, 3), (2048, 1), (4096, 4), (262144, 1)], 2),
    band(256, &[(1024, 3), (2048, 4), (262144, 1)], 2),
    band(512, &[(1024, 3), (8192, 4), (32768, 1)], 2),
    band(1024, &[(512, 3), (8192, 4), (16384, 1), (131072, 4), (262144, 1)], 2),
    band(2048, &[(512, 3), (1024, 4), (2048, 1), (16384, 4), (262144, 1)], 4),
    band(4096, &[(1024, 3), (4096, 4), (8192, 1), (131072, 4)], 1),
    band(ANY, &[(2048, 3), (8192, 4), (16384, 1), (32768, 4), (65536, 1)], 4),
];

/// The largest power of two ≤ `n` (`n ≥ 1`): the libraries' `pof2`.
fn pof2(n: u32) -> u64 {
    1u64 << (31 - n.leading_zeros())
}

const SELF_NOTE: &str = "a communicator of one rank: the library copies the input \
                         (Open MPI's coll/self); every registered algorithm does the same";

fn ompi_allreduce(n: u32, bytes: u64, count: u64) -> LibraryChoice {
    if n == 1 {
        return choice("ring", "self", SELF_NOTE);
    }
    let alg = pick(OMPI_ALLREDUCE, n, bytes);
    match alg {
        2 => choice(
            "tree",
            "nonoverlapping",
            "Open MPI's nonoverlapping runs its tuned reduce to rank 0 then its tuned bcast; \
             tree (binomial reduce then binomial bcast) is the closest registered algorithm",
        ),
        3 => choice("recursive_doubling", "recursive_doubling", ""),
        4 | 5 if count < n as u64 => choice(
            "recursive_doubling",
            if alg == 4 { "ring" } else { "segmented_ring" },
            format!(
                "Open MPI's ring runs recursive doubling when count < ranks \
                 ({count} < {n}){}",
                if alg == 5 {
                    "; segmented_ring with the fixed decision's segment size 0 runs ring"
                } else {
                    ""
                }
            ),
        ),
        4 => choice("ring", "ring", ""),
        5 => choice(
            "ring",
            "segmented_ring",
            "segmented_ring with the fixed decision's segment size 0 has one segment, \
             so count < ranks × segcount and Open MPI runs its plain ring",
        ),
        6 if count < pof2(n) => choice(
            "tree",
            "rabenseifner",
            format!(
                "Open MPI's rabenseifner runs basic_linear when count < pof2 ({count} < {}); \
                 basic_linear (linear reduce to rank 0, linear bcast) maps to tree, the \
                 closest registered algorithm",
                pof2(n)
            ),
        ),
        _ => choice("rabenseifner", "rabenseifner", ""),
    }
}

fn ompi_alltoall(n: u32, bytes: u64) -> LibraryChoice {
    if n == 1 {
        return choice("linear", "self", SELF_NOTE);
    }
    const ORDER: &str = "Open MPI posts the receives from rank+1, rank+2, ... and the sends to \
                         rank-1, rank-2, ... all at once: linear_sync:max=0 is that order";
    match pick(OMPI_ALLTOALL, n, bytes) {
        1 => choice("linear_sync:max=0", "linear", ORDER),
        2 => choice(
            "pairwise",
            "pairwise",
            if n.is_power_of_two() {
                "Open MPI's pairwise sends to rank+step and receives from rank-step at \
                 every size; ours pairs rank XOR step for a power of two (the same steps \
                 in another order)"
            } else {
                ""
            },
        ),
        3 => choice(
            "bruck",
            "modified_bruck",
            "Open MPI's modified_bruck sends the same ceil(log2 N) messages as our \
             classic Bruck; its local rearrangement of the blocks differs",
        ),
        4 => choice(
            "linear_sync:max=0",
            "linear_sync",
            "coll_tuned_alltoall_algorithm_max_requests defaults to 0: no limit on \
             outstanding requests",
        ),
        _ => choice(
            "pairwise",
            "two_proc",
            "Open MPI's two_proc is one exchange with the other rank: pairwise on 2 ranks",
        ),
    }
}

/// MPICH v4.3.2, `maint/tuning/coll/mpir/generic.json`, `collective=allreduce`,
/// `comm_type=intra`: `avg_msg_size<=0` (commutative) → smp; `avg_msg_size<=8` →
/// recursive_doubling; then, for a built-in op, `count<pow2` → recursive_doubling, else
/// reduce_scatter_allgather.
fn mpich_allreduce(n: u32, bytes: u64, count: u64) -> LibraryChoice {
    if bytes == 0 {
        return choice(
            "tree",
            "MPIR_Allreduce_intra_smp",
            "MPICH's tree gives a zero-byte commutative allreduce to smp (reduce within \
             each node, allreduce across nodes, bcast within each node); tree is the \
             closest flat algorithm, and nothing moves",
        );
    }
    if bytes <= 8 {
        return choice(
            "recursive_doubling",
            "MPIR_Allreduce_intra_recursive_doubling",
            "",
        );
    }
    if count < pof2(n) {
        return choice(
            "recursive_doubling",
            "MPIR_Allreduce_intra_recursive_doubling",
            format!("count < pof2 ({count} < {})", pof2(n)),
        );
    }
    choice(
        "rabenseifner",
        "MPIR_Allreduce_intra_reduce_scatter_allgather",
        "",
    )
}

/// MPICH v4.3.2, `maint/tuning/coll/mpir/generic.json`, `collective=alltoall`,
/// `comm_type=intra`, not in place: `comm_size<8`: `avg_msg_size<=32768` → scattered, else
/// pairwise; otherwise `avg_msg_size<=256` → brucks, `<=32768` → scattered, else pairwise.
fn mpich_alltoall(n: u32, bytes: u64) -> LibraryChoice {
    if n >= 8 && bytes <= 256 {
        return choice(
            "bruck",
            "MPIR_Alltoall_intra_brucks",
            "MPICH's Bruck with its default radix 2 (MPIR_CVAR_ALLTOALL_BRUCKS_KVAL)",
        );
    }
    if bytes <= 32768 {
        return choice(
            "linear_shifted:block=32",
            "MPIR_Alltoall_intra_scattered",
            "blocks of MPIR_CVAR_ALLTOALL_THROTTLE = 32 requests",
        );
    }
    choice("pairwise", "MPIR_Alltoall_intra_pairwise", "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives::{allreduce, alltoall};

    /// The algorithm for `b` bytes: float64 elements for allreduce, bytes for alltoall (whose
    /// choice depends on bytes alone).
    fn alg(l: Library, c: &str, n: u32, b: u64) -> String {
        at(l, c, n, b).algorithm
    }

    fn at(l: Library, c: &str, n: u32, b: u64) -> LibraryChoice {
        let el = if c == "alltoall" { 1 } else { 8 };
        library_choice_for(l, c, n, b, el).unwrap()
    }

    #[test]
    fn every_choice_parses_in_the_registry() {
        for l in [Library::OpenMpi, Library::Mpich] {
            for n in [1, 2, 3, 4, 7, 8, 16, 31, 64, 200, 300, 1000, 3000, 5000] {
                for b in [0u64, 8, 64, 1024, 4096, 65536, 1 << 20, 1 << 24] {
                    let a = alg(l, "allreduce", n, b);
                    allreduce::Algorithm::parse(&a).unwrap();
                    let a = alg(l, "alltoall", n, b);
                    alltoall::Algorithm::parse(&a).unwrap();
                }
            }
        }
    }

    #[test]
    fn bands_cover_every_size() {
        for bands in [OMPI_ALLREDUCE, OMPI_ALLTOALL] {
            assert_eq!(bands.last().unwrap().below, ANY);
            for w in bands.windows(2) {
                assert!(w[0].below < w[1].below);
            }
            for b in bands {
                for w in b.cuts.windows(2) {
                    assert!(w[0].0 < w[1].0);
                }
            }
        }
        assert_eq!(pof2(1), 1);
        assert_eq!(pof2(7), 4);
        assert_eq!(pof2(8), 8);
        assert_eq!(pof2(u32::MAX), 1 << 31);
    }

    #[test]
    fn open_mpi_edges() {
        let o = Library::OpenMpi;
        // 4..8 ranks: < 16 B ring, < 8192 B recursive doubling, then Rabenseifner.
        assert_eq!(alg(o, "allreduce", 4, 8), "recursive_doubling"); // ring, count 1 < 4
        assert_eq!(alg(o, "allreduce", 4, 8184), "recursive_doubling");
        assert_eq!(alg(o, "allreduce", 4, 8192), "rabenseifner");
        assert_eq!(alg(o, "allreduce", 7, 8192), "rabenseifner");
        // 8..16: 8192 B switches; 16..32: < 64 B segmented ring, which runs ring, which
        // runs recursive doubling while count < ranks.
        assert_eq!(alg(o, "allreduce", 8, 8184), "recursive_doubling");
        assert_eq!(alg(o, "allreduce", 8, 8192), "rabenseifner");
        let c = library_choice(o, "allreduce", 16, 56).unwrap();
        assert_eq!(
            (c.algorithm.as_str(), c.native),
            ("recursive_doubling", "segmented_ring")
        );
        assert_eq!(alg(o, "allreduce", 16, 64), "recursive_doubling");
        assert_eq!(alg(o, "allreduce", 16, 4096), "rabenseifner");
        // 2..4 ranks with 1-byte elements: ring at 4096..8192 B, segmented (= ring) above.
        let ring = |n, b| library_choice_for(o, "allreduce", n, b, 1).unwrap();
        assert_eq!(ring(2, 4095).algorithm, "recursive_doubling");
        assert_eq!(
            (ring(2, 4096).algorithm.as_str(), ring(2, 4096).native),
            ("ring", "ring")
        );
        assert_eq!(ring(3, 65536).native, "segmented_ring");
        assert_eq!(ring(3, 65536).algorithm, "ring");
        assert_eq!(ring(3, 262144).algorithm, "rabenseifner");
        // 128..256: nonoverlapping (reduce + bcast) below 128 KiB.
        let c = library_choice(o, "allreduce", 128, 131064).unwrap();
        assert_eq!((c.algorithm.as_str(), c.native), ("tree", "nonoverlapping"));
        assert_eq!(alg(o, "allreduce", 128, 131072), "recursive_doubling");
        assert_eq!(alg(o, "allreduce", 255, 262144), "rabenseifner");
        // Rabenseifner with count < pof2 runs basic_linear.
        let c = library_choice_for(o, "allreduce", 5, 8192, 4096).unwrap();
        assert_eq!((c.algorithm.as_str(), c.native), ("tree", "rabenseifner"));
        // Alltoall: 2 ranks alternate pairwise / two_proc; 8..16 linear_sync below 256 KiB.
        assert_eq!(at(o, "alltoall", 2, 1).native, "pairwise");
        assert_eq!(at(o, "alltoall", 2, 2).native, "two_proc");
        assert_eq!(at(o, "alltoall", 2, 4).native, "pairwise");
        let c = at(o, "alltoall", 8, 262143);
        assert_eq!(
            (c.algorithm.as_str(), c.native),
            ("linear_sync:max=0", "linear_sync")
        );
        assert_eq!(at(o, "alltoall", 8, 262144).native, "linear");
        assert_eq!(alg(o, "alltoall", 32, 511), "bruck");
        assert_eq!(alg(o, "alltoall", 32, 512), "linear_sync:max=0");
        assert_eq!(alg(o, "alltoall", 4096, 2047), "bruck");
        assert_eq!(alg(o, "alltoall", 4096, 65536), "linear_sync:max=0");
        assert_eq!(alg(o, "alltoall", 100, 262144), "pairwise");
        assert_eq!(at(o, "alltoall", 1, 8).native, "self");
    }

    #[test]
    fn mpich_edges() {
        let m = Library::Mpich;
        // (collective, ranks, bytes, the algorithm MPICH picks)
        for (collective, nranks, bytes, want) in [
            ("allreduce", 16, 8, "recursive_doubling"),
            // 16 B of float64 on 16 ranks: count 2 < pof2 16.
            ("allreduce", 16, 16, "recursive_doubling"),
            ("allreduce", 16, 120, "recursive_doubling"),
            ("allreduce", 16, 128, "rabenseifner"),
            ("allreduce", 31, 128, "rabenseifner"),
            ("allreduce", 32, 128, "recursive_doubling"),
            ("allreduce", 2, 16, "rabenseifner"),
            ("alltoall", 8, 256, "bruck"),
            ("alltoall", 8, 257, "linear_shifted:block=32"),
            ("alltoall", 7, 256, "linear_shifted:block=32"),
            ("alltoall", 7, 32768, "linear_shifted:block=32"),
            ("alltoall", 7, 32776, "pairwise"),
            ("alltoall", 1000, 32776, "pairwise"),
        ] {
            assert_eq!(
                alg(m, collective, nranks, bytes),
                want,
                "{collective} {nranks} {bytes}"
            );
        }
        assert_eq!(
            library_choice(m, "allreduce", 4, 0).unwrap().native,
            "MPIR_Allreduce_intra_smp"
        );
    }

    #[test]
    fn bad_input_names_itself() {
        let e = |c, n, b, el| {
            library_choice_for(Library::Mpich, c, n, b, el)
                .unwrap_err()
                .to_string()
        };
        assert!(
            e("halo", 4, 8, 8).contains("'halo'"),
            "{}",
            e("halo", 4, 8, 8)
        );
        assert!(e("allreduce", 0, 8, 8).contains("1 ..= 4294967294 ranks"));
        assert!(e("allreduce", 4, 12, 8).contains("not a whole number of 8-byte elements"));
        assert!(e("allreduce", 4, 8, 0).contains("1 or more bytes"));
        assert_eq!(LIBRARIES.parse("OMPI").unwrap(), Library::OpenMpi);
    }
}
