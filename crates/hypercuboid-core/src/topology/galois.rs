//! Finite fields GF(q), q = p^m a prime power, for the Slim Fly (MMS graphs), PolarFly and
//! OFT (projective planes) generators.
//!
//! An element is a `u32` in `0..q`: its base-p digits are the coefficients of a polynomial of
//! degree < m over GF(p) (digit i is the coefficient of x^i). So 0 is zero, 1 is one, and for a
//! prime q the elements are the integers mod q. For m > 1 the field is GF(p)\[x\]/(f) with f the
//! first monic primitive polynomial of degree m in the order of its coefficient encoding, and
//! the primitive element ξ is x itself (element p); for m = 1, ξ is the smallest primitive root
//! mod p. Multiplication goes through log/antilog tables of q entries, so GF(q) costs O(q)
//! memory and O(1) a product.

use super::error::TopologyError;

/// `(p, m)` with `q = p^m`, p prime and m ≥ 1, or `None` if q is not a prime power (0 and 1
/// are not).
pub fn prime_power(q: u64) -> Option<(u64, u32)> {
    if q < 2 {
        return None;
    }
    let mut p = 2u64;
    while p * p <= q {
        if q.is_multiple_of(p) {
            break;
        }
        p += 1;
    }
    if p * p > q {
        return Some((q, 1)); // q is prime
    }
    let (mut r, mut m) = (q, 0u32);
    while r % p == 0 {
        r /= p;
        m += 1;
    }
    (r == 1).then_some((p, m))
}

/// True if `n` is prime.
pub fn is_prime(n: u64) -> bool {
    matches!(prime_power(n), Some((_, 1)))
}

/// The largest value ≤ `n` and the smallest ≥ `n` (both ≥ `min`) satisfying `ok`, searching at
/// most `limit` values each way.
pub(crate) fn nearest(
    n: u64,
    min: u64,
    limit: u64,
    ok: impl Fn(u64) -> bool,
) -> (Option<u64>, Option<u64>) {
    let below = (n.saturating_sub(limit).max(min)..=n)
        .rev()
        .find(|&v| ok(v));
    let above = (n.max(min)..=n.saturating_add(limit)).find(|&v| ok(v));
    (below, above)
}

/// Text naming the nearest valid values around `n`, e.g. `5 or 7`, `3`.
pub(crate) fn nearest_text(below: Option<u64>, above: Option<u64>) -> String {
    match (below, above) {
        (Some(b), Some(a)) if a == b => format!("{a}"),
        (Some(b), Some(a)) => format!("{b} or {a}"),
        (Some(b), None) => format!("{b}"),
        (None, Some(a)) => format!("{a}"),
        (None, None) => "none nearby".to_string(),
    }
}

/// Largest field order accepted (the tables hold 2q entries).
pub const MAX_ORDER: u64 = 1 << 22;

/// The finite field GF(q).
#[derive(Clone, Debug)]
pub struct GaloisField {
    q: u32,
    p: u32,
    m: u32,
    /// Coefficients f_0..f_{m-1} of the monic modulus x^m + f_{m-1} x^{m-1} + ... + f_0 (m > 1).
    modulus: Vec<u32>,
    /// exp[i] = ξ^i for i in 0..2(q-1).
    exp: Vec<u32>,
    /// log[a] = i with ξ^i = a, for a ≠ 0.
    log: Vec<u32>,
}

impl GaloisField {
    /// GF(q). Errors if q is not a prime power or exceeds [`MAX_ORDER`].
    pub fn new(q: u64) -> Result<GaloisField, TopologyError> {
        let err = |reason: String| TopologyError::Parameter {
            family: "galois",
            name: "q",
            value: q.to_string(),
            reason,
        };
        if q > MAX_ORDER {
            return Err(err(format!("field orders up to {MAX_ORDER} are supported")));
        }
        let (p, m) = prime_power(q).ok_or_else(|| {
            let (b, a) = nearest(q, 2, 64, |v| prime_power(v).is_some());
            err(format!(
                "not a prime power; the nearest prime powers are {}",
                nearest_text(b, a)
            ))
        })?;
        let (q, p) = (q as u32, p as u32);
        let mut field = GaloisField {
            q,
            p,
            m,
            modulus: Vec::new(),
            exp: Vec::new(),
            log: Vec::new(),
        };
        let order = (q - 1) as usize;
        let mut exp = vec![0u32; 2 * order.max(1)];
        if m == 1 {
            // Smallest primitive root mod p.
            let g = (1..p)
                .find(|&g| {
                    let mut x = 1u64;
                    for i in 1..=order {
                        x = x * g as u64 % p as u64;
                        if x == 1 {
                            return i == order;
                        }
                    }
                    false
                })
                .expect("every prime field has a primitive root");
            let mut x = 1u64;
            for e in exp.iter_mut().take(order) {
                *e = x as u32;
                x = x * g as u64 % p as u64;
            }
        } else {
            // First monic primitive polynomial: ξ = x has order q - 1.
            let mut found = false;
            for code in 0..q {
                field.modulus = field.digits(code);
                if field.modulus[0] == 0 {
                    continue; // divisible by x
                }
                let mut a = 1u32;
                let mut ok = true;
                for (i, e) in exp.iter_mut().take(order).enumerate() {
                    if i > 0 && a == 1 {
                        ok = false;
                        break;
                    }
                    *e = a;
                    a = field.times_x(a);
                }
                if ok && a == 1 {
                    found = true;
                    break;
                }
            }
            assert!(found, "a primitive polynomial of every degree exists");
        }
        for i in order..2 * order {
            exp[i] = exp[i - order];
        }
        let mut log = vec![0u32; q as usize];
        for (i, &e) in exp.iter().take(order).enumerate() {
            log[e as usize] = i as u32;
        }
        field.exp = exp;
        field.log = log;
        Ok(field)
    }

