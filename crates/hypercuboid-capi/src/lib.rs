//! The C API of hypercuboid's core, for C programs that run schedules: the native runner and
//! the PMPI library (`native/`). Like the Python binding, it only converts: C arguments in,
//! the core's generators and search, columns and strings out.
//!
//! Every function returns [`HC_CAPI_OK`] or an error code and, on error, writes a message that
//! names the bad value and what is accepted into the caller's buffer `err[errlen]` (always
//! NUL-terminated, cut at a character boundary when it does not fit). No panic crosses the
//! boundary: every entry point runs through one helper (`call`) that catches it and reports
//! [`HC_CAPI_EINTERNAL`] with a message naming the call and its arguments.
//!
//! The header `include/hypercuboid.h` is generated from this file by cbindgen at build time
//! (`build.rs`); it includes `hc_codes.h`, the codes of the program encoding written from the
//! core (`HC_DTYPE_*`, `HC_REDUCE_*`, `HC_OP_*`, `HC_SLOT_*`, ...).

#![allow(non_camel_case_types)]

use hypercuboid_core::collectives::allreduce::recursive_multiplying::search::{self, Params, AUTO};
use hypercuboid_core::collectives::allreduce::{self, AllreduceSpec};
use hypercuboid_core::model::{parse_model, parse_model_file, ModelSpec};
use hypercuboid_core::schedule::columns::Columns;
use hypercuboid_core::schedule::{Dtype, Program, ReduceOp};
use std::ffi::{c_char, c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Success.
pub const HC_CAPI_OK: c_int = 0;
/// A bad argument: the message names it and what is accepted.
pub const HC_CAPI_EINVAL: c_int = -1;
/// A bug in hypercuboid caught at the boundary (a panic): the message says where.
pub const HC_CAPI_EINTERNAL: c_int = -2;

/// One rank's allreduce program as columns (see docs/schedule.md, "One program encoding"):
/// the arrays of the native runner's `hc_program`, field for field, plus what the program was
/// built for. Owned by the library: read it, never write it, free it with
/// [`hc_columns_free`].
#[repr(C)]
pub struct hc_columns {
    /// Number of ops: the length of every per-op column.
    pub nops: i64,
    /// `HC_OP_*`.
    pub kind: *const u8,
    /// Peer of a send or receive; -1 for none or any source.
    pub peer: *const i64,
    /// Tag of a send or receive (-1: any); 0 for local ops.
    pub tag: *const i32,
    /// Bytes moved, reduced or copied.
    pub bytes: *const u64,
    /// `HC_COMBINE_*`.
    pub combine: *const i8,
    /// Time of a compute or sleep, in picoseconds.
    pub time_ps: *const u64,
    /// `HC_SLOT_*` of the sent or received slice, or of a reduce's or copy's destination.
    pub buf_slot: *const i32,
    /// Its first element.
    pub buf_offset: *const u64,
    /// Its length in elements.
    pub buf_len: *const u64,
    /// `HC_SLOT_*` of a reduce's or copy's source, or of a fused receive's operand.
    pub src_slot: *const i32,
    /// Its first element.
    pub src_offset: *const u64,
    /// Its length in elements.
    pub src_len: *const u64,
    /// Number of dependencies: the length of the dependency columns.
    pub ndeps: i64,
    /// `dep_op[j]` waits for `dep_on[j]` (sorted by `dep_op`).
    pub dep_op: *const u32,
    /// The op it waits for.
    pub dep_on: *const u32,
    /// `HC_DEP_REQUIRES` (completion) or `HC_DEP_IREQUIRES` (start).
    pub dep_kind: *const u8,
    /// Number of scratch buffers.
    pub nscratch: i64,
    /// Elements of each scratch buffer.
    pub scratch: *const u64,
    /// GOAL's cpu of each op.
    pub cpu: *const u16,
    /// GOAL's nic of each op.
    pub nic: *const u16,
    /// The number of ranks the program is for.
    pub nranks: u32,
    /// The rank it is the program of.
    pub rank: u32,
    /// Elements of the input and output buffers.
    pub count: u64,
    /// `HC_DTYPE_*` of the elements.
    pub dtype: c_int,
    /// `HC_REDUCE_*` of the reduction.
    pub op: c_int,
}

/// The columns a [`hc_columns`] points into; the view comes first so that the pointer handed
/// out is also the pointer to this.
#[repr(C)]
struct Owned {
    view: hc_columns,
    cols: Columns,
}

/// Writes `msg` into `buf[len]`, NUL-terminated, cut at a character boundary if it does not
/// fit. Returns whether all of it fit.
///
/// # Safety
/// `buf` is null or points to `len` writable bytes.
unsafe fn write_c(buf: *mut c_char, len: usize, msg: &str) -> bool {
    if buf.is_null() || len == 0 {
        return msg.is_empty();
    }
    let mut n = msg.len().min(len - 1);
    while !msg.is_char_boundary(n) {
        n -= 1;
    }
    // SAFETY: the caller gives `len` writable bytes and n < len.
    unsafe {
        std::ptr::copy_nonoverlapping(msg.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = 0;
    }
    n == msg.len()
}

/// The one boundary of every entry point: runs `f`, turning its error into
/// [`HC_CAPI_EINVAL`] and a panic into [`HC_CAPI_EINTERNAL`], each with its message in
/// `err[errlen]`. A panic's message names the call as `asked` describes it (the function and
/// its arguments; called only after a panic) and what the panic said.
///
/// # Safety
/// `err` is null or points to `errlen` writable bytes.
unsafe fn call(
    err: *mut c_char,
    errlen: usize,
    asked: impl FnOnce() -> String,
    f: impl FnOnce() -> Result<(), String>,
) -> c_int {
    let (code, msg) = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => return HC_CAPI_OK,
        Ok(Err(msg)) => (HC_CAPI_EINVAL, msg),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            let asked = catch_unwind(AssertUnwindSafe(asked))
                .unwrap_or_else(|_| "a call whose arguments cannot be shown".into());
            (
                HC_CAPI_EINTERNAL,
                format!("internal error in hypercuboid (please report it) in {asked}: {what}"),
            )
        }
    };
    // SAFETY: as the caller promised.
    unsafe { write_c(err, errlen, &msg) };
    code
}

