//! A small, fast, seedable generator for the simulator's hot loop: SplitMix64 (Steele, Lea and
//! Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014). Its 64-bit state
//! makes one generator per endpoint cheap, so every endpoint draws its own traffic and the
//! offered traffic does not depend on the routing.

/// SplitMix64.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The generator of stream `stream` of `seed` (streams are decorrelated by one mixing
    /// round of their index).
    pub fn stream(seed: u64, stream: u64) -> SplitMix64 {
        let mut g = SplitMix64::new(stream.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ seed);
        g.next_u64();
        g
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` ≥ 1), by Lemire's multiply-shift (bias below 2^-32 for the
    /// ranges used here).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in (0, 1]: [`SplitMix64::unit_of`] of the next [`SplitMix64::unit_index`].
    #[inline]
    pub fn unit(&mut self) -> f64 {
        Self::unit_of(self.unit_index())
    }

    /// The draw behind [`SplitMix64::unit`], as the integer m in `1..=2^53` of the value
    /// m · 2^-53: a caller that only compares it with thresholds skips the float.
    #[inline]
    pub fn unit_index(&mut self) -> u64 {
        (self.next_u64() >> 11) + 1
    }

    /// The value m · 2^-53 of a [`SplitMix64::unit_index`] m (exact: m ≤ 2^53).
    #[inline]
    pub fn unit_of(m: u64) -> f64 {
        m as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        // SplitMix64 from seed 0: the first outputs of the reference implementation.
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(g.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn below_is_in_range_and_unit_in_0_1() {
        let mut g = SplitMix64::new(7);
        for n in [1u64, 2, 3, 1000] {
            for _ in 0..1000 {
                assert!(g.below(n) < n);
            }
        }
        for _ in 0..1000 {
            let u = g.unit();
            assert!(u > 0.0 && u <= 1.0);
        }
    }
}
