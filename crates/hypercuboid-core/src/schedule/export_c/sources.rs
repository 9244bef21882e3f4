//! The native runner's C sources (`native/` in the repository), embedded so that every consumer
//! builds the same code: the Python package compiles them against the MPI mpi4py loaded, the C
//! export puts them in the routines it writes, the PMPI library links them. `hc_codes.h` is
//! generated from the encoding's codes ([`crate::schedule::columns::c_codes_header`]).
//!
//! They live here, below the export that inlines them, so that the dependency runs one way:
//! [`crate::native`] re-exports them for the binding and the C API.

/// `hc_runner.h`: the runner's interface.
pub const RUNNER_H: &str = include_str!("../../../../../native/hc_runner.h");

/// `hc_runner.c`: the runner.
pub const RUNNER_C: &str = include_str!("../../../../../native/hc_runner.c");

/// Every file the runner needs, `(name, text)`: `hc_codes.h`, `hc_runner.h`, `hc_runner.c`.
pub fn sources() -> Vec<(&'static str, String)> {
    vec![
        ("hc_codes.h", crate::schedule::columns::c_codes_header()),
        ("hc_runner.h", RUNNER_H.to_string()),
        ("hc_runner.c", RUNNER_C.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_runner_includes_the_generated_codes() {
        let s = super::sources();
        assert_eq!(
            s.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            ["hc_codes.h", "hc_runner.h", "hc_runner.c"]
        );
        assert!(super::RUNNER_H.contains("#include \"hc_codes.h\""));
        assert!(super::RUNNER_C.contains("#include \"hc_runner.h\""));
    }
}