/// A C string argument as a panic's message quotes it: `'text'` (its first 80 characters,
/// lossily), or NULL.
///
/// # Safety
/// `s` is null or a NUL-terminated string.
unsafe fn quoted(s: *const c_char) -> String {
    if s.is_null() {
        return "NULL".into();
    }
    // SAFETY: a non-null NUL-terminated string, as the caller promised.
    let text = unsafe { CStr::from_ptr(s) }.to_string_lossy();
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("'{}...'", &text[..cut]),
        None => format!("'{text}'"),
    }
}

/// Reads a C string argument named `name`.
///
/// # Safety
/// `s` is null or a NUL-terminated string.
unsafe fn c_str<'a>(s: *const c_char, name: &str) -> Result<&'a str, String> {
    if s.is_null() {
        return Err(format!("{name} is NULL; give a NUL-terminated string"));
    }
    // SAFETY: a non-null NUL-terminated string, as the caller promised.
    unsafe { CStr::from_ptr(s) }
        .to_str()
        .map_err(|_| format!("{name} is not UTF-8 text"))
}

/// Writes a result string into `out[outlen]`, or says how much room it needs.
///
/// # Safety
/// `out` is null or points to `outlen` writable bytes.
unsafe fn put(out: *mut c_char, outlen: usize, text: &str, what: &str) -> Result<(), String> {
    if out.is_null() {
        return Err(format!("the buffer for the {what} is NULL"));
    }
    // SAFETY: as the caller promised.
    if unsafe { write_c(out, outlen, text) } {
        Ok(())
    } else {
        Err(format!(
            "the {what} '{text}' needs {} bytes with its NUL; the buffer has {outlen}",
            text.len() + 1
        ))
    }
}

