//! Integer arithmetic shared by the generators and the schedule layer.

/// The divisors of `n ≥ 1`, ascending.
pub fn divisors(n: u32) -> Vec<u32> {
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut i: u32 = 1;
    while (i as u64) * (i as u64) <= n as u64 {
        if n.is_multiple_of(i) {
            small.push(i);
            if i != n / i {
                large.push(n / i);
            }
        }
        i += 1;
    }
    small.extend(large.into_iter().rev());
    small
}
