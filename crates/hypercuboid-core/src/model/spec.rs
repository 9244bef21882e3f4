//! Model specifications: the `NAME:key=value,...` strings users type, one table ([`MODELS`])
//! that the parser, the error messages, the CLI help and the Python names read, and the
//! canonical form printed back.

use super::error::ModelError;
use super::{LogGopsModel, PostalModel, TieOrder};
use crate::spec::{self, Choice, Choices, Form, Key, Spec, SpecError};
use crate::units::{format_time_exact, Time};
use std::fmt;

/// One cost model a spec string may name: what it accepts and how its spec is read.
#[derive(Clone, Copy, Debug)]
pub struct ModelEntry {
    /// Its name, keys and an example.
    pub form: Form,
    /// Reads a spec that [`spec::parse`] matched to this entry.
    pub build: fn(&Spec) -> Result<ModelSpec, SpecError>,
}

const GAMMA: Key = Key::new("gamma", "γ, time per reduced byte (default 0)");
const DELTA: Key = Key::new("delta", "δ, time per reduction (default 0)");
const BETA: Key = Key::new("beta", "β, time per byte sent (default 0)");

const POSTAL: Form = Form::named(
    "postal",
    "postal model: alpha + n·beta per message, one message at a time",
)
.with_keys(&[
    Key::new("alpha", "α, latency per message (default 0)"),
    BETA,
    GAMMA,
    DELTA,
])
.with_example("postal:alpha=1us,beta=0.4ns,gamma=0");

const PIPELINED: Form = Form::named(
    "pipelined",
    "pipelined postal model (Ruefenacht, Bull and Booth 2017): alpha_r + n·beta at \
     the sender, alpha_p overlapped",
)
.with_keys(&[
    Key::new(
        "alpha_p",
        "α_p, latency that overlaps with later sends (default 0)",
    ),
    Key::new(
        "alpha_r",
        "α_r, per-message cost serialised at the sender (default 0)",
    ),
    BETA,
    GAMMA,
    DELTA,
])
.with_example("pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0");

const LOGGOPS: Form = Form::named(
    "loggops",
    "LogGOPS with the semantics of LogGOPSim (Hoefler, Schneider and Lumsdaine 2010)",
)
.with_keys(&[
    Key::new("L", "wire latency (default 2500ns)"),
    Key::new("o", "CPU overhead per message (default 1500ns)"),
    Key::new("g", "NIC gap per message (default 1000ns)"),
    Key::new("G", "NIC gap per byte (default 6ns)"),
    Key::new("O", "CPU overhead per byte (default 0)"),
    Key::new(
        "S",
        "largest eager message, a size such as 65535 or 64KiB (default 65535)",
    ),
    GAMMA,
    DELTA,
    Key::new(
        "copy",
        "CPU time per copied byte: copies, and the packs and unpacks of halo exchanges \
         (default 0)",
    ),
    Key::new(
        "R",
        "extra latency of a message above S: the rendezvous handshake (default 0)",
    ),
    Key::new(
        "S2",
        "a second protocol switch, a size such as 256: a message above it takes R2 more \
         latency (a library's inline-send limit below S; default none)",
    ),
    Key::new("R2", "extra latency of a message above S2 (default 0)"),
    Key::new(
        "X",
        "how much longer a message waits at a rank that is sending at the same time: a send \
         holds its rank's receive path until its own message has arrived, plus X (default 0)",
    ),
    Key::new(
        "order",
        "issue order of the sends (and of the receives) one event frees on a rank: \
         program (as the program lists them, MPI's order; default) or gcc (a stock \
         LogGOPSim's std::sort, which permutes more than 16)",
    ),
])
.with_example("loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535");

