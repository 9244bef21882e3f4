//! The C text of the export: constants and comments, the column arrays (each written once),
//! the embedded runner with its headers inlined, and the entry point's code.

use super::super::{Dtype, ReduceOp};
use super::sources;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, Write};

/// The C type of a dtype's elements.
pub(super) fn c_type(d: Dtype) -> &'static str {
    match d {
        Dtype::Int8 => "int8_t",
        Dtype::Int16 => "int16_t",
        Dtype::Int32 => "int32_t",
        Dtype::Int64 => "int64_t",
        Dtype::Uint8 => "uint8_t",
        Dtype::Uint16 => "uint16_t",
        Dtype::Uint32 => "uint32_t",
        Dtype::Uint64 => "uint64_t",
        Dtype::Float32 => "float",
        Dtype::Float64 => "double",
        Dtype::Byte => "unsigned char",
    }
}

/// The predefined MPI datatype of a dtype.
pub(super) fn mpi_type(d: Dtype) -> &'static str {
    match d {
        Dtype::Int8 => "MPI_INT8_T",
        Dtype::Int16 => "MPI_INT16_T",
        Dtype::Int32 => "MPI_INT32_T",
        Dtype::Int64 => "MPI_INT64_T",
        Dtype::Uint8 => "MPI_UINT8_T",
        Dtype::Uint16 => "MPI_UINT16_T",
        Dtype::Uint32 => "MPI_UINT32_T",
        Dtype::Uint64 => "MPI_UINT64_T",
        Dtype::Float32 => "MPI_FLOAT",
        Dtype::Float64 => "MPI_DOUBLE",
        Dtype::Byte => "MPI_BYTE",
    }
}

pub(super) fn mpi_op(o: ReduceOp) -> String {
    format!("MPI_{}", o.name().to_uppercase())
}

/// Integers as C constants.
pub(super) fn strs<T: ToString>(v: &[T]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Unsigned 64-bit integers as C constants ([`c_u64`]).
pub(super) fn u64s(v: &[u64]) -> Vec<String> {
    v.iter().map(|&x| c_u64(x)).collect()
}

/// An unsigned C constant: with a `u` suffix above `i64::MAX` (an unsuffixed decimal constant
/// is signed).
pub(super) fn c_u64(v: u64) -> String {
    if v > i64::MAX as u64 {
        format!("{v}u")
    } else {
        v.to_string()
    }
}

/// Free text made safe inside a C comment: printable ASCII on one line, no `*/` or `/*`, no
/// trigraph.
pub(super) fn comment_text(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if (' '..='~').contains(&c) { c } else { '?' })
        .collect();
    let mut out = flat.replace("*/", "* /").replace("/*", "/ *");
    while out.contains("??") {
        out = out.replace("??", "? ?");
    }
    out
}

/// Column arrays written once each: an array of the same column with the same values as one
/// already written is named by that one's name.
#[derive(Default)]
pub(super) struct Tables {
    pub(super) text: String,
    seen: HashMap<(String, String), String>,
}

impl Tables {
    /// The name of the array of `values` (`NULL` when empty), written if new as
    /// `{prefix}_{column}`.
    pub(super) fn array(
        &mut self,
        prefix: &str,
        column: &str,
        ctype: &str,
        values: Vec<String>,
    ) -> String {
        let n = values.len();
        if n == 0 {
            return "NULL".to_string();
        }
        let body = wrap(values.into_iter());
        let key = (column.to_string(), body);
        if let Some(name) = self.seen.get(&key) {
            return name.clone();
        }
        let name = format!("{prefix}_{column}");
        let _ = write!(
            self.text,
            "static const {ctype} {name}[{n}] = {{\n{}}};\n",
            key.1
        );
        self.seen.insert(key, name.clone());
        name
    }
}

/// `static const ctype name[len] = {...};`, written line by line (the peers of a large
/// schedule).
pub(super) fn write_array(
    out: &mut impl Write,
    name: &str,
    ctype: &str,
    len: usize,
    values: impl Iterator<Item = String>,
) -> io::Result<()> {
    writeln!(out, "static const {ctype} {name}[{len}] = {{")?;
    write_values(out, values)?;
    writeln!(out, "}};")
}

/// Values separated by commas, on lines of at most about 100 characters, indented by 4.
pub(super) fn wrap(values: impl Iterator<Item = String>) -> String {
    let mut out = Vec::new();
    write_values(&mut out, values).expect("writing to memory");
    String::from_utf8(out).expect("digits and signs are ASCII")
}

