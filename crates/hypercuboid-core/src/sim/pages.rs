//! Buffers of the schedule engine sized for transparent huge pages to their end.
//!
//! [`crate::hint::huge_pages`] advises the 2 MiB-aligned part of a buffer of 4 MiB or more;
//! what lies before its first 2 MiB boundary and after its last is backed by 4 KiB pages, one
//! page fault each (about 1.6 µs in a virtual machine, against 0.17 µs per 4 KiB for a
//! 2 MiB page). A column of a few MiB, or a queue vector that grows by doubling through every
//! size below 4 MiB, then takes hundreds of such faults: on 2^17 ranks of the binomial tree,
//! 4,000 on one thread and 8,000 on two, a sixth of a fresh process's time. A column of 1 MiB
//! or more gets 2 MiB of room beyond its end ([`crate::hint::roomy`], and
//! [`crate::hint::roomy_zeros`]), and here a queue vector that outgrows 256 KiB moves at once
//! into such a buffer instead of doubling through the sizes below.

use crate::hint::{move_to_capacity, roomy, HUGE};

/// A queue vector growing past this many bytes moves into a buffer of [`roomy`] capacity.
const JUMP: usize = 256 << 10;

/// Makes room for one more item in a queue vector `v`: when it is full, its capacity doubles
/// ([`crate::hint::make_room`]) up to 256 KiB, and past it becomes at once that of a 4 MiB
/// buffer and its room ([`roomy`]), advised for huge pages before the items move there.
#[inline(always)]
pub(super) fn make_room<T: Copy>(v: &mut Vec<T>) {
    if v.len() == v.capacity() && v.len() * std::mem::size_of::<T>() > JUMP / 2 {
        jump(v);
    }
    crate::hint::make_room(v);
}

#[cold]
#[inline(never)]
fn jump<T: Copy>(v: &mut Vec<T>) {
    let size = std::mem::size_of::<T>().max(1);
    move_to_capacity(v, roomy::<T>((2 * v.len()).max(HUGE / size)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_vectors_double_then_jump() {
        let mut v: Vec<[u64; 3]> = Vec::new();
        let mut caps = Vec::new();
        for i in 0..250_000u64 {
            make_room(&mut v);
            if caps.last() != Some(&v.capacity()) {
                caps.push(v.capacity());
            }
            v.push([i, i + 1, i + 2]);
        }
        // 16, 32, ... 8,192 (192 KiB), then 6 MiB of 24-byte items.
        let want: Vec<usize> = (4..=13).map(|k| 1 << k).chain([(6 << 20) / 24]).collect();
        assert_eq!(caps, want);
        assert!(v
            .iter()
            .enumerate()
            .all(|(i, x)| x[0] == i as u64 && x[2] == i as u64 + 2));
    }
}
