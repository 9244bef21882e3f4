//! Noise: a random delay per (rank, op), drawn from a named distribution with an explicit seed.
//!
//! Draws are a pure function of `(seed, rank, op)` (a counter-based hash turned into uniform
//! variates), not of a generator's state, so a simulation gives the same result for the same
//! seed whatever order its engine happens to process events in.

use super::error::ModelError;
use super::spec::fmt_rate;
use crate::spec::{self, Form, Key, Spec, SpecError};
use crate::units::Time;
use std::fmt;

/// One noise distribution a spec string may name: what it accepts and how its spec is read.
#[derive(Clone, Copy, Debug)]
pub struct NoiseEntry {
    /// Its name, keys and an example.
    pub form: Form,
    /// Reads a spec that [`spec::parse`] matched to this entry.
    pub build: fn(&Spec) -> Result<NoiseSpec, SpecError>,
}

const NONE: Form = Form::named("none", "no noise");

const EXP: Form = Form::named("exp", "exponential delays")
    .with_keys(&[Key::new("mean", "mean delay (required)")])
    .with_example("exp:mean=100ns");

const UNIFORM: Form = Form::named("uniform", "uniform delays on [min, max)")
    .with_keys(&[
        Key::new("min", "smallest delay (default 0)"),
        Key::new("max", "largest delay (required)"),
    ])
    .with_example("uniform:min=0,max=1us");

const NORMAL: Form = Form::named("normal", "normal delays, truncated at 0")
    .with_keys(&[
        Key::new("mean", "mean of the untruncated normal (required)"),
        Key::new("sd", "standard deviation (required)"),
    ])
    .with_example("normal:mean=200ns,sd=50ns");

/// Every noise distribution [`parse_noise`] accepts, in the order error messages list them.
pub const NOISES: &[NoiseEntry] = &[
    NoiseEntry {
        form: NONE,
        build: |_| Ok(NoiseSpec::None),
    },
    NoiseEntry {
        form: EXP,
        build: |s| {
            Ok(NoiseSpec::Exp {
                mean: s.required("mean", spec::time_f64)?,
            })
        },
    },
    NoiseEntry {
        form: UNIFORM,
        build: |s| {
            let min = s.value("min", spec::time_f64)?.unwrap_or(0.0);
            let max = s.required("max", spec::time_f64)?;
            if min > max {
                let v = s.get("min").unwrap_or_default();
                return Err(s.bad("min", v, "min must not exceed max"));
            }
            Ok(NoiseSpec::Uniform { min, max })
        },
    },
    NoiseEntry {
        form: NORMAL,
        build: |s| {
            Ok(NoiseSpec::Normal {
                mean: s.required("mean", spec::time_f64)?,
                sd: s.required("sd", spec::time_f64)?,
            })
        },
    },
];

/// A noise distribution (times in picoseconds, `f64`). Parsed by [`parse_noise`];
/// [`fmt::Display`] prints a spec that parses back to an equal value.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum NoiseSpec {
    /// No noise (`none`).
    None,
    /// Exponential with the given mean (`exp:mean=100ns`).
    Exp {
        /// Mean delay (ps).
        mean: f64,
    },
    /// Uniform on `[min, max)` (`uniform:min=0,max=1us`; `min` defaults to 0).
    Uniform {
        /// Smallest delay (ps).
        min: f64,
        /// Largest delay (ps).
        max: f64,
    },
    /// Normal, truncated at 0: negative draws are drawn again (`normal:mean=1us,sd=200ns`).
    Normal {
        /// Mean of the untruncated normal (ps).
        mean: f64,
        /// Standard deviation (ps).
        sd: f64,
    },
}

/// Parses a noise spec: `none`, `exp:mean=100ns`, `uniform:min=0,max=1us`,
/// `normal:mean=1us,sd=200ns` (a bare number is ns; the entries of [`NOISES`]).
pub fn parse_noise(text: &str) -> Result<NoiseSpec, ModelError> {
    let (entry, s) = spec::parse("noise", NOISES, |e| &e.form, text)?;
    Ok((entry.build)(&s)?)
}

impl fmt::Display for NoiseSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoiseSpec::None => write!(f, "{}", NONE.name),
            NoiseSpec::Exp { mean } => write!(f, "{}:mean={}", EXP.name, fmt_rate(*mean)),
            NoiseSpec::Uniform { min, max } => write!(
                f,
                "{}:min={},max={}",
                UNIFORM.name,
                fmt_rate(*min),
                fmt_rate(*max)
            ),
            NoiseSpec::Normal { mean, sd } => write!(
                f,
                "{}:mean={},sd={}",
                NORMAL.name,
                fmt_rate(*mean),
                fmt_rate(*sd)
            ),
        }
    }
}

