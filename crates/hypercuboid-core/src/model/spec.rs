//! Model specifications: the `NAME:key=value,...` strings users type, parsed and printed back.

use super::error::ModelError;
use crate::units::{parse_time, parse_time_f64, Time};
use std::fmt;

/// Names of the models, in the order error messages list them.
pub const MODEL_NAMES: &str = "postal, pipelined, loggops";

const POSTAL_KEYS: &str = "alpha, beta, gamma, delta";
const PIPELINED_KEYS: &str = "alpha_p, alpha_r, beta, gamma, delta";
const LOGGOPS_KEYS: &str = "L, o, g, G, O, S, gamma, delta";

/// A cost model and its parameters, as parsed from a spec string by [`parse_model`].
///
/// Times are integer picoseconds ([`Time`]); per-byte rates are `f64` picoseconds per byte (the
/// cost of `n` bytes is rounded to the nearest picosecond once, see [`crate::units::per_byte`]).
/// Every model also has `gamma` (cost per reduced byte) and `delta` (fixed cost per reduction).
/// [`fmt::Display`] prints the canonical spec string, which parses back to an equal value.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ModelSpec {
    /// Postal model: a message of `n` bytes costs `alpha + n·beta`; a rank sends one message at
    /// a time. Spec `postal:alpha=1us,beta=0.4ns,gamma=0,delta=0`.
    Postal {
        /// α, latency per message.
        alpha: Time,
        /// β, time per byte (ps/byte).
        beta: f64,
        /// γ, time per reduced byte (ps/byte).
        gamma: f64,
        /// δ, fixed time per reduction.
        delta: Time,
    },
    /// Pipelined postal model (Ruefenacht, Bull and Booth, Parallel Computing 2017, section 3):
    /// `alpha_r + n·beta` serialised at the sender per message, `alpha_p` overlappable. A stage in
    /// which a rank sends to `b` peers costs `alpha_p + b·alpha_r` for small `n`.
    /// Spec `pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0,delta=0`.
    Pipelined {
        /// α_p, latency that overlaps with later sends.
        alpha_p: Time,
        /// α_r, per-message issue cost, serialised at the sender.
        alpha_r: Time,
        /// β, time per byte (ps/byte).
        beta: f64,
        /// γ, time per reduced byte (ps/byte).
        gamma: f64,
        /// δ, fixed time per reduction.
        delta: Time,
    },
    /// LogGOPS with the semantics of LogGOPSim (Hoefler, Schneider, Lumsdaine, HPDC 2010).
    /// Spec `loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535` (bare numbers are ns). Defaults are
    /// LogGOPSim's: L=2500ns, o=1500ns, g=1000ns, G=6ns, O=0, S=65535.
    LogGops {
        /// `L`, wire latency.
        latency: Time,
        /// `o`, CPU overhead per message (sender and receiver).
        overhead: Time,
        /// `g`, NIC gap per message.
        gap: Time,
        /// `G`, NIC gap per byte (ps/byte).
        gap_per_byte: f64,
        /// `O`, CPU overhead per byte (ps/byte).
        overhead_per_byte: f64,
        /// `S`, largest eager message in bytes; larger messages use rendezvous.
        eager_limit: u64,
        /// γ, time per reduced byte (ps/byte); 0 by default.
        gamma: f64,
        /// δ, fixed time per reduction; 0 by default.
        delta: Time,
    },
}

impl ModelSpec {
    /// The model's name as typed in a spec (`postal`, `pipelined`, `loggops`).
    pub fn name(&self) -> &'static str {
        match self {
            ModelSpec::Postal { .. } => "postal",
            ModelSpec::Pipelined { .. } => "pipelined",
            ModelSpec::LogGops { .. } => "loggops",
        }
    }

    /// LogGOPS with LogGOPSim's default parameters.
    pub fn loggops_default() -> ModelSpec {
        ModelSpec::LogGops {
            latency: 2_500_000,
            overhead: 1_500_000,
            gap: 1_000_000,
            gap_per_byte: 6_000.0,
            overhead_per_byte: 0.0,
            eager_limit: 65_535,
            gamma: 0.0,
            delta: 0,
        }
    }
}

/// A spec's name and its `(key, value)` pairs.
pub(crate) type SplitSpec<'a> = (&'a str, Vec<(&'a str, &'a str)>);

