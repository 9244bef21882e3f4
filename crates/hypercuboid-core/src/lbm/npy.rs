//! Initial conditions from a `.npy` file: the global lattice as NumPy writes it with
//! `numpy.save(path, f)`, `f` a C-order `float64` array of shape `(X, Y, Z, 19)` (the 19 values of
//! a site in the order of [`super::d3q19::VELOCITIES`]; no halo): the logical layout, whatever the
//! [`super::Layout`] of the array it fills. Each rank reads only its block.
//!
//! The format (NumPy's `NEP 1`): the magic `\x93NUMPY`, a version byte pair, the header length
//! (2 bytes little-endian in version 1, 4 in versions 2 and 3), a header that is a Python dict
//! literal with `descr`, `fortran_order` and `shape`, then the data.

use super::d3q19::Q;
use super::{LbmError, Shape};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// Reads the block of the `.npy` file at `path` that belongs to the subdomain `shape` at
/// `offset` of the global `lattice` into the subdomain sites of `f` (halo layout).
pub fn read_npy(
    path: &str,
    f: &mut [f64],
    shape: Shape,
    offset: [usize; 3],
    lattice: [usize; 3],
) -> Result<(), LbmError> {
    shape.check_len("distribution", f.len())?;
    let fail = |message: String| LbmError::File {
        path: path.to_string(),
        message,
    };
    let mut file = File::open(path).map_err(|e| fail(format!("cannot open: {e}")))?;
    let data_start = header(&mut file, lattice).map_err(fail)?;
    let want = data_start + (lattice.iter().product::<usize>() * Q * 8) as u64;
    let len = file
        .metadata()
        .map_err(|e| fail(format!("cannot read: {e}")))?
        .len();
    if len < want {
        return Err(fail(format!(
            "holds {len} bytes, fewer than the {want} of its header's shape"
        )));
    }
    let mut row = vec![0u8; shape.nz * Q * 8];
    for i in 0..shape.nx {
        for j in 0..shape.ny {
            let site = ((offset[0] + i) * lattice[1] + offset[1] + j) * lattice[2] + offset[2];
            file.seek(SeekFrom::Start(data_start + (site * Q * 8) as u64))
                .and_then(|_| file.read_exact(&mut row))
                .map_err(|e| fail(format!("cannot read: {e}")))?;
            let s = shape.site(i, j, 0);
            let [_, _, sz, sq] = shape.strides();
            for (n, b) in row.chunks_exact(8).enumerate() {
                let (k, q) = (n / Q, n % Q);
                f[s + k * sz + q * sq] = f64::from_le_bytes(b.try_into().expect("8 bytes"));
            }
        }
    }
    Ok(())
}

/// Checks the header and returns the offset of the data.
fn header(file: &mut File, lattice: [usize; 3]) -> Result<u64, String> {
    let mut pre = [0u8; 8];
    file.read_exact(&mut pre)
        .map_err(|_| "not a .npy file (too short)".to_string())?;
    if &pre[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (no \\x93NUMPY magic)".to_string());
    }
    let (hlen, start) = match pre[6] {
        1 => {
            let mut b = [0u8; 2];
            file.read_exact(&mut b).map_err(|e| e.to_string())?;
            (u16::from_le_bytes(b) as usize, 10)
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            file.read_exact(&mut b).map_err(|e| e.to_string())?;
            (u32::from_le_bytes(b) as usize, 12)
        }
        v => {
            return Err(format!(
                ".npy version {v} is not supported; accepted: 1, 2, 3"
            ))
        }
    };
    // the header's length comes from the file: no buffer larger than the file holds
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    if (start + hlen) as u64 > len {
        return Err("truncated .npy header".to_string());
    }
    let mut h = vec![0u8; hlen];
    file.read_exact(&mut h)
        .map_err(|_| "truncated .npy header".to_string())?;
    let h = String::from_utf8_lossy(&h);
    let descr = value(&h, "descr").ok_or("the .npy header has no 'descr'")?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    if descr != "<f8" {
        return Err(format!(
            "dtype '{descr}' is not accepted; accepted: float64 little-endian ('<f8')"
        ));
    }
    let fortran = value(&h, "fortran_order").ok_or("the .npy header has no 'fortran_order'")?;
    if fortran != "False" {
        return Err("Fortran-order array is not accepted; accepted: C order".to_string());
    }
    let shape = value(&h, "shape").ok_or("the .npy header has no 'shape'")?;
    let dims: Vec<&str> = shape
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let want = [lattice[0], lattice[1], lattice[2], Q].map(|d| d.to_string());
    if dims != want {
        return Err(format!(
            "shape ({}) is not accepted; accepted: ({}) (the lattice and its 19 distributions)",
            dims.join(", "),
            want.join(", ")
        ));
    }
    Ok((start + hlen) as u64)
}

