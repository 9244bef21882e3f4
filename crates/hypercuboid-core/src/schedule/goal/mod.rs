//! GOAL text import and export (LogGOPSim's `txt2bin` grammar) and the lossless hypercuboid text
//! form, a superset of GOAL that keeps data semantics.
//!
//! # GOAL as `txt2bin` reads it
//! Learnt from LogGOPSim's `src/LogGOPSim/txt2bin.re` (re2c scanner), `src/LogGOPSim/Goal.hpp`,
//! the example schedules `binary_tree_16.goal` / `dissemination_16.goal` and Schedgen2's
//! `src/Schedgen2/goal.py` (all in `spcl/LogGOPSim`):
//!
//! ```text
//! num_ranks 4
//! rank 0 {
//! l1: send 8b to 1 tag 0 cpu 0 nic 0
//! l2: recv 8b from -1 tag -1
//! l3: calc 100 cpu 1
//! l3 requires l2
//! l2 irequires l1
//! }
//! ```
//!
//! * Whitespace is spaces and tabs; lines end in `\n` or `\r\n`. `rank R {`, `num_ranks N`, `}`
//!   and `/* ... */` may share a line with what follows them; ops and dependencies end the line.
//! * Labels are `[a-zA-Z][a-zA-Z0-9_]*`, written `label:` before an op. They are local to a rank
//!   block. An op needs a label only to be named by a dependency.
//! * `send <n>b to <r>` and `recv <n>b from <r|-1>` take optional `tag T` (default 0, `-1` =
//!   any), `cpu C` and `nic K` (default 0), in that order. `calc <n>` takes an optional `cpu C`;
//!   its unit is the simulator's time unit, nanoseconds (LogGOPSim's README reports times in ns,
//!   and `LogGOPSim.cpp` adds a calc's size to the clock like `o`, `g` and `L`).
//! * `a requires b`: `a` starts after `b` completes; `a irequires b`: after `b` starts.
//! * Comments: `// ...` to the end of the line and `/* ... */`, where a statement may start.
//!
//! ## Accepted beyond `txt2bin` (liberal reading)
//! Everything `txt2bin` accepts parses here, and also: comments after a statement; a dependency
//! before the labels it names (resolved at the end of the rank block; `txt2bin` needs the labels
//! first); the clauses of an op in any order; rank blocks out of order (held in memory until the
//! ranks before them are read) or missing (empty programs); `num_ranks` repeated with the same
//! value; `nic` on `calc`; `cpu`/`nic` up to 65535 (`txt2bin` keeps 8 bits).
//!
//! ## Refused although `txt2bin` takes it
//! Ops outside a rank block (`txt2bin` gives them to rank 0), a first `num_ranks` after the first
//! rank block, `num_ranks` inside a block or with a second value, a rank opened twice, a `rank` inside another block, a label defined twice
//! in a rank (`txt2bin` silently keeps the first), numbers that overflow (`txt2bin` wraps them)
//! and tags above 2^31 − 1. Each is one error naming the line, the column and what was expected
//! (columns count characters from 1; a tab is one).
//!
//! ## Mapping to the IR
//! `send` → [`OpKind::Send`] with [`Payload::Bytes`]; `recv` → [`OpKind::Recv`] with
//! [`Combine::Assign`] (`from -1` → [`ANY_SOURCE`], `tag -1` → [`ANY_TAG`]; `tag -1` on a send is
//! kept as `-1`, which LogGOPSim matches against any receive tag); `calc n` →
//! [`OpKind::Compute`] of `n` ns; `cpu`/`nic` → [`Op::cpu`]/[`Op::nic`]. The schedule's meta is
//! [`Meta::sizes_only`] named after the `name` argument.
//!
//! # The lossless form
//! [`write_text`] writes, and [`parse`] reads, GOAL extended so that a generated schedule can be
//! saved and verified, simulated or executed later: `parse(write_text(s)) == s`.
//!
//! ```text
//! num_ranks 2
//! collective allreduce count 8 dtype float64 op sum
//! name "allreduce recursive_doubling"
//!
//! rank 0 {
//! l0: copy in[0:8] to out[0:8]
//! l1: send 64b to 1 tag 0 data in[0:8]
//! l2: recv 64b from 1 tag 0 data out[0:8] reduce after cpu 1
//! reduce scratch0[0:8] into out[0:8] before
//! sleep 250ns
//! calc 10
//! l1 irequires l0
//! l2 requires l0
//! }
//! ```
//!
//! * Header lines, before the first rank block: `collective <none|allreduce> [count N]
//!   [dtype D] [op O]` (defaults: count 0, dtype `byte`, op `sum`) and `name "<text>"` (escapes
//!   `\\ \" \n \r \t \xHH`; an unquoted name is the rest of the line). A `name` line overrides the
//!   `name` argument of [`parse`].
//! * `data <slice>` on a send or receive, where a slice is [`Slice`]'s `Display`: `in[a:b]`,
//!   `out[a:b]`, `scratchK[a:b]` (elements `a..b`). The byte count must equal the slice length
//!   times the dtype size. `reduce before|after` on a receive makes it a fused receive-reduce.
//! * `reduce <src> into <dst> before|after`, `copy <src> to <dst>`, `sleep <time>`.
//! * Times of `calc` and `sleep` may carry a unit: `ps`, `ns`, `us` (`µs`), `ms`, `s`, with a
//!   decimal fraction (`1.5us`); a bare number is nanoseconds, GOAL's unit. Times are exact
//!   integers of picoseconds; a time finer than 1 ps is an error.
//!
//! Plain GOAL never contains these keywords, so one parser reads both forms. (A plain GOAL label
//! that happens to be an extension keyword, such as `copy:`, still reads as a label.)
//!
//! # Export to GOAL ([`write_goal`])
//! Ranks in order (every rank gets a block, empty or not), no indentation, no comments; labels
//! `l<index>` (the op's index in the written rank block) only on ops a dependency names, and the
//! dependency lines after the ops of their rank. Every send and receive carries its `tag`.
//! GOAL has no data semantics, so this export is lossy by nature:
//!
//! * `reduce` and `copy` become `calc ⌈bytes × reduce_ns_per_byte⌉` ([`GoalExportOptions`]; the
//!   product is rounded to the nearest picosecond first, then up to whole ns);
//! * `compute` and `sleep` become `calc` of their time, rounded up to whole ns (a `sleep` then
//!   occupies the CPU in LogGOPSim);
//! * a fused receive-reduce becomes a `recv` and a `calc` (cost as for `reduce`) that requires it;
//!   ops that `require` the fused op require the `calc` instead, while ops that `irequire` it
//!   keep pointing at the `recv` (the fused op starts when its receive starts);
//! * buffer slices, the collective and the name are dropped; the `nic` of a `calc` is dropped
//!   (`txt2bin` has no `nic` on `calc`).
//!
//! Refused with [`std::io::ErrorKind::InvalidInput`]: `cpu`/`nic` above 255 (`txt2bin` stores 8
//! bits), send tags below −1, and a negative or non-finite `reduce_ns_per_byte`. A file written by
//! `write_goal` and read back by [`parse`] writes back byte-identical.