/// Splits `name:k=v,k=v` into the name and its `(key, value)` pairs.
pub(crate) fn split_spec(spec: &str) -> Result<SplitSpec<'_>, ModelError> {
    let malformed = |reason: &str| ModelError::Malformed {
        spec: spec.to_string(),
        reason: reason.to_string(),
    };
    let t = spec.trim();
    let (name, rest) = match t.split_once(':') {
        Some((n, r)) => (n.trim(), Some(r)),
        None => (t, None),
    };
    if name.is_empty() {
        return Err(malformed(
            "empty name; expected NAME or NAME:key=value,key=value",
        ));
    }
    let mut pairs = Vec::new();
    if let Some(rest) = rest {
        if rest.trim().is_empty() {
            return Err(malformed("nothing after ':'; expected key=value,key=value"));
        }
        for item in rest.split(',') {
            let item = item.trim();
            let Some((k, v)) = item.split_once('=') else {
                return Err(malformed(&format!(
                    "'{item}' is not key=value; expected NAME:key=value,key=value"
                )));
            };
            let (k, v) = (k.trim(), v.trim());
            if k.is_empty() {
                return Err(malformed(&format!("'{item}' has no key")));
            }
            pairs.push((k, v));
        }
    }
    Ok((name, pairs))
}

/// Rejects keys given twice.
pub(crate) fn check_duplicates(
    model: &'static str,
    pairs: &[(&str, &str)],
) -> Result<(), ModelError> {
    for (i, (k, _)) in pairs.iter().enumerate() {
        if pairs[..i].iter().any(|(k2, _)| k2 == k) {
            return Err(ModelError::DuplicateParameter {
                model,
                key: k.to_string(),
            });
        }
    }
    Ok(())
}

pub(crate) fn time_value(model: &'static str, key: &str, value: &str) -> Result<Time, ModelError> {
    parse_time(value).map_err(|e| ModelError::BadValue {
        model,
        key: key.to_string(),
        value: value.to_string(),
        reason: e.reason,
    })
}

pub(crate) fn rate_value(model: &'static str, key: &str, value: &str) -> Result<f64, ModelError> {
    parse_time_f64(value).map_err(|e| ModelError::BadValue {
        model,
        key: key.to_string(),
        value: value.to_string(),
        reason: e.reason,
    })
}

fn bytes_value(model: &'static str, key: &str, value: &str) -> Result<u64, ModelError> {
    value.parse::<u64>().map_err(|_| ModelError::BadValue {
        model,
        key: key.to_string(),
        value: value.to_string(),
        reason: "expected a whole number of bytes (e.g. 65535)".into(),
    })
}