/// SplitMix64 finaliser: a bijective mix of 64 bits.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A uniform variate in the open interval (0, 1), a pure function of its arguments.
#[inline]
fn uniform01(seed: u64, rank: u32, op: u32, k: u32) -> f64 {
    let a = mix(seed ^ 0x9e37_79b9_7f4a_7c15);
    let b = mix(a ^ ((rank as u64) << 32 | op as u64));
    let c = mix(b ^ (k as u64).wrapping_mul(0xd1b5_4a32_d192_ed03));
    // 53 random bits, shifted by half a step so that neither 0 nor 1 occurs.
    ((c >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

impl NoiseSpec {
    /// Whether the spec adds any delay.
    pub fn is_none(&self) -> bool {
        matches!(self, NoiseSpec::None)
    }

    /// The delay for op `op` of rank `rank` under `seed`, in whole picoseconds (rounded).
    pub fn delay(&self, seed: u64, rank: u32, op: u32) -> Time {
        let ps = match *self {
            NoiseSpec::None => 0.0,
            NoiseSpec::Exp { mean } => -mean * (1.0 - uniform01(seed, rank, op, 0)).ln(),
            NoiseSpec::Uniform { min, max } => min + (max - min) * uniform01(seed, rank, op, 0),
            NoiseSpec::Normal { mean, sd } => {
                // Box–Muller; redraw negative values (truncation at 0), giving up after 64
                // tries (probability < 2^-64 unless the mean is far below 0).
                let mut x = 0.0;
                for k in 0..64u32 {
                    let u1 = uniform01(seed, rank, op, 2 * k);
                    let u2 = uniform01(seed, rank, op, 2 * k + 1);
                    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                    let v = mean + sd * z;
                    if v >= 0.0 {
                        x = v;
                        break;
                    }
                }
                x
            }
        };
        if ps.is_finite() && ps > 0.0 {
            ps.round().min(u64::MAX as f64 / 4.0) as Time
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_the_accepted_names_and_keys() {
        let err = |t: &str| match parse_noise(t).unwrap_err() {
            ModelError::Spec(e) => e,
            e => panic!("not a spec error: {e}"),
        };
        let e = err("gauss");
        assert_eq!(e.accepted(), vec!["none", "exp", "uniform", "normal"]);
        assert_eq!(
            e.to_string(),
            "unknown noise 'gauss'; accepted: none, exp, uniform, normal"
        );
        for (entry, keys) in NOISES.iter().zip(["none", "mean", "min, max", "mean, sd"]) {
            let name = entry.form.name;
            assert_eq!(
                err(&format!("{name}:zeta=1")).to_string(),
                format!(
                    "invalid noise spec '{name}:zeta=1': unknown key 'zeta' for {name}; \
                     accepted: {keys}"
                )
            );
            // Every example is canonical.
            assert_eq!(
                parse_noise(entry.form.example).unwrap().to_string(),
                entry.form.example
            );
        }
        assert_eq!(
            err("exp:mean=1,mean=2").to_string(),
            "invalid noise spec 'exp:mean=1,mean=2': key 'mean' given twice"
        );
    }

    #[test]
    fn uniform_variates_are_in_range_and_spread() {
        let mut sum = 0.0;
        for op in 0..10_000 {
            let u = uniform01(7, 3, op, 0);
            assert!(u > 0.0 && u < 1.0);
            sum += u;
        }
        let mean = sum / 10_000.0;
        assert!((mean - 0.5).abs() < 0.02, "{mean}");
    }

    #[test]
    fn exp_mean_is_close() {
        let n = NoiseSpec::Exp { mean: 1000.0 };
        let s: u64 = (0..20_000).map(|i| n.delay(1, i, 0)).sum();
        let mean = s as f64 / 20_000.0;
        assert!((mean - 1000.0).abs() < 40.0, "{mean}");
    }

    #[test]
    fn normal_is_truncated() {
        let n = NoiseSpec::Normal {
            mean: 0.0,
            sd: 1000.0,
        };
        // Half-normal mean is sd·sqrt(2/π) ≈ 797.9.
        let s: u64 = (0..20_000).map(|i| n.delay(5, 0, i)).sum();
        let mean = s as f64 / 20_000.0;
        assert!((mean - 797.9).abs() < 30.0, "{mean}");
    }
}