/// The values of the `loggops` key `order`, the default first.
const ORDERS: Choices<TieOrder> = Choices::new(
    "order",
    &[
        Choice::new(
            "program",
            TieOrder::Stable,
            "as the program lists them (MPI's order)",
        ),
        Choice::new(
            "gcc",
            TieOrder::Libstdcxx,
            "a stock LogGOPSim's std::sort, which permutes more than 16",
        ),
    ],
);

/// Every model [`parse_model`] accepts, in the order error messages list them.
pub const MODELS: &[ModelEntry] = &[
    ModelEntry {
        form: POSTAL,
        build: postal,
    },
    ModelEntry {
        form: PIPELINED,
        build: pipelined,
    },
    ModelEntry {
        form: LOGGOPS,
        build: loggops,
    },
];

/// A cost model and its parameters, as parsed from a spec string by [`parse_model`]: the model
/// types themselves, which [`crate::sim::simulate`] runs and the closed forms and the schedule
/// search read.
///
/// Times are integer picoseconds ([`Time`]); per-byte rates are `f64` picoseconds per byte (the
/// cost of `n` bytes is rounded to the nearest picosecond once, see [`crate::units::per_byte`]).
/// Every model also has `gamma` (cost per reduced byte) and `delta` (fixed cost per reduction).
/// [`fmt::Display`] prints the canonical spec string, which parses back to an equal value: every
/// numeric parameter, and LogGOPS's `order` only when it is not the default (`order=gcc`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ModelSpec {
    /// Postal model: a message of `n` bytes costs `alpha + n·beta`; a rank sends one message at
    /// a time. Its `alpha_p` is 0 and its `alpha_r` is α (see [`PostalModel::postal`]).
    /// Spec `postal:alpha=1us,beta=0.4ns,gamma=0,delta=0`.
    Postal(PostalModel),
    /// Pipelined postal model (Ruefenacht, Bull and Booth, Parallel Computing 2017, section 3):
    /// `alpha_r + n·beta` serialised at the sender per message, `alpha_p` overlappable. A stage in
    /// which a rank sends to `b` peers costs `alpha_p + b·alpha_r` for small `n`.
    /// Spec `pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0,delta=0`.
    Pipelined(PostalModel),
    /// LogGOPS with the semantics of LogGOPSim (Hoefler, Schneider, Lumsdaine, HPDC 2010).
    /// Spec `loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535` (bare numbers are ns). Defaults are
    /// LogGOPSim's ([`LogGopsModel::default`]).
    LogGops(LogGopsModel),
}

impl ModelSpec {
    /// The model's name as typed in a spec (`postal`, `pipelined`, `loggops`).
    pub fn name(&self) -> &'static str {
        match self {
            ModelSpec::Postal(_) => POSTAL.name,
            ModelSpec::Pipelined(_) => PIPELINED.name,
            ModelSpec::LogGops(_) => LOGGOPS.name,
        }
    }

    /// LogGOPS with LogGOPSim's default parameters.
    pub fn loggops_default() -> ModelSpec {
        ModelSpec::LogGops(LogGopsModel::default())
    }
}

/// The time `key` gives, or `default`.
fn time(s: &Spec, key: &str, default: Time) -> Result<Time, SpecError> {
    Ok(s.value(key, spec::time)?.unwrap_or(default))
}

/// The time per byte `key` gives (picoseconds, `f64`), or `default`.
fn rate(s: &Spec, key: &str, default: f64) -> Result<f64, SpecError> {
    Ok(s.value(key, spec::time_f64)?.unwrap_or(default))
}

fn postal(s: &Spec) -> Result<ModelSpec, SpecError> {
    Ok(ModelSpec::Postal(PostalModel::postal(
        time(s, "alpha", 0)?,
        rate(s, "beta", 0.0)?,
        rate(s, "gamma", 0.0)?,
        time(s, "delta", 0)?,
    )))
}

