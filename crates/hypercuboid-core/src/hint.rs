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

/// The smallest buffer worth asking the kernel to back with 2 MiB pages: two of them, so that
/// at least one 2 MiB-aligned page lies inside it.
pub(crate) const HUGE: usize = 4 << 20;
/// A huge page.
const PAGE: usize = 2 << 20;
/// The smallest column given room beyond its end ([`roomy`]).
const ROOMY: usize = 1 << 20;

/// A capacity for `n` items of `T`: `n`, or for 1 MiB or more, room for the items and 2 MiB
/// beyond, 4 MiB at least. [`huge_pages`] advises only the 2 MiB-aligned part of a buffer of
/// 4 MiB or more; what lies before its first 2 MiB boundary and after its last is backed by
/// 4 KiB pages, one page fault each (about 1.6 µs in a virtual machine, against 0.17 µs per
/// 4 KiB for a 2 MiB page). With the room, only a column's head is in 4 KiB pages. Only the
/// pages touched count towards memory: at most one partly used 2 MiB page more per buffer.
pub(crate) fn roomy<T>(n: usize) -> usize {
    let size = std::mem::size_of::<T>().max(1);
    let bytes = n.saturating_mul(size);
    if bytes < ROOMY {
        return n;
    }
    bytes.saturating_add(PAGE).max(HUGE).div_ceil(size)
}

