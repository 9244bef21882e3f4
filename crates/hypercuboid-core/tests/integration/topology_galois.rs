//! GF(p^m) arithmetic: field axioms, checked exhaustively.

use hypercuboid_core::topology::galois::GaloisField;

fn axioms(q: u64) {
    let f = GaloisField::new(q).unwrap();
    let q = q as u32;
    assert_eq!(f.order(), q);
    for a in 0..q {
        assert_eq!(f.add(a, 0), a);
        assert_eq!(f.mul(a, 1), a);
        assert_eq!(f.mul(a, 0), 0);
        assert_eq!(f.add(a, f.neg(a)), 0, "q={q} a={a}");
        assert_eq!(f.sub(a, a), 0);
        if a != 0 {
            assert_eq!(f.mul(a, f.inv(a).unwrap()), 1, "q={q} a={a}");
        }
        for b in 0..q {
            assert!(f.add(a, b) < q && f.mul(a, b) < q);
            assert_eq!(f.add(a, b), f.add(b, a));
            assert_eq!(f.mul(a, b), f.mul(b, a));
            assert_eq!(f.add(f.sub(a, b), b), a);
            for c in 0..q {
                assert_eq!(f.add(f.add(a, b), c), f.add(a, f.add(b, c)));
                assert_eq!(f.mul(f.mul(a, b), c), f.mul(a, f.mul(b, c)));
                assert_eq!(f.mul(a, f.add(b, c)), f.add(f.mul(a, b), f.mul(a, c)));
            }
        }
    }
    assert_eq!(f.inv(0), None);
    // ξ is primitive: its powers run through every nonzero element once.
    let mut seen = vec![false; q as usize];
    for i in 0..q - 1 {
        let x = f.xi_pow(i as u64);
        assert!(!seen[x as usize], "q={q}: ξ^{i} repeats");
        seen[x as usize] = true;
        assert_eq!(f.log(x), Some(i));
    }
    assert_eq!(f.xi_pow(q as u64 - 1), 1);
}

#[test]
fn field_axioms_prime_powers() {
    for q in [4, 8, 9, 16, 25, 27] {
        axioms(q);
    }
}

#[test]
fn field_axioms_primes() {
    for q in [2, 3, 5, 7, 13] {
        axioms(q);
    }
}

#[test]
fn characteristic_and_degree() {
    let f = GaloisField::new(27).unwrap();
    assert_eq!((f.characteristic(), f.degree()), (3, 3));
    // Characteristic 3: a + a + a = 0.
    for a in 0..27 {
        assert_eq!(f.add(f.add(a, a), a), 0);
    }
    let f = GaloisField::new(16).unwrap();
    assert_eq!((f.characteristic(), f.degree()), (2, 4));
    assert_eq!(f.modulus().len(), 4);
}
