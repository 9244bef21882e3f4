//! A collective's two entry points, declared once per collective: its whole schedule (GIL
//! released while generating) and one rank's program built alone (O(its own ops)), both from
//! the same arguments. A collective says how its arguments make the core's problem
//! ([`Binding`]); [`collective!`] declares the pair of functions from one argument list.

use hypercuboid_core::collectives::registry::{self, Context, Family};
use hypercuboid_core::schedule::{Dtype, Program, ScheduleError};
use pyo3::prelude::*;

use crate::args::RankArg;
use crate::errors::{Class, PyResultExt};
use crate::guard::{self, call};
use crate::program::PyProgram;
use crate::schedule::PySchedule;

/// A collective of the core as the binding takes it: its arguments after `algorithm` (and
/// `rank`) as converted, and what they make.
pub(crate) trait Binding: Family<Algorithm: Send, Problem: Send + Sync> {
    /// The converted arguments, in signature order (without `algorithm` and `rank`).
    type Args<'a>;
    /// Reads an algorithm spec as the collective's users write it.
    fn parse(text: &str) -> Result<Self::Algorithm, ScheduleError>;
    /// The core's problem of the arguments.
    fn problem(args: Self::Args<'_>) -> PyResult<Self::Problem>;
    /// `rank` when it is one of the problem's ranks, else the error naming the range.
    fn rank(problem: &Self::Problem, rank: RankArg) -> PyResult<u32>;
    /// The elements' dtype.
    fn dtype(problem: &Self::Problem) -> Dtype;
    /// The input and output lengths (elements) that rank `rank`'s program is checked against.
    fn lens(alg: &Self::Algorithm, problem: &Self::Problem, rank: u32) -> PyResult<(u64, u64)>;
}

/// The schedule of `algorithm` on the problem of `args` (GIL released while generating).
pub(crate) fn schedule<C: Binding>(
    py: Python<'_>,
    name: &str,
    algorithm: &str,
    args: C::Args<'_>,
) -> PyResult<PySchedule> {
    call(Class::Schedule, name, || {
        let alg = C::parse(algorithm).py()?;
        let p = C::problem(args)?;
        let s = guard::detach(py, move || {
            registry::generate::<C>(&alg, &p, &Context::default())
        })
        .py()?;
        Ok(PySchedule::new(s))
    })
}

/// The program of rank `rank` alone, checked against its buffers, as a `Program`.
pub(crate) fn program<C: Binding>(
    name: &str,
    algorithm: &str,
    rank: RankArg,
    args: C::Args<'_>,
) -> PyResult<PyProgram> {
    call(Class::Schedule, name, || {
        let alg = C::parse(algorithm).py()?;
        let p = C::problem(args)?;
        let rank = C::rank(&p, rank)?;
        let build =
            |out: &mut Program| registry::program::<C>(&alg, &p, &Context::default(), rank, out);
        PyProgram::built(rank, C::nranks(&p), C::dtype(&p), build, || {
            C::lens(&alg, &p, rank)
        })
    })
}

/// Declares a collective's two entry points from one argument list: `$schedule` (the Python
/// name `$name`), its whole schedule, and `$program`, one rank's program. Both take
/// `algorithm` and then the list, the program `rank` after the list's first argument. The
/// list is `Family: (first: Type, name: Type = [default], ...)`, each default in brackets.
macro_rules! collective {
    (
        $(#[doc = $sdoc:literal])*
        fn $schedule:ident as $name:literal;
        $(#[doc = $pdoc:literal])*
        fn $program:ident;
        $family:ty: (
            $first:ident: $first_ty:ty
            $(, $arg:ident: $ty:ty = [$($default:tt)*])* $(,)?
        )
    ) => {
        $(#[doc = $sdoc])*
        #[pyfunction(name = $name)]
        #[pyo3(signature = (algorithm, $first $(, $arg = $($default)*)*))]
        fn $schedule(
            py: Python<'_>,
            algorithm: crate::args::Text<crate::args::AlgorithmParam>,
            $first: $first_ty,
            $($arg: $ty,)*
        ) -> PyResult<crate::schedule::PySchedule> {
            let args = ($first, $($arg,)*);
            crate::collective::schedule::<$family>(py, $name, algorithm.as_str(), args)
        }

        $(#[doc = $pdoc])*
        #[pyfunction]
        #[pyo3(signature = (algorithm, $first, rank $(, $arg = $($default)*)*))]
        fn $program(
            algorithm: crate::args::Text<crate::args::AlgorithmParam>,
            $first: $first_ty,
            rank: crate::args::RankArg,
            $($arg: $ty,)*
        ) -> PyResult<crate::program::PyProgram> {
            let args = ($first, $($arg,)*);
            let name = stringify!($program);
            crate::collective::program::<$family>(name, algorithm.as_str(), rank, args)
        }
    };
}