    /// The order q.
    pub fn order(&self) -> u32 {
        self.q
    }

    /// The characteristic p.
    pub fn characteristic(&self) -> u32 {
        self.p
    }

    /// The degree m (q = p^m).
    pub fn degree(&self) -> u32 {
        self.m
    }

    /// The primitive element ξ.
    pub fn primitive(&self) -> u32 {
        self.exp[1 % self.exp.len()]
    }

    /// Coefficients of the monic modulus below x^m (empty for a prime field).
    pub fn modulus(&self) -> &[u32] {
        &self.modulus
    }

    fn digits(&self, mut a: u32) -> Vec<u32> {
        let mut d = vec![0u32; self.m as usize];
        for x in d.iter_mut() {
            *x = a % self.p;
            a /= self.p;
        }
        d
    }

    fn encode_digits(&self, d: &[u32]) -> u32 {
        d.iter().rev().fold(0, |acc, &x| acc * self.p + x)
    }

    /// a·x reduced by the modulus (m > 1).
    fn times_x(&self, a: u32) -> u32 {
        let d = self.digits(a);
        let top = d[self.m as usize - 1];
        let mut out = vec![0u32; self.m as usize];
        for i in (1..self.m as usize).rev() {
            out[i] = d[i - 1];
        }
        // x^m = -(f_{m-1} x^{m-1} + ... + f_0)
        for (o, &f) in out.iter_mut().zip(&self.modulus) {
            *o = (*o + (self.p - f * top % self.p)) % self.p;
        }
        self.encode_digits(&out)
    }

    /// a + b.
    pub fn add(&self, a: u32, b: u32) -> u32 {
        if self.m == 1 {
            return ((a as u64 + b as u64) % self.q as u64) as u32;
        }
        if self.p == 2 {
            return a ^ b;
        }
        let (mut a, mut b) = (a, b);
        let (mut out, mut scale) = (0u32, 1u32);
        for _ in 0..self.m {
            out += (a % self.p + b % self.p) % self.p * scale;
            a /= self.p;
            b /= self.p;
            scale *= self.p;
        }
        out
    }

    /// -a.
    pub fn neg(&self, a: u32) -> u32 {
        if self.m == 1 {
            return (self.q - a) % self.q;
        }
        if self.p == 2 {
            return a;
        }
        let mut a = a;
        let (mut out, mut scale) = (0u32, 1u32);
        for _ in 0..self.m {
            out += (self.p - a % self.p) % self.p * scale;
            a /= self.p;
            scale *= self.p;
        }
        out
    }

    /// a - b.
    pub fn sub(&self, a: u32, b: u32) -> u32 {
        self.add(a, self.neg(b))
    }

    /// a · b.
    pub fn mul(&self, a: u32, b: u32) -> u32 {
        if a == 0 || b == 0 {
            return 0;
        }
        self.exp[(self.log[a as usize] + self.log[b as usize]) as usize]
    }

    /// a⁻¹ (`None` for 0).
    pub fn inv(&self, a: u32) -> Option<u32> {
        if a == 0 {
            return None;
        }
        let order = self.q - 1;
        Some(self.exp[((order - self.log[a as usize]) % order) as usize])
    }

    /// ξ^i for any i.
    pub fn xi_pow(&self, i: u64) -> u32 {
        self.exp[(i % (self.q as u64 - 1)) as usize]
    }

    /// i with ξ^i = a (`None` for 0).
    pub fn log(&self, a: u32) -> Option<u32> {
        (a != 0).then(|| self.log[a as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prime_powers() {
        assert_eq!(prime_power(1), None);
        assert_eq!(prime_power(2), Some((2, 1)));
        assert_eq!(prime_power(27), Some((3, 3)));
        assert_eq!(prime_power(64), Some((2, 6)));
        assert_eq!(prime_power(12), None);
        assert_eq!(prime_power(49), Some((7, 2)));
        assert_eq!(
            nearest(6, 2, 10, |v| prime_power(v).is_some()),
            (Some(5), Some(7))
        );
    }

    #[test]
    fn gf4_by_hand() {
        // GF(4) = GF(2)[x]/(x^2 + x + 1): x·x = x + 1, i.e. 2·2 = 3.
        let f = GaloisField::new(4).unwrap();
        assert_eq!(f.modulus(), &[1, 1]);
        assert_eq!(f.mul(2, 2), 3);
        assert_eq!(f.mul(2, 3), 1);
        assert_eq!(f.add(2, 3), 1);
        assert_eq!(f.primitive(), 2);
    }

    #[test]
    fn prime_field_is_integers_mod_p() {
        let f = GaloisField::new(13).unwrap();
        assert_eq!(f.primitive(), 2); // smallest primitive root mod 13
        for a in 0..13 {
            for b in 0..13 {
                assert_eq!(f.mul(a, b), a * b % 13);
                assert_eq!(f.add(a, b), (a + b) % 13);
            }
        }
    }

    #[test]
    fn rejects_non_prime_powers() {
        let e = GaloisField::new(6).unwrap_err();
        assert_eq!(
            e.to_string(),
            "galois: invalid q=6: not a prime power; the nearest prime powers are 5 or 7"
        );
    }
}