pub(super) fn write_values(
    out: &mut impl Write,
    values: impl Iterator<Item = String>,
) -> io::Result<()> {
    let mut line = String::with_capacity(128);
    for v in values {
        if line.len() + v.len() + 2 > 96 {
            writeln!(out, "{}", line.trim_end())?;
            line.clear();
        }
        if line.is_empty() {
            line.push_str("    ");
        }
        line.push_str(&v);
        line.push_str(", ");
    }
    if !line.is_empty() {
        writeln!(out, "{}", line.trim_end().trim_end_matches(','))?;
    }
    Ok(())
}

/// The runner's sources as one text: `hc_runner.c` with `hc_runner.h` inlined where it is
/// included, and `hc_codes.h` inlined in it.
pub(super) fn embedded_runner() -> String {
    let sources: HashMap<&str, String> = sources::sources().into_iter().collect();
    let header = inline_include(
        &sources["hc_runner.h"],
        "hc_codes.h",
        &sources["hc_codes.h"],
    );
    let runner = inline_include(&sources["hc_runner.c"], "hc_runner.h", &header);
    format!(
        "/* ==== the native runner (native/hc_runner.c with its headers; see docs/native.md) \
         ==== */\n\n{runner}"
    )
}

/// `text` with its line `#include "name"` replaced by `body` (between two marker comments).
pub(super) fn inline_include(text: &str, name: &str, body: &str) -> String {
    let line = format!("#include \"{name}\"\n");
    assert_eq!(
        text.matches(&line).count(),
        1,
        "the runner's sources include {name} once"
    );
    text.replacen(
        &line,
        &format!("/* -- {name} (inlined) -- */\n{body}/* -- end of {name} -- */\n"),
        1,
    )
}

/// The C of a communicator's state, kept as its attribute and freed with it: the type
/// `hce_state` (the private duplicate `comm`, then the C members `$members`), the keyval
/// `hce_keyval` and the attribute's delete function `hce_delete` (runs the C statements
/// `$frees`, then frees the duplicate and the state), which [`STATE_OF_C`] registers. A string
/// literal; shared by the export's entry point and the alltoall routine generator's
/// ([`crate::collectives::alltoall::routine`]).
macro_rules! state_c {
    ($members:literal, $frees:literal) => {
        concat!(
            "typedef struct hce_state {\n    MPI_Comm comm;\n",
            $members,
            r#"} hce_state;

static int hce_keyval = MPI_KEYVAL_INVALID;

static int hce_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    hce_state *s = (hce_state *)value;
    int rc = MPI_SUCCESS;
    (void)comm;
    (void)keyval;
    (void)extra;
"#,
            $frees,
            r#"    if (s->comm != MPI_COMM_NULL) rc = MPI_Comm_free(&s->comm);
    free(s);
    return rc;
}
"#
        )
    };
}
pub(crate) use state_c;

/// What every entry point shares, before [`STATE_OF_C`] and [`ENTRY_RUN`]: the
/// per-communicator state and its attribute, the checks.
pub(super) const ENTRY_COMMON: &str = concat!(
    r#"
/* ==== the entry point ======================================================================= */

/* What a communicator keeps between calls, as an attribute (freed with it): the private
 * duplicate every message travels on, the rank's plan (bound on the first call, rebound on the
 * next) and the private buffers (MPI_IN_PLACE's copy of the input; a sizes-only routine's
 * input and output). */
"#,
    state_c!(
        "    hc_plan *plan;\n    void *input;\n    void *output;\n",
        "    hc_plan_free(s->plan);\n    free(s->input);\n    free(s->output);\n"
    ),
    r#"
/* The MPI error code of a runner code. */
static int hce_code(int rc)
{
    switch (rc) {
    case HC_OK: return MPI_SUCCESS;
    case HC_ERR_MEMORY: return MPI_ERR_NO_MEM;
    case HC_ERR_ARGUMENT: case HC_ERR_CYCLE: case HC_ERR_TIMEOUT: return MPI_ERR_INTERN;
    default: return rc; /* an MPI error code, as the failing call returned it */
    }
}

/* MPI_SUCCESS if comm is an intracommunicator of HCE_NRANKS ranks, else MPI_ERR_COMM. */
static int hce_check(MPI_Comm comm)
{
    int rc, inter = 0, size = 0;
    if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
    if ((rc = MPI_Comm_test_inter(comm, &inter)) != MPI_SUCCESS) return rc;
    if (inter) return MPI_ERR_COMM;
    if ((rc = MPI_Comm_size(comm, &size)) != MPI_SUCCESS) return rc;
    return size == HCE_NRANKS ? MPI_SUCCESS : MPI_ERR_COMM;
}

"#
);