/// The entry of `all` whose code is `code` (codes are positions), or an error naming the
/// accepted codes (`code name`, from `describe`) and the constants of hc_codes.h.
fn coded<T: Copy>(
    code: c_int,
    all: &[T],
    what: &str,
    constants: &str,
    describe: impl Fn(T) -> String,
) -> Result<T, String> {
    usize::try_from(code)
        .ok()
        .and_then(|i| all.get(i).copied())
        .ok_or_else(|| {
            let accepted: Vec<String> = all.iter().map(|&t| describe(t)).collect();
            format!(
                "unknown {what} code {code}; accepted: {} ({constants} of hc_codes.h)",
                accepted.join(", ")
            )
        })
}

fn dtype_of(code: c_int) -> Result<Dtype, String> {
    coded(code, &Dtype::ALL, "dtype", "HC_DTYPE_*", |d| {
        format!("{} {}", d.code(), d.name())
    })
}

fn op_of(code: c_int) -> Result<ReduceOp, String> {
    coded(
        code,
        &ReduceOp::ALL,
        "reduction operator",
        "HC_REDUCE_*",
        |o| format!("{} {}", o.code(), o.name()),
    )
}

/// The model `auto` is tuned under: the spec given, or the paper's Table 1 minimum.
fn params_of(model: Option<&str>, bytes: u64) -> Result<Params, String> {
    match model {
        None => Ok(Params {
            bytes,
            ..Params::table1_minimum()
        }),
        Some(m) => {
            let spec = parse_model(m).map_err(|e| e.to_string())?;
            Params::from_model(&spec, bytes).map_err(|e| e.to_string())
        }
    }
}

/// The spec of the model `recursive_multiplying:auto` is tuned under when none is given: the
/// pipelined postal model with the minimum of Table 1 of Ruefenacht, Bull and Booth (2017),
/// α_p = 1.34 µs, α_r = 0.34 µs.
fn default_model() -> String {
    ModelSpec::Pipelined(Params::table1_minimum().model).to_string()
}

/// Builds the program of rank `rank` of an allreduce of `count` elements of `dtype`
/// (`HC_DTYPE_*`) with `op` (`HC_REDUCE_*`) on `nranks` ranks, with `algorithm` (a spec as
/// users type it: `ring`, `rabenseifner`, `recursive_multiplying:a4,a2`, ...), alone, in time
/// proportional to its own ops, checked by the core (valid for `nranks` ranks, every slice
/// inside the buffers of `count` elements and the scratch). On success `*out` holds the
/// columns, to free with [`hc_columns_free`]; on error `*out` is NULL.
/// `recursive_multiplying:auto` names no program until it is resolved for the number of ranks:
/// [`hc_allreduce_resolve`] first.
///
/// # Safety
/// `algorithm` is a NUL-terminated string, `out` a valid pointer, `err` null or `errlen`
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn hc_allreduce_program(
    algorithm: *const c_char,
    nranks: u32,
    rank: u32,
    count: u64,
    dtype: c_int,
    op: c_int,
    out: *mut *mut hc_columns,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: pointers as the caller promised.
    unsafe {
        let asked = || {
            format!(
                "hc_allreduce_program(algorithm {}, nranks {nranks}, rank {rank}, count \
                 {count}, dtype {dtype}, op {op})",
                quoted(algorithm)
            )
        };
        call(err, errlen, asked, || {
            if out.is_null() {
                return Err("out is NULL; give the address of an hc_columns pointer".into());
            }
            *out = std::ptr::null_mut();
            let text = c_str(algorithm, "algorithm")?;
            if search::is_auto(text) {
                return Err(format!(
                    "'{}' names a schedule only for a number of ranks: resolve it with \
                     hc_allreduce_resolve first",
                    text.trim()
                ));
            }
            let alg = allreduce::Algorithm::parse(text).map_err(|e| e.to_string())?;
            let spec = AllreduceSpec::new(nranks, count, dtype_of(dtype)?, op_of(op)?);
            let mut p = Program::new();
            allreduce::program(&alg, &spec, rank, &mut p).map_err(|e| e.to_string())?;
            let cols = Columns::of_program(&p, spec.dtype.size());
            cols.checked(rank, nranks, (count, count))
                .map_err(|e| e.to_string())?;
            *out = Box::into_raw(own(cols, &spec, rank, dtype, op)).cast::<hc_columns>();
            Ok(())
        })
    }
}