/// Asks the kernel to back the not yet touched memory of `v`'s buffer with transparent huge
/// pages (`madvise(MADV_HUGEPAGE)` on the 2 MiB-aligned part of the buffer; Linux only, and
/// only for buffers of 4 MiB or more). Call it between the allocation and the first write:
/// pages already touched stay as they are. A hint: if the kernel has no transparent huge
/// pages, or refuses, nothing changes; results never do.
///
/// Why: the schedule engine's per-rank columns (rank records, the model's clocks, op states)
/// are read at random, a few lines per event. With 4 KiB pages, a column of 48 MB spans
/// 12,288 pages, far beyond the TLB, and in a virtual machine each TLB miss is a nested page
/// walk; a fresh process also takes one page fault per 4 KiB (docs/performance.md, "A new
/// machine, and huge pages for the schedule engine").
pub(crate) fn huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const MADV_HUGEPAGE: i32 = 14;
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes < HUGE || std::env::var_os("HC_NO_HUGE").is_some() {
            return;
        }
        let start = v.as_ptr() as usize;
        let lo = start.div_ceil(PAGE) * PAGE;
        let hi = (start + bytes) / PAGE * PAGE;
        if hi > lo {
            // SAFETY: `[lo, hi)` lies within `v`'s allocation, which this process owns and
            // which stays mapped while `v` lives; MADV_HUGEPAGE changes how the kernel backs
            // the range, never its contents, and an error (no THP in this kernel) is ignored.
            unsafe { madvise(lo as *mut std::ffi::c_void, hi - lo, MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// `n` zeros (`T::default()`), in a buffer of [`roomy`] capacity advised for huge pages
/// ([`huge_pages`]) before it is written. For integer `T` the allocator hands out a large
/// zeroed buffer without touching it, so the advice covers all of it (another `T` is written
/// element by element first, and only later pages, if any, take the advice).
pub(crate) fn roomy_zeros<T: Copy + Default>(n: usize) -> Vec<T> {
    let mut v = vec![T::default(); roomy::<T>(n)];
    huge_pages(&v);
    v.truncate(n);
    v
}

/// The items of `it` (exactly `n` of them) collected into a vector of [`roomy`] capacity
/// whose buffer is advised for huge pages ([`huge_pages`]) before it is written.
pub(crate) fn huge_collect<T>(n: usize, it: impl Iterator<Item = T>) -> Vec<T> {
    let mut v = Vec::with_capacity(roomy::<T>(n));
    huge_pages(&v);
    v.extend(it);
    debug_assert_eq!(v.len(), n);
    v
}

/// Makes room for one more item in `v`: when it is full, its capacity is doubled (at least 16)
/// into a new buffer advised for huge pages ([`huge_pages`]) before the items are copied into
/// it, instead of by the push itself (a vector that grows to tens of megabytes then takes
/// 2 MiB page faults, not 4 KiB ones).
#[inline(always)]
pub(crate) fn make_room<T: Copy>(v: &mut Vec<T>) {
    if v.len() == v.capacity() {
        grow(v);
    }
}

#[cold]
#[inline(never)]
fn grow<T: Copy>(v: &mut Vec<T>) {
    move_to_capacity(v, (2 * v.len()).max(16));
}

/// Moves `v`'s items into a new buffer of `capacity` items (at least its length), advised for
/// huge pages ([`huge_pages`]) before they are copied into it.
pub(crate) fn move_to_capacity<T: Copy>(v: &mut Vec<T>, capacity: usize) {
    let mut w = Vec::with_capacity(capacity.max(v.len()));
    huge_pages(&w);
    w.extend_from_slice(v);
    *v = w;
}

/// `n` zeros, each page of them written once now. `vec![0; n]` leaves a large vector's pages
/// untouched (the allocator maps fresh zeroed memory): a column that is read before it is
/// written, as a model's clocks are (an op's ready time reads them before its event sets
/// them), then takes two page faults per page, one mapping the shared zero page at the first
/// read and one copying it at the first write. Writing a zero into each page first makes
/// that one fault per page. A large vector's buffer, of [`roomy`] capacity, is advised for
/// huge pages first ([`huge_pages`]): then one fault per 2 MiB.
pub(crate) fn written_zeros<T: Copy + Default>(n: usize) -> Vec<T> {
    const SMALL_PAGE: usize = 4096;
    let mut v: Vec<T> = roomy_zeros(n);
    let step = (SMALL_PAGE / std::mem::size_of::<T>().max(1)).max(1);
    for i in (0..n).step_by(step) {
        // SAFETY: `i < n`, so the pointer is to an initialised element of `v`; a volatile
        // write (of the value it holds) so that the store is not elided.
        unsafe { std::ptr::write_volatile(v.as_mut_ptr().add(i), T::default()) };
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_for_huge_pages_to_the_end() {
        // Below 1 MiB: as asked.
        assert_eq!(roomy::<u8>(1000), 1000);
        assert_eq!(roomy::<u64>((1 << 17) - 1), (1 << 17) - 1);
        // 1 MiB: 4 MiB in all; 6 MiB: 8 MiB.
        assert_eq!(roomy::<u64>(1 << 17), 1 << 19);
        assert_eq!(roomy::<u8>(6 << 20), 8 << 20);
        // 48-byte items: rounded up to whole items.
        assert_eq!(
            roomy::<[u64; 6]>(100_000),
            (4_800_000usize + (2 << 20)).div_ceil(48)
        );
        let z: Vec<u32> = roomy_zeros(1 << 20);
        assert_eq!((z.len(), z.capacity()), (1 << 20, (6 << 20) / 4));
        assert!(z.iter().all(|&x| x == 0));
    }

    /// The `VmFlags` line of the mapping of this process that contains address `a`.
    #[cfg(target_os = "linux")]
    fn vm_flags(a: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
        let mut inside = false;
        for line in smaps.lines() {
            let head = line.split_whitespace().next().unwrap_or("");
            if let Some((lo, hi)) = head.split_once('-') {
                if let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = lo <= a && a < hi;
                    continue;
                }
            }
            if inside && line.starts_with("VmFlags:") {
                return line.to_string();
            }
        }
        panic!("no mapping holds {a:#x}");
    }

    #[test]
    fn huge_collect_keeps_the_items_and_advises_large_buffers() {
        let v = huge_collect(3 << 20, (0..3u64 << 20).map(|i| i * 7));
        assert_eq!(v.len(), 3 << 20);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 7));
        let small = huge_collect(5, 0..5u8);
        assert_eq!(small, [0, 1, 2, 3, 4]);
        // The kernel marks an advised range `hg` (when it has transparent huge pages).
        #[cfg(target_os = "linux")]
        if std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
            let lo = (v.as_ptr() as usize).div_ceil(2 << 20) * (2 << 20);
            assert!(
                vm_flags(lo).split_whitespace().any(|f| f == "hg"),
                "{}",
                vm_flags(lo)
            );
            // A buffer below 4 MiB is left alone.
            let b = huge_collect(1 << 10, 0..1u32 << 10);
            assert!(!vm_flags(b.as_ptr() as usize)
                .split_whitespace()
                .any(|f| f == "hg"));
        }
    }

    #[test]
    fn written_zeros_are_zeros() {
        for n in [0, 1, 511, 512, 513, 10_000] {
            let v: Vec<u64> = written_zeros(n);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0));
            let b: Vec<u8> = written_zeros(n);
            assert_eq!((b.len(), b.iter().map(|&x| x as usize).sum()), (n, 0));
        }
    }

    /// Minor page faults of this thread so far (other tests run on other threads).
    #[cfg(target_os = "linux")]
    fn minor_faults() -> u64 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        // Fields after the command's closing parenthesis: state is field 3, minflt field 10.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        rest.split(' ').nth(7).unwrap().parse().unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn written_zeros_fault_once_per_page() {
        // 32 MiB: read every page, then write every page. Had the pages not been written, the
        // reads would map the zero page and the writes copy it: 8,192 faults more.
        let mut v: Vec<u64> = written_zeros(1 << 22);
        let before = minor_faults();
        let mut sum = 0;
        for i in (0..v.len()).step_by(512) {
            sum += std::hint::black_box(v[i]);
        }
        for i in (0..v.len()).step_by(512) {
            v[i] = sum + 1;
        }
        let faults = minor_faults() - before;
        assert!(
            faults < 100,
            "{faults} page faults reading and writing 8,192 pages"
        );
        assert_eq!(v[512], 1);
    }
}