/// The state of a communicator (the C type `hce_state`, with the private duplicate `comm` as
/// a member): found as `comm`'s attribute `hce_keyval`, or made on the first call
/// (collective: duplicates `comm`), after checking that the largest tag `HCE_MAX_TAG` fits.
/// The file defines `hce_state`, `hce_keyval` and its delete function `hce_delete` before it.
/// Shared by the export's entry point and the alltoall routine generator's
/// ([`crate::collectives::alltoall::routine`]).
pub(crate) const STATE_OF_C: &str = r#"/* The state of a checked comm: found, or made on the first call (collective: duplicates comm). */
static int hce_state_of(MPI_Comm comm, hce_state **out)
{
    int rc, flag = 0;
    void *found = NULL;
    *out = NULL;
    if (hce_keyval == MPI_KEYVAL_INVALID) {
        rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, hce_delete, &hce_keyval, NULL);
        if (rc != MPI_SUCCESS) return rc;
    }
    if ((rc = MPI_Comm_get_attr(comm, hce_keyval, &found, &flag)) != MPI_SUCCESS) return rc;
    if (flag) {
        *out = (hce_state *)found;
        return MPI_SUCCESS;
    }
    if (HCE_MAX_TAG > 32767) { /* above the bound every MPI library has: ask */
        void *ub = NULL;
        int world = 0;
        if ((rc = MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag)) != MPI_SUCCESS) return rc;
        if (!flag && MPI_Initialized(&world) == MPI_SUCCESS && world &&
            (rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag)) != MPI_SUCCESS)
            return rc;
        if (!flag || HCE_MAX_TAG > *(int *)ub) return MPI_ERR_TAG;
    }
    hce_state *s = (hce_state *)calloc(1, sizeof *s);
    if (!s) return MPI_ERR_NO_MEM;
    s->comm = MPI_COMM_NULL;
    rc = MPI_Comm_dup(comm, &s->comm);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_set_attr(comm, hce_keyval, s);
    if (rc != MPI_SUCCESS) {
        if (s->comm != MPI_COMM_NULL) MPI_Comm_free(&s->comm);
        free(s);
        return rc;
    }
    *out = s;
    return MPI_SUCCESS;
}
"#;

/// The rest of what every entry point shares: running the rank's program.
pub(super) const ENTRY_RUN: &str = r#"
/* Runs the rank's program on input and output: binds its plan on the first call, rebinds it
 * on the next. */
static int hce_run(hce_state *s, const void *input, void *output)
{
    int rc;
    if (!s->plan) {
        int rank = 0;
        if ((rc = MPI_Comm_rank(s->comm, &rank)) != MPI_SUCCESS) return rc;
        hc_program prog = hce_bodies[hce_rank_body[rank]];
        prog.peer = hce_peers + hce_peer_start[rank];
        prog.combine = hce_rank_combine[rank];
        rc = hc_plan_create(&prog, HCE_DTYPE, HCE_OP, input, output, HCE_COUNT, s->comm,
                            &s->plan, NULL, 0);
        if (rc != HC_OK) return hce_code(rc);
    } else {
        hc_plan_rebind(s->plan, input, output);
    }
    return hce_code(hc_plan_run(s->plan, 0, NULL, NULL, 0));
}
"#;

/// The entry point of a schedule with data semantics.
pub(super) const ENTRY_BUFFERS: &str = r#"
int @NAME@(const void *sendbuf, void *recvbuf, MPI_Comm comm)
{
    hce_state *s = NULL;
    const void *input = sendbuf;
    int rc = hce_check(comm);
    if (rc != MPI_SUCCESS) return rc;
    if (HCE_COUNT > 0 && (recvbuf == NULL || recvbuf == MPI_IN_PLACE || sendbuf == NULL))
        return MPI_ERR_BUFFER;
    if ((rc = hce_state_of(comm, &s)) != MPI_SUCCESS) return rc;
    if (sendbuf == MPI_IN_PLACE) {
        if (!s->input && !(s->input = malloc(HCE_INPUT_BYTES ? HCE_INPUT_BYTES : 1)))
            return MPI_ERR_NO_MEM;
        if (HCE_INPUT_BYTES) memcpy(s->input, recvbuf, HCE_INPUT_BYTES);
        input = s->input;
    }
    return hce_run(s, input, recvbuf);
}
"#;

/// The entry point of a schedule without data semantics: private buffers.
pub(super) const ENTRY_SIZES_ONLY: &str = r#"
int @NAME@(MPI_Comm comm)
{
    hce_state *s = NULL;
    int rc = hce_check(comm);
    if (rc != MPI_SUCCESS) return rc;
    if ((rc = hce_state_of(comm, &s)) != MPI_SUCCESS) return rc;
    if (!s->output) {
        if (!s->input && !(s->input = calloc(HCE_INPUT_BYTES ? HCE_INPUT_BYTES : 1, 1)))
            return MPI_ERR_NO_MEM;
        if (!(s->output = calloc(HCE_OUTPUT_BYTES ? HCE_OUTPUT_BYTES : 1, 1)))
            return MPI_ERR_NO_MEM;
    }
    return hce_run(s, s->input, s->output);
}
"#;