fn own(cols: Columns, spec: &AllreduceSpec, rank: u32, dtype: c_int, op: c_int) -> Box<Owned> {
    let c = &cols;
    let view = hc_columns {
        nops: c.len() as i64,
        kind: c.kind.as_ptr(),
        peer: c.peer.as_ptr(),
        tag: c.tag.as_ptr(),
        bytes: c.bytes.as_ptr(),
        combine: c.combine.as_ptr(),
        time_ps: c.time_ps.as_ptr(),
        buf_slot: c.buf_slot.as_ptr(),
        buf_offset: c.buf_offset.as_ptr(),
        buf_len: c.buf_len.as_ptr(),
        src_slot: c.src_slot.as_ptr(),
        src_offset: c.src_offset.as_ptr(),
        src_len: c.src_len.as_ptr(),
        ndeps: c.dep_op.len() as i64,
        dep_op: c.dep_op.as_ptr(),
        dep_on: c.dep_on.as_ptr(),
        dep_kind: c.dep_kind.as_ptr(),
        nscratch: c.scratch.len() as i64,
        scratch: c.scratch.as_ptr(),
        cpu: c.cpu.as_ptr(),
        nic: c.nic.as_ptr(),
        nranks: spec.nranks,
        rank,
        count: spec.count,
        dtype,
        op,
    };
    // The vectors' buffers stay where they are when `cols` moves into the box.
    Box::new(Owned { view, cols })
}

/// Frees columns from [`hc_allreduce_program`] (NULL: nothing).
///
/// # Safety
/// `columns` is NULL or a pointer [`hc_allreduce_program`] gave and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn hc_columns_free(columns: *mut hc_columns) {
    if !columns.is_null() {
        // SAFETY: a pointer from Box::into_raw of an Owned, whose first field is the view.
        let owned = unsafe { Box::from_raw(columns.cast::<Owned>()) };
        // Freeing vectors does not panic; if it ever did, no panic crosses into C (the
        // function returns nothing to report it with).
        let _ = catch_unwind(AssertUnwindSafe(move || drop(owned)));
    }
}

/// The algorithm to run for an allreduce of `count` elements of `dtype` on `nranks` ranks,
/// written into `out[outlen]` as the spec [`hc_allreduce_program`] takes (for logging, too):
/// `recursive_multiplying:auto` becomes recursive multiplying with the schedule the core's
/// search ranks first for `nranks` ranks under `model` (a cost-model spec such as
/// `pipelined:alpha_p=1.34us,alpha_r=0.34us,beta=0.4ns`, postal or pipelined; NULL or empty:
/// the paper's Table 1 minimum, [`hc_default_model`]): every schedule ranked by the closed form
/// when there are at most 200000, else the dynamic program's optimal factored schedule. Any
/// other spec is checked and written back in its canonical form.
///
/// # Safety
/// `algorithm` is a NUL-terminated string, `model` NULL or one, `out` `outlen` writable bytes,
/// `err` null or `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn hc_allreduce_resolve(
    algorithm: *const c_char,
    model: *const c_char,
    nranks: u32,
    count: u64,
    dtype: c_int,
    out: *mut c_char,
    outlen: usize,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: pointers as the caller promised.
    unsafe {
        let asked = || {
            format!(
                "hc_allreduce_resolve(algorithm {}, model {}, nranks {nranks}, count {count}, \
                 dtype {dtype})",
                quoted(algorithm),
                quoted(model)
            )
        };
        call(err, errlen, asked, || {
            let text = c_str(algorithm, "algorithm")?;
            let model = if model.is_null() {
                None
            } else {
                Some(c_str(model, "model")?).filter(|m| !m.trim().is_empty())
            };
            let dt = dtype_of(dtype)?;
            let bytes = count.checked_mul(dt.size() as u64).ok_or_else(|| {
                format!(
                    "invalid count {count}: {count} elements of {} exceed 2^64 - 1 bytes",
                    dt.name()
                )
            })?;
            let p = params_of(model, bytes)?;
            let alg = search::resolve(text, nranks, &p).map_err(|e| e.to_string())?;
            put(out, outlen, &alg.name(), "algorithm")
        })
    }
}