fn pipelined(s: &Spec) -> Result<ModelSpec, SpecError> {
    Ok(ModelSpec::Pipelined(PostalModel {
        alpha_p: time(s, "alpha_p", 0)?,
        alpha_r: time(s, "alpha_r", 0)?,
        beta: rate(s, "beta", 0.0)?,
        gamma: rate(s, "gamma", 0.0)?,
        delta: time(s, "delta", 0)?,
    }))
}

fn loggops(s: &Spec) -> Result<ModelSpec, SpecError> {
    let d = LogGopsModel::default();
    Ok(ModelSpec::LogGops(LogGopsModel {
        latency: time(s, "L", d.latency)?,
        overhead: time(s, "o", d.overhead)?,
        gap: time(s, "g", d.gap)?,
        gap_per_byte: rate(s, "G", d.gap_per_byte)?,
        overhead_per_byte: rate(s, "O", d.overhead_per_byte)?,
        eager_limit: s.value("S", spec::size)?.unwrap_or(d.eager_limit),
        gamma: rate(s, "gamma", d.gamma)?,
        delta: time(s, "delta", d.delta)?,
        copy: rate(s, "copy", d.copy)?,
        rendezvous: time(s, "R", d.rendezvous)?,
        switch2: s.value("S2", spec::size)?.unwrap_or(d.switch2),
        switch2_latency: time(s, "R2", d.switch2_latency)?,
        crossing: time(s, "X", d.crossing)?,
        order: s.value("order", |v| ORDERS.read(v))?.unwrap_or(d.order),
    }))
}

/// Parses a model spec: `postal:alpha=1us,beta=0.4ns,gamma=0`,
/// `pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0`,
/// `loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535` (the entries of [`MODELS`]).
/// `loggops:...,order=gcc` issues ops freed together as a stock LogGOPSim build does
/// (default `order=program`, see [`LogGopsModel`]).
///
/// Times take a unit (`ps`, `ns`, `us`, `ms`, `s`; a bare number is ns); per-byte rates are
/// times per byte; `S` is a size (`65535`, `64KiB`). Every model accepts `gamma` (per reduced
/// byte) and `delta` (per reduction). Postal and pipelined parameters left out are 0; LogGOPS
/// parameters left out take LogGOPSim's defaults (L=2500, o=1500, g=1000, G=6, O=0, S=65535;
/// γ = δ = 0).
pub fn parse_model(text: &str) -> Result<ModelSpec, ModelError> {
    let (entry, s) = spec::parse("model", MODELS, |e| &e.form, text)?;
    Ok((entry.build)(&s)?)
}

