//! Arguments converted at the edge: each newtype extracts one kind of argument (a rank count,
//! an element count, a dtype, a reduction op, a spec string) from a Python object, so that a
//! bad value's message is written once, here, and names the parameter:
//! `nranks="4"` raises `TypeError: nranks: expected an int, got str '4'`, `nranks=True` is
//! refused (a bool is not a count), `count=nan` is refused, `algorithm=123` names `algorithm`.

use std::marker::PhantomData;

use hypercuboid_core::schedule::{Dtype, ReduceOp, ScheduleError, MAX_RANKS};
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};

use crate::errors::{Class, PyResultExt};

/// Characters of an offending value quoted in a message.
const QUOTE: usize = 40;

/// `name: expected <what>, got <type> <repr>` (the repr cut to a bounded prefix).
fn type_error(name: &str, what: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    let ty = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into());
    let repr = obj
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!(
        "{name}: expected {what}, got {ty} {}",
        bounded(repr)
    ))
}

/// `text` cut to a bounded prefix (`...` marks the cut), as a message quotes a value.
fn bounded(text: String) -> String {
    if text.chars().count() > QUOTE {
        format!("{}...", text.chars().take(QUOTE).collect::<String>())
    } else {
        text
    }
}

/// An int argument (an `int` or an integer with `__index__`, such as NumPy's; not a bool,
/// not a float), as an `i128`; `None` where it is beyond `i128`'s range (the caller's range
/// check refuses it).
fn int(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Option<i128>> {
    if obj.is_instance_of::<PyBool>() {
        return Err(type_error(name, "an int", obj));
    }
    match obj.extract::<i128>() {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => Ok(None),
        Err(_) => Err(type_error(name, "an int", obj)),
    }
}

/// A parameter's name, for the messages of [`Text`].
pub(crate) trait Param {
    /// The name as the Python signature spells it.
    const NAME: &'static str;
}

macro_rules! params {
    ($($ty:ident = $name:literal),* $(,)?) => {$(
        #[doc = concat!("The `", $name, "` parameter.")]
        #[derive(Debug)]
        pub(crate) struct $ty;
        impl Param for $ty {
            const NAME: &'static str = $name;
        }
    )*};
}

params! {
    AlgorithmParam = "algorithm",
    ModelParam = "model",
    NoiseParam = "noise",
    RoutingParam = "routing",
    LevelParam = "level",
    MappingParam = "mapping",
    NicParam = "nic",
    TrafficParam = "traffic",
    SpecParam = "spec",
    SeedParam = "seed",
    EagerLimitParam = "eager_limit",
    MaxProblemsParam = "max_problems",
    KParam = "k",
    SizesParam = "sizes",
    RanksParam = "ranks",
    ThreadsParam = "threads",
    RankParam = "rank",
}

/// An unsigned integer type an argument converts to, with its largest value as a person reads
/// it.
pub(crate) trait Unsigned: TryFrom<i128> + Copy {
    /// `2^64 - 1`.
    const MAX_TEXT: &'static str;
}

impl Unsigned for u64 {
    const MAX_TEXT: &'static str = "2^64 - 1";
}

impl Unsigned for usize {
    const MAX_TEXT: &'static str = "2^64 - 1";
}

impl Unsigned for u32 {
    const MAX_TEXT: &'static str = "2^32 - 1";
}

/// An unsigned int argument named by `P` (a seed, a limit): a negative or too large value is
/// refused with the parameter's name and the accepted range (a `ScheduleError`, a
/// `ValueError`), not a bare `OverflowError`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Whole<P, T>(pub(crate) T, PhantomData<P>);

impl<P, T> Whole<P, T> {
    /// The value as a signature's default.
    pub(crate) const fn of(value: T) -> Self {
        Whole(value, PhantomData)
    }
}

impl<'a, 'py, P: Param, T: Unsigned> FromPyObject<'a, 'py> for Whole<P, T> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let obj = obj.to_owned();
        let shown = match int(P::NAME, &obj)? {
            Some(n) => match T::try_from(n) {
                Ok(v) => return Ok(Whole::of(v)),
                Err(_) => n.to_string(),
            },
            None => bounded(obj.str()?.to_string()),
        };
        Err(Class::Schedule.err(format!(
            "invalid {} {shown}: accepted 0 to {}",
            P::NAME,
            T::MAX_TEXT
        )))
    }
}

