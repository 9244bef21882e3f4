//! The STREAM triad `a = b + s·c` (McCalpin's STREAM benchmark, its fourth kernel), the memory
//! bandwidth that the kernel's roofline is drawn against: it moves 24 bytes per element (two
//! reads and a write), counted as STREAM counts them.

use super::LbmError;

/// Bytes the triad moves per element.
pub const TRIAD_BYTES_PER_ELEMENT: usize = 24;

/// `a[i] = b[i] + s · c[i]` for every element; the three slices have one length.
pub fn triad(a: &mut [f64], b: &[f64], c: &[f64], s: f64) -> Result<(), LbmError> {
    if b.len() != a.len() || c.len() != a.len() {
        return Err(LbmError::TriadLengths {
            lengths: [a.len(), b.len(), c.len()],
        });
    }
    for ((x, y), z) in a.iter_mut().zip(b).zip(c) {
        *x = y + s * z;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triad_of_three_arrays() {
        let (b, c) = (vec![1.0, 2.0, 3.0], vec![0.5, 0.25, 2.0]);
        let mut a = vec![0.0; 3];
        triad(&mut a, &b, &c, 3.0).unwrap();
        assert_eq!(a, [2.5, 2.75, 9.0]);
        assert_eq!(
            triad(&mut a, &b, &c[..2], 3.0).unwrap_err().to_string(),
            "triad arrays of 3, 3 and 2 elements; accepted: three arrays of one length"
        );
    }
}