/// Formats picoseconds (possibly fractional) so that [`crate::units::parse_time_f64`] reads
/// back the same `f64`: whole nanoseconds as `ns`, anything else as `ps` in the shortest exact
/// decimal.
pub(crate) fn fmt_rate(ps: f64) -> String {
    if ps == 0.0 {
        return "0".into();
    }
    if ps.fract() == 0.0 && ps < 9.0e15 {
        return format_time_exact(ps as u64);
    }
    format!("{ps}ps")
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        match self {
            ModelSpec::Postal(m) => write!(
                f,
                "{name}:alpha={},beta={},gamma={},delta={}",
                format_time_exact(m.alpha_r),
                fmt_rate(m.beta),
                fmt_rate(m.gamma),
                format_time_exact(m.delta)
            ),
            ModelSpec::Pipelined(m) => write!(
                f,
                "{name}:alpha_p={},alpha_r={},beta={},gamma={},delta={}",
                format_time_exact(m.alpha_p),
                format_time_exact(m.alpha_r),
                fmt_rate(m.beta),
                fmt_rate(m.gamma),
                format_time_exact(m.delta)
            ),
            ModelSpec::LogGops(m) => {
                write!(
                    f,
                    "{name}:L={},o={},g={},G={},O={},S={},gamma={},delta={}",
                    format_time_exact(m.latency),
                    format_time_exact(m.overhead),
                    format_time_exact(m.gap),
                    fmt_rate(m.gap_per_byte),
                    fmt_rate(m.overhead_per_byte),
                    m.eager_limit,
                    fmt_rate(m.gamma),
                    format_time_exact(m.delta)
                )?;
                if m.copy != 0.0 {
                    write!(f, ",copy={}", fmt_rate(m.copy))?;
                }
                if m.rendezvous != 0 {
                    write!(f, ",R={}", format_time_exact(m.rendezvous))?;
                }
                if m.switch2 != LogGopsModel::default().switch2 {
                    write!(f, ",S2={}", m.switch2)?;
                }
                if m.switch2_latency != 0 {
                    write!(f, ",R2={}", format_time_exact(m.switch2_latency))?;
                }
                if m.crossing != 0 {
                    write!(f, ",X={}", format_time_exact(m.crossing))?;
                }
                if m.order != LogGopsModel::default().order {
                    write!(f, ",order={}", ORDERS.name(m.order))?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> SpecError {
        match parse_model(text).unwrap_err() {
            ModelError::Spec(e) => e,
            e => panic!("not a spec error: {e}"),
        }
    }

    #[test]
    fn the_table_is_the_accepted_names_and_keys() {
        let e = err("hockney");
        assert_eq!(e.accepted(), vec!["postal", "pipelined", "loggops"]);
        assert_eq!(
            e.to_string(),
            "unknown model 'hockney'; accepted: postal, pipelined, loggops"
        );
        for (entry, keys) in MODELS.iter().zip([
            "alpha, beta, gamma, delta",
            "alpha_p, alpha_r, beta, gamma, delta",
            "L, o, g, G, O, S, gamma, delta, copy, R, S2, R2, X, order",
        ]) {
            let name = entry.form.name;
            let e = err(&format!("{name}:zeta=1"));
            assert_eq!(e.accepted().join(", "), keys);
            assert_eq!(
                e.to_string(),
                format!(
                    "invalid model spec '{name}:zeta=1': unknown key 'zeta' for {name}; \
                     accepted: {keys}"
                )
            );
            let first = entry.form.keys[0].name;
            assert_eq!(
                err(&format!("{name}:{first}=1,{first}=2")).to_string(),
                format!(
                    "invalid model spec '{name}:{first}=1,{first}=2': key '{first}' given twice"
                )
            );
            // Every example parses, and to the entry it is the example of.
            assert_eq!(parse_model(entry.form.example).unwrap().name(), name);
        }
    }

    #[test]
    fn loggops_order_is_program_by_default_and_gcc_on_request() {
        let order = |text: &str| match parse_model(text).unwrap() {
            ModelSpec::LogGops(m) => m.order,
            m => panic!("not loggops: {m}"),
        };
        assert_eq!(order("loggops"), TieOrder::Stable);
        assert_eq!(order("loggops:order=program"), TieOrder::Stable);
        assert_eq!(order("loggops:L=3000,order=gcc"), TieOrder::Libstdcxx);
        assert_eq!(
            err("loggops:order=stable").to_string(),
            "invalid model spec 'loggops:order=stable': order=stable: accepted: program, gcc"
        );
        // A key's value named in a table matches without regard to case (spec::answers_to).
        assert_eq!(order("loggops:order=GCC"), TieOrder::Libstdcxx);
    }

    #[test]
    fn loggops_order_prints_only_when_not_the_default() {
        let d = "loggops:L=2500ns,o=1500ns,g=1us,G=6ns,O=0,S=65535,gamma=0,delta=0";
        assert_eq!(parse_model("loggops").unwrap().to_string(), d);
        assert_eq!(parse_model("loggops:order=program").unwrap().to_string(), d);
        let gcc = parse_model("loggops:order=gcc").unwrap();
        assert_eq!(gcc.to_string(), format!("{d},order=gcc"));
        assert_eq!(parse_model(&gcc.to_string()).unwrap(), gcc);
    }
}
