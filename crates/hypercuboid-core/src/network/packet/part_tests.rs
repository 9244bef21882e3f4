//! Tests of one part's event loop (`part.rs`).

use super::super::source::{ExchangeSource, ExternalSource, SyntheticSource};
use super::*;
use crate::network::Report;
use crate::units::us;
use std::cell::Cell;

thread_local! {
    /// Set by a test: the parts built on this thread keep their credit rings in `cret`.
    pub(super) static EXTERNAL_RING: Cell<bool> = const { Cell::new(false) };
    /// Whether the last part built on this thread kept its rings in the ports' blocks.
    pub(super) static INLINE_RING: Cell<bool> = const { Cell::new(false) };
}

/// A run of 10 µs of uniform traffic on one thread, its credit rings in the blocks or
/// not, and whether they were.
fn run(spec: &str, routing: &str, load: f64, external: bool) -> (Report, bool) {
    EXTERNAL_RING.set(external);
    let (r, _) = super::super::uniform_run(spec, routing, load, 1, us(1), false);
    EXTERNAL_RING.set(false);
    (r, INLINE_RING.get())
}

/// The credit rings in the ports' blocks give the results of the rings in their own array,
/// on 1, 2 and 4 VCs, at loads that fill the rings and empty the credits.
#[test]
fn rings_in_the_blocks_change_nothing() {
    for (spec, routing, load) in [
        ("slimfly:q=5", "min", 0.6),
        ("slimfly:q=5", "ugal", 0.95),
        ("mlfm:h=4", "min", 0.9),
    ] {
        let (inline, was_inline) = run(spec, routing, load, false);
        let (external, was_external) = run(spec, routing, load, true);
        assert!(was_inline && !was_external, "{spec} {routing}");
        assert!(inline.delivered_total > 0, "{spec} {routing}");
        assert_eq!(inline, external, "{spec} {routing} at {load}");
    }
}

/// Two parts side by side in the runner's vector never share a cache line (nor a pair of
/// lines): each starts on a 128-byte boundary, and a size is a multiple of the alignment.
#[test]
fn parts_side_by_side_share_no_cache_line() {
    fn check<const V: usize, S: Source>() {
        assert_eq!(std::mem::align_of::<Part<'static, V, S>>(), 128);
        assert_eq!(std::mem::size_of::<Part<'static, V, S>>() % 128, 0);
    }
    check::<1, SyntheticSource<'static>>();
    check::<4, SyntheticSource<'static>>();
    check::<8, ExchangeSource<'static>>();
    check::<2, ExternalSource>();
}