/// The text of `key`'s value in the header dict (up to the next top-level comma or brace).
fn value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let at = header
        .find(&format!("'{key}'"))
        .or_else(|| header.find(&format!("\"{key}\"")))?;
    let rest = header[at + key.len() + 2..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let mut depth = 0;
    for (n, ch) in rest.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(rest[..n].trim()),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write_npy(path: &std::path::Path, descr: &str, fortran: &str, shape: &str, data: &[f64]) {
        let mut h =
            format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': ({shape}), }}");
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(' ');
        }
        h.push('\n');
        let mut out = File::create(path).unwrap();
        out.write_all(b"\x93NUMPY\x01\x00").unwrap();
        out.write_all(&(h.len() as u16).to_le_bytes()).unwrap();
        out.write_all(h.as_bytes()).unwrap();
        for v in data {
            out.write_all(&v.to_le_bytes()).unwrap();
        }
    }

    #[test]
    fn each_rank_reads_its_block() {
        let dir = std::env::temp_dir().join(format!("hc-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("lattice.npy");
        let lattice = [4, 3, 5];
        let data: Vec<f64> = (0..4 * 3 * 5 * Q).map(|v| v as f64).collect();
        write_npy(&path, "<f8", "False", "4, 3, 5, 19", &data);
        let p = path.to_str().unwrap();
        let s = Shape::new(2, 3, 2).unwrap();
        let mut f = vec![-1.0; s.len()];
        read_npy(p, &mut f, s, [2, 0, 3], lattice).unwrap();
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..2 {
                    let g = (((2 + i) * 3 + j) * 5 + 3 + k) * Q;
                    assert_eq!(f[s.site(i, j, k) + 7], (g + 7) as f64);
                }
            }
        }
        assert_eq!(f[0], -1.0);
        let read_err = |f: &mut [f64]| read_npy(p, f, s, [0; 3], lattice).unwrap_err().to_string();
        let mut err = |descr: &str, fortran: &str, shape: &str| {
            write_npy(&path, descr, fortran, shape, &data);
            read_err(&mut f)
        };
        assert_eq!(
            err("<f4", "False", "4, 3, 5, 19"),
            format!("{p}: dtype '<f4' is not accepted; accepted: float64 little-endian ('<f8')")
        );
        assert_eq!(
            err("<f8", "True", "4, 3, 5, 19"),
            format!("{p}: Fortran-order array is not accepted; accepted: C order")
        );
        assert_eq!(
            err("<f8", "False", "4, 3, 5"),
            format!(
                "{p}: shape (4, 3, 5) is not accepted; accepted: (4, 3, 5, 19) (the lattice \
                 and its 19 distributions)"
            )
        );
        write_npy(&path, "<f8", "False", "4, 3, 5, 19", &data[..100]);
        assert_eq!(
            read_err(&mut f),
            format!("{p}: holds 928 bytes, fewer than the 9248 of its header's shape")
        );
        std::fs::write(&path, b"hello").unwrap();
        assert_eq!(
            read_err(&mut f),
            format!("{p}: not a .npy file (too short)")
        );
        // a version 2 header that claims 4 GiB: refused from the file's length, before any
        // buffer of that size (found by the fuzzer, fuzz/corpus/npy)
        std::fs::write(&path, b"\x93NUMPY\x02\x00\xff\xff\xff\xff{'descr': '<f8'}").unwrap();
        assert_eq!(read_err(&mut f), format!("{p}: truncated .npy header"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
