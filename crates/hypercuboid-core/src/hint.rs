//! Hints to the processor: they change speed, never results.

/// Asks the processor to bring `r`'s cache line closer: a hint for an access soon to come
/// (an event of the schedule engine, a port of the packet engine), with no effect on results.
#[inline(always)]
pub(crate) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults and has no architectural effect; the
    // pointer comes from a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            r as *const T as *const i8,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