/// A str argument (an algorithm, a model or another spec), parsed by the core in the body.
#[derive(Debug)]
pub(crate) struct Text<P: Param>(pub String, PhantomData<P>);

impl<P: Param> Text<P> {
    /// The argument `text` (a signature's default).
    pub(crate) fn of(text: &str) -> Self {
        Text(text.to_string(), PhantomData)
    }

    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'a, 'py, P: Param> FromPyObject<'a, 'py> for Text<P> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let obj = obj.to_owned();
        let s = obj
            .cast::<PyString>()
            .map_err(|_| type_error(P::NAME, "a str", &obj))?;
        Ok(Text(s.to_str()?.to_string(), PhantomData))
    }
}

/// `nranks`: a rank count, 1 ..= the core's `MAX_RANKS` (refused in the core's words).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NRanks(pub u32);

impl<'a, 'py> FromPyObject<'a, 'py> for NRanks {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let obj = obj.to_owned();
        let reason = format!("a schedule has 1 to {MAX_RANKS} ranks");
        match int("nranks", &obj)? {
            Some(n) if (1..=MAX_RANKS as i128).contains(&n) => Ok(NRanks(n as u32)),
            Some(n) if (0..=u64::MAX as i128).contains(&n) => Err(ScheduleError::BadRankCount {
                nranks: n as u64,
                reason,
            })
            .py(),
            Some(n) => Err(Class::Schedule.err(format!("invalid number of ranks {n}: {reason}"))),
            None => Err(Class::Schedule.err(format!(
                "invalid number of ranks {}: {reason}",
                bounded(obj.str()?.to_string())
            ))),
        }
    }
}

/// `count`: elements, an int >= 0 that fits 64 bits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Count(pub u64);

impl<'a, 'py> FromPyObject<'a, 'py> for Count {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let obj = obj.to_owned();
        match int("count", &obj)? {
            Some(n) if (0..=u64::MAX as i128).contains(&n) => Ok(Count(n as u64)),
            Some(n) if n < 0 => {
                Err(Class::Schedule.err(format!("invalid count {n}: must be >= 0")))
            }
            _ => Err(Class::Schedule.err(format!(
                "invalid count {}: at most 2^64 - 1",
                bounded(obj.str()?.to_string())
            ))),
        }
    }
}

/// `rank`: an int; its range is checked against the ranks of what it indexes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RankArg(pub i128);

impl RankArg {
    /// The rank when it is one of `nranks` (0 ..= `nranks - 1`), else a `ScheduleError` whose
    /// message `refused` writes from the rank and the last one.
    pub(crate) fn within(
        self,
        nranks: u32,
        refused: impl FnOnce(i128, u32) -> String,
    ) -> PyResult<u32> {
        match u32::try_from(self.0) {
            Ok(r) if r < nranks => Ok(r),
            _ => Err(Class::Schedule.err(refused(self.0, nranks - 1))),
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for RankArg {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let obj = obj.to_owned();
        Ok(RankArg(int("rank", &obj)?.unwrap_or(i128::MAX)))
    }
}

/// A name the core parses: the newtype `$ty` of `$core` read from a str argument `$name`.
macro_rules! parsed {
    ($(#[$doc:meta])* $ty:ident($core:ty) = $param:ident $name:literal, $parse:path) => {
        params! { $param = $name }

        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub(crate) struct $ty(pub(crate) $core);

        impl<'a, 'py> FromPyObject<'a, 'py> for $ty {
            type Error = PyErr;

            fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
                let t = Text::<$param>::extract(obj)?;
                Ok($ty($parse(t.as_str()).py()?))
            }
        }
    };
}

parsed! {
    /// `dtype`: a dtype name the core accepts.
    DtypeArg(Dtype) = DtypeName "dtype", Dtype::parse
}

parsed! {
    /// `op`: a reduction op name the core accepts.
    OpArg(ReduceOp) = OpName "op", ReduceOp::parse
}