/// Reads the model file at `path` (JSON with a `model` key holding a cost-model spec, as
/// `hypercuboid bench pingpong` and `bench multicast` write it) and writes its model, in
/// canonical form, into `out[outlen]`.
///
/// # Safety
/// `path` is a NUL-terminated string, `out` `outlen` writable bytes, `err` null or `errlen`
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn hc_model_file(
    path: *const c_char,
    out: *mut c_char,
    outlen: usize,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: pointers as the caller promised.
    unsafe {
        let asked = || format!("hc_model_file(path {})", quoted(path));
        call(err, errlen, asked, || {
            let path = c_str(path, "path")?;
            let text = std::fs::read(path).map_err(|e| format!("{path}: cannot read it ({e})"))?;
            let text = String::from_utf8(text)
                .map_err(|_| format!("{path}: not a model file (not UTF-8 text)"))?;
            let spec = parse_model_file(&text).map_err(|e| format!("{path}: {e}"))?;
            put(out, outlen, &spec.to_string(), "model")
        })
    }
}

/// Writes the model `recursive_multiplying:auto` is tuned under when none is given into
/// `out[outlen]`: the pipelined postal model with the minimum of Table 1 of Ruefenacht, Bull
/// and Booth (2017), α_p = 1.34 µs and α_r = 0.34 µs.
///
/// # Safety
/// `out` is `outlen` writable bytes, `err` null or `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn hc_default_model(
    out: *mut c_char,
    outlen: usize,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: pointers as the caller promised.
    unsafe {
        call(
            err,
            errlen,
            || format!("hc_default_model(outlen {outlen})"),
            || put(out, outlen, &default_model(), "model"),
        )
    }
}

/// Checks an allreduce algorithm spec without building anything: any spec
/// [`hc_allreduce_program`] takes, or `recursive_multiplying:auto`, which sets `*is_auto` to 1
/// (0 for the others; `is_auto` may be NULL). For a caller that reads the spec from its user
/// once (an environment variable) and wants one clear message at once.
///
/// # Safety
/// `algorithm` is a NUL-terminated string, `is_auto` NULL or a valid pointer, `err` null or
/// `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn hc_allreduce_check(
    algorithm: *const c_char,
    is_auto: *mut c_int,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: pointers as the caller promised.
    unsafe {
        let asked = || format!("hc_allreduce_check(algorithm {})", quoted(algorithm));
        call(err, errlen, asked, || {
            let text = c_str(algorithm, "algorithm")?;
            let auto = search::is_auto(text);
            if !is_auto.is_null() {
                *is_auto = c_int::from(auto);
            }
            if auto {
                return Ok(());
            }
            allreduce::Algorithm::parse(text).map(|_| ()).map_err(|e| {
                format!("{e} (or recursive_multiplying:{AUTO}, tuned for the communicator)")
            })
        })
    }
}

#[cfg(test)]
mod tests;