mod parse;
mod write;

pub use write::{write_goal, write_text, GoalExportOptions};

#[allow(unused_imports)] // named by the docs above
use super::{Combine, Meta, Op, OpKind, Payload, Slice, ANY_SOURCE, ANY_TAG};
use super::{Schedule, ScheduleError};
use crate::spec::{Choice, Choices};
use std::io::BufRead;

/// A format a schedule is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// [`write_text`]: lossless (GOAL plus buffer slices), read back exactly.
    Text,
    /// [`write_goal`]: GOAL, LogGOPSim's `txt2bin` input.
    Goal,
    /// A self-contained C routine ([`crate::schedule::export_c`]).
    C,
}

/// The formats a schedule is written in (`schedule export --format`, `Schedule.save`), the
/// default first.
pub const FORMATS: Choices<Format> = Choices::new(
    "schedule format",
    &[
        Choice::new(
            "text",
            Format::Text,
            "lossless (GOAL plus buffer slices), read back exactly",
        ),
        Choice::new("goal", Format::Goal, "GOAL, LogGOPSim's txt2bin input"),
        Choice::new(
            "c",
            Format::C,
            "a self-contained C routine that runs the schedule",
        ),
    ],
);

/// Parses GOAL text or the lossless form into a schedule named `name` (a `name` header line of
/// the lossless form takes precedence). Errors are [`ScheduleError::Parse`] with the 1-based
/// line and column and what was expected there.
pub fn parse(text: &str, name: &str) -> Result<Schedule, ScheduleError> {
    let mut p = parse::Parser::new(name);
    // A final newline ends the last line rather than starting an empty one (as in parse_reader).
    let body = text.strip_suffix('\n').unwrap_or(text);
    for line in body.as_bytes().split(|&b| b == b'\n') {
        p.line(line)?;
    }
    p.finish()
}

/// Like [`parse`], reading a line at a time (for multi-GB files). A read failure is
/// [`ScheduleError::Io`] with `name` as the path.
pub fn parse_reader(mut r: impl BufRead, name: &str) -> Result<Schedule, ScheduleError> {
    let io_err = |e: std::io::Error| ScheduleError::Io {
        path: name.to_string(),
        message: e.to_string(),
    };
    let mut p = parse::Parser::new(name);
    // Lines are parsed in place in the reader's buffer; only a line that straddles two fills is
    // copied.
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err(e)),
        };
        if buf.is_empty() {
            break;
        }
        let mut start = 0;
        while let Some(i) = buf[start..].iter().position(|&b| b == b'\n') {
            let end = start + i;
            if carry.is_empty() {
                p.line(&buf[start..end])?;
            } else {
                carry.extend_from_slice(&buf[start..end]);
                p.line(&carry)?;
                carry.clear();
            }
            start = end + 1;
        }
        if carry.len() + (buf.len() - start) > parse::MAX_LINE {
            return Err(p.line_too_long());
        }
        carry.extend_from_slice(&buf[start..]);
        let n = buf.len();
        r.consume(n);
    }
    if !carry.is_empty() {
        p.line(&carry)?;
    }
    p.finish()
}