/// Parses a model spec: `postal:alpha=1us,beta=0.4ns,gamma=0`,
/// `pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0`,
/// `loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535`.
///
/// Times take a unit (`ps`, `ns`, `us`, `ms`, `s`; a bare number is ns); per-byte rates are
/// times per byte; `S` is bytes. Every model accepts `gamma` (per reduced byte) and `delta`
/// (per reduction). Postal and pipelined parameters left out are 0; LogGOPS parameters left out
/// take LogGOPSim's defaults (L=2500, o=1500, g=1000, G=6, O=0, S=65535; γ = δ = 0).
pub fn parse_model(spec: &str) -> Result<ModelSpec, ModelError> {
    let (name, pairs) = split_spec(spec)?;
    match name {
        "postal" => {
            const M: &str = "postal";
            check_duplicates(M, &pairs)?;
            let (mut alpha, mut beta, mut gamma, mut delta) = (0, 0.0, 0.0, 0);
            for (k, v) in pairs {
                match k {
                    "alpha" => alpha = time_value(M, k, v)?,
                    "beta" => beta = rate_value(M, k, v)?,
                    "gamma" => gamma = rate_value(M, k, v)?,
                    "delta" => delta = time_value(M, k, v)?,
                    _ => return Err(unknown_key(M, k, POSTAL_KEYS)),
                }
            }
            Ok(ModelSpec::Postal {
                alpha,
                beta,
                gamma,
                delta,
            })
        }
        "pipelined" => {
            const M: &str = "pipelined";
            check_duplicates(M, &pairs)?;
            let (mut alpha_p, mut alpha_r, mut beta, mut gamma, mut delta) = (0, 0, 0.0, 0.0, 0);
            for (k, v) in pairs {
                match k {
                    "alpha_p" => alpha_p = time_value(M, k, v)?,
                    "alpha_r" => alpha_r = time_value(M, k, v)?,
                    "beta" => beta = rate_value(M, k, v)?,
                    "gamma" => gamma = rate_value(M, k, v)?,
                    "delta" => delta = time_value(M, k, v)?,
                    _ => return Err(unknown_key(M, k, PIPELINED_KEYS)),
                }
            }
            Ok(ModelSpec::Pipelined {
                alpha_p,
                alpha_r,
                beta,
                gamma,
                delta,
            })
        }
        "loggops" => {
            const M: &str = "loggops";
            check_duplicates(M, &pairs)?;
            let mut spec = ModelSpec::loggops_default();
            let ModelSpec::LogGops {
                latency,
                overhead,
                gap,
                gap_per_byte,
                overhead_per_byte,
                eager_limit,
                gamma,
                delta,
            } = &mut spec
            else {
                unreachable!()
            };
            for (k, v) in pairs {
                match k {
                    "L" => *latency = time_value(M, k, v)?,
                    "o" => *overhead = time_value(M, k, v)?,
                    "g" => *gap = time_value(M, k, v)?,
                    "G" => *gap_per_byte = rate_value(M, k, v)?,
                    "O" => *overhead_per_byte = rate_value(M, k, v)?,
                    "S" => *eager_limit = bytes_value(M, k, v)?,
                    "gamma" => *gamma = rate_value(M, k, v)?,
                    "delta" => *delta = time_value(M, k, v)?,
                    _ => return Err(unknown_key(M, k, LOGGOPS_KEYS)),
                }
            }
            Ok(spec)
        }
        _ => Err(ModelError::UnknownModel {
            what: "model",
            name: name.to_string(),
            accepted: MODEL_NAMES,
        }),
    }
}

fn unknown_key(model: &'static str, key: &str, accepted: &'static str) -> ModelError {
    ModelError::UnknownParameter {
        model,
        key: key.to_string(),
        accepted,
    }
}

/// Formats whole picoseconds with the largest unit that represents them exactly (`1us`,
/// `1500ns`, `400ps`, `0`).
pub(crate) fn fmt_time(t: Time) -> String {
    if t == 0 {
        return "0".into();
    }
    for (unit, scale) in [
        ("s", 1_000_000_000_000u64),
        ("ms", 1_000_000_000),
        ("us", 1_000_000),
        ("ns", 1_000),
    ] {
        if t % scale == 0 {
            return format!("{}{unit}", t / scale);
        }
    }
    format!("{t}ps")
}

/// Formats picoseconds (possibly fractional) so that [`parse_time_f64`] reads back the same
/// `f64`: whole nanoseconds as `ns`, anything else as `ps` in the shortest exact decimal.
pub(crate) fn fmt_rate(ps: f64) -> String {
    if ps == 0.0 {
        return "0".into();
    }
    if ps.fract() == 0.0 && ps < 9.0e15 {
        return fmt_time(ps as u64);
    }
    format!("{ps}ps")
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSpec::Postal {
                alpha,
                beta,
                gamma,
                delta,
            } => write!(
                f,
                "postal:alpha={},beta={},gamma={},delta={}",
                fmt_time(*alpha),
                fmt_rate(*beta),
                fmt_rate(*gamma),
                fmt_time(*delta)
            ),
            ModelSpec::Pipelined {
                alpha_p,
                alpha_r,
                beta,
                gamma,
                delta,
            } => write!(
                f,
                "pipelined:alpha_p={},alpha_r={},beta={},gamma={},delta={}",
                fmt_time(*alpha_p),
                fmt_time(*alpha_r),
                fmt_rate(*beta),
                fmt_rate(*gamma),
                fmt_time(*delta)
            ),
            ModelSpec::LogGops {
                latency,
                overhead,
                gap,
                gap_per_byte,
                overhead_per_byte,
                eager_limit,
                gamma,
                delta,
            } => write!(
                f,
                "loggops:L={},o={},g={},G={},O={},S={},gamma={},delta={}",
                fmt_time(*latency),
                fmt_time(*overhead),
                fmt_time(*gap),
                fmt_rate(*gap_per_byte),
                fmt_rate(*overhead_per_byte),
                eager_limit,
                fmt_rate(*gamma),
                fmt_time(*delta)
            ),
        }
    }
}
