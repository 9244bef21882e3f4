//! The C API called as C calls it: programs equal the core's, errors name the bad value,
//! messages fit their buffers, `auto` is the search's first schedule, the header is there.

use super::*;
use hypercuboid_core::collectives::allreduce::Algorithm;
use hypercuboid_core::schedule::columns::c_codes_header;
use std::ffi::CString;

fn text(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8(bytes).expect("UTF-8")
}

/// hc_allreduce_program, as C calls it: the columns, or the error code and message.
fn program(
    alg: &str,
    nranks: u32,
    rank: u32,
    count: u64,
    dtype: c_int,
    op: c_int,
) -> Result<*mut hc_columns, (c_int, String)> {
    let a = CString::new(alg).unwrap();
    let mut out: *mut hc_columns = std::ptr::dangling_mut();
    let mut err = [0 as c_char; 512];
    let rc = unsafe {
        hc_allreduce_program(
            a.as_ptr(),
            nranks,
            rank,
            count,
            dtype,
            op,
            &mut out,
            err.as_mut_ptr(),
            err.len(),
        )
    };
    if rc == HC_CAPI_OK {
        assert!(!out.is_null());
        Ok(out)
    } else {
        assert!(out.is_null(), "no columns on error");
        Err((rc, text(&err)))
    }
}

fn resolve(alg: &str, model: Option<&str>, nranks: u32, count: u64) -> Result<String, String> {
    let a = CString::new(alg).unwrap();
    let m = model.map(|m| CString::new(m).unwrap());
    let mut out = [0 as c_char; 256];
    let mut err = [0 as c_char; 512];
    let rc = unsafe {
        hc_allreduce_resolve(
            a.as_ptr(),
            m.as_ref().map_or(std::ptr::null(), |m| m.as_ptr()),
            nranks,
            count,
            Dtype::Float64.code() as c_int,
            out.as_mut_ptr(),
            out.len(),
            err.as_mut_ptr(),
            err.len(),
        )
    };
    if rc == HC_CAPI_OK {
        Ok(text(&out))
    } else {
        Err(text(&err))
    }
}

/// The columns a C caller sees, copied back into a `Columns`.
fn read(c: &hc_columns) -> Columns {
    unsafe fn v<T: Copy>(p: *const T, n: i64) -> Vec<T> {
        unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec()
    }
    unsafe {
        Columns {
            kind: v(c.kind, c.nops),
            peer: v(c.peer, c.nops),
            tag: v(c.tag, c.nops),
            bytes: v(c.bytes, c.nops),
            combine: v(c.combine, c.nops),
            cpu: v(c.cpu, c.nops),
            nic: v(c.nic, c.nops),
            time_ps: v(c.time_ps, c.nops),
            buf_slot: v(c.buf_slot, c.nops),
            buf_offset: v(c.buf_offset, c.nops),
            buf_len: v(c.buf_len, c.nops),
            src_slot: v(c.src_slot, c.nops),
            src_offset: v(c.src_offset, c.nops),
            src_len: v(c.src_len, c.nops),
            dep_op: v(c.dep_op, c.ndeps),
            dep_on: v(c.dep_on, c.ndeps),
            dep_kind: v(c.dep_kind, c.ndeps),
            scratch: v(c.scratch, c.nscratch),
            // the C API's programs (allreduce, alltoall) have no pack or unpack regions
            region: vec![-1; c.nops as usize],
            regions: Vec::new(),
        }
    }
}

#[test]
fn programs_are_the_cores() {
    for alg in [
        "ring",
        "tree",
        "recursive_doubling",
        "rabenseifner",
        "recursive_multiplying:a3,a2",
        "a2,a3",
        "elimination",
    ] {
        for (dtype, op) in [
            (Dtype::Float64, ReduceOp::Sum),
            (Dtype::Int32, ReduceOp::Max),
            (Dtype::Uint8, ReduceOp::Prod),
        ] {
            for count in [0, 1, 7, 1000] {
                for rank in [0, 4, 5] {
                    let c = program(alg, 6, rank, count, dtype.code().into(), op.code().into())
                        .unwrap_or_else(|e| panic!("{alg}: {e:?}"));
                    let spec = AllreduceSpec::new(6, count, dtype, op);
                    let mut p = Program::new();
                    allreduce::program(&Algorithm::parse(alg).unwrap(), &spec, rank, &mut p)
                        .unwrap();
                    let view = unsafe { &*c };
                    assert_eq!(read(view), Columns::of_program(&p, dtype.size()), "{alg}");
                    assert_eq!(
                        (view.nranks, view.rank, view.count, view.dtype, view.op),
                        (6, rank, count, dtype.code().into(), op.code().into())
                    );
                    unsafe { hc_columns_free(c) };
                }
            }
        }
    }
    unsafe { hc_columns_free(std::ptr::null_mut()) };
}

#[test]
fn errors_name_the_bad_value_and_what_is_accepted() {
    let f64c = Dtype::Float64.code() as c_int;
    let err = |alg: &str, n: u32, rank: u32, dtype: c_int, op: c_int| {
        program(alg, n, rank, 8, dtype, op).unwrap_err()
    };
    let (rc, msg) = err("bogus", 4, 0, f64c, 0);
    assert_eq!(rc, HC_CAPI_EINVAL);
    assert!(msg.contains("'bogus'") && msg.contains("ring") && msg.contains("rabenseifner"));
    let (_, msg) = err("ring", 4, 0, 42, 0);
    assert!(
        msg.starts_with("unknown dtype code 42; accepted: 0 int8, 1 int16,"),
        "{msg}"
    );
    let (_, msg) = err("ring", 4, 0, -1, 0);
    assert!(msg.starts_with("unknown dtype code -1"), "{msg}");
    let (_, msg) = err("ring", 4, 0, f64c, 9);
    assert_eq!(
        msg,
        "unknown reduction operator code 9; accepted: 0 sum, 1 prod, 2 max, 3 min \
         (HC_REDUCE_* of hc_codes.h)"
    );
    let (_, msg) = err("ring", 4, 0, Dtype::Byte.code().into(), 0);
    assert!(msg.contains("needs a numeric dtype"), "{msg}");
    let (_, msg) = err("ring", 4, 4, f64c, 0);
    assert_eq!(msg, "invalid rank '4': the allreduce has ranks 0..4");
    let (_, msg) = err("recursive_multiplying:a8", 4, 0, f64c, 0);
    assert!(msg.contains("a8"), "{msg}");
    let (_, msg) = err("recursive_multiplying:auto", 4, 0, f64c, 0);
    assert_eq!(
        msg,
        "'recursive_multiplying:auto' names a schedule only for a number of ranks: resolve \
         it with hc_allreduce_resolve first"
    );
    let mut out: *mut hc_columns = std::ptr::null_mut();
    let mut buf = [0 as c_char; 128];
    let rc = unsafe {
        hc_allreduce_program(
            std::ptr::null(),
            4,
            0,
            1,
            f64c,
            0,
            &mut out,
            buf.as_mut_ptr(),
            buf.len(),
        )
    };
    assert_eq!(
        (rc, text(&buf).as_str()),
        (
            HC_CAPI_EINVAL,
            "algorithm is NULL; give a NUL-terminated string"
        )
    );
    let a = CString::new("ring").unwrap();
    let rc = unsafe {
        hc_allreduce_program(
            a.as_ptr(),
            4,
            0,
            1,
            f64c,
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
    assert_eq!(rc, HC_CAPI_EINVAL, "a NULL err buffer is allowed");
}

#[test]
fn messages_are_cut_to_their_buffer() {
    let mut buf = [0x55 as c_char; 8];
    assert!(!unsafe { write_c(buf.as_mut_ptr(), buf.len(), "αβγδε") });
    // 7 bytes of room: three two-byte letters, then the NUL.
    assert_eq!(text(&buf), "αβγ");
    assert_eq!(buf[6], 0);
    assert!(unsafe { write_c(buf.as_mut_ptr(), buf.len(), "1234567") });
    assert_eq!(text(&buf), "1234567");
    assert!(!unsafe { write_c(buf.as_mut_ptr(), 0, "x") });
}

#[test]
fn auto_is_the_searchs_first_schedule() {
    for n in [1, 2, 3, 4, 7, 12, 64] {
        let first = search::tuned(n, &Params::table1_minimum())
            .unwrap()
            .schedule;
        assert_eq!(
            resolve("recursive_multiplying:auto", None, n, 1).unwrap(),
            format!("recursive_multiplying:{first}")
        );
        assert_eq!(
            resolve(" recursive_multiplying:auto ", Some(""), n, 1).unwrap(),
            format!("recursive_multiplying:{first}")
        );
    }
    // Under another model, another schedule: with α_p far above α_r, one stage of 11
    // messages beats three stages.
    assert_eq!(
        resolve(
            "recursive_multiplying:auto",
            Some("pipelined:alpha_p=100us,alpha_r=1ns"),
            12,
            1
        )
        .unwrap(),
        "recursive_multiplying:a12"
    );
    assert_eq!(
        resolve("recursive_multiplying:auto", Some("postal:alpha=1us"), 8, 1).unwrap(),
        "recursive_multiplying:a2,a2,a2"
    );
    assert_eq!(resolve("ring", None, 5, 1).unwrap(), "ring");
    assert_eq!(
        resolve("a3,a2", None, 6, 1).unwrap(),
        "recursive_multiplying:a3,a2"
    );
    let e = resolve("recursive_multiplying:auto", Some("loggops"), 8, 1).unwrap_err();
    assert!(e.contains("postal or pipelined"), "{e}");
    let e = resolve("recursive_multiplying:auto", Some("nonsense:x=1"), 8, 1).unwrap_err();
    assert!(e.contains("'nonsense'") && e.contains("pipelined"), "{e}");
    // The result must fit its buffer.
    let a = CString::new("recursive_multiplying:auto").unwrap();
    let mut out = [0 as c_char; 8];
    let mut err = [0 as c_char; 256];
    let rc = unsafe {
        hc_allreduce_resolve(
            a.as_ptr(),
            std::ptr::null(),
            8,
            1,
            Dtype::Float64.code().into(),
            out.as_mut_ptr(),
            out.len(),
            err.as_mut_ptr(),
            err.len(),
        )
    };
    assert_eq!(rc, HC_CAPI_EINVAL);
    assert!(
        text(&err).contains("needs 25 bytes with its NUL; the buffer has 8"),
        "{}",
        text(&err)
    );
}

#[test]
fn check_accepts_every_spec_and_auto() {
    let check = |s: &str| {
        let a = CString::new(s).unwrap();
        let mut err = [0 as c_char; 1024];
        let mut auto: c_int = -1;
        let rc = unsafe { hc_allreduce_check(a.as_ptr(), &mut auto, err.as_mut_ptr(), err.len()) };
        (rc, auto, text(&err))
    };
    for (spec, auto) in [
        ("ring", 0),
        ("recursive_doubling", 0),
        ("rabenseifner", 0),
        ("recursive_multiplying:auto", 1),
        ("a4,a2", 0),
        ("mpich_recursive_multiplying:k=4", 0),
    ] {
        assert_eq!(check(spec), (HC_CAPI_OK, auto, String::new()), "{spec}");
    }
    let (rc, _, msg) = check("rign");
    assert_eq!(rc, HC_CAPI_EINVAL);
    assert!(
        msg.contains("'rign'")
            && msg.contains("recursive_doubling")
            && msg.ends_with("(or recursive_multiplying:auto, tuned for the communicator)"),
        "{msg}"
    );
}

#[test]
fn model_files() {
    let dir = std::env::temp_dir().join(format!("hc-capi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let read = |name: &str, body: Option<&str>| {
        let p = dir.join(name);
        if let Some(b) = body {
            std::fs::write(&p, b).unwrap();
        }
        let c = CString::new(p.to_str().unwrap()).unwrap();
        let mut out = [0 as c_char; 256];
        let mut err = [0 as c_char; 512];
        let rc = unsafe {
            hc_model_file(
                c.as_ptr(),
                out.as_mut_ptr(),
                out.len(),
                err.as_mut_ptr(),
                err.len(),
            )
        };
        (rc, text(&out), text(&err), p.display().to_string())
    };
    let (rc, spec, _, _) = read(
        "good.json",
        Some(r#"{"model": "pipelined:alpha_p=2us,alpha_r=0.5us", "source": "bench multicast"}"#),
    );
    assert_eq!(rc, HC_CAPI_OK);
    assert_eq!(
        spec,
        "pipelined:alpha_p=2us,alpha_r=500ns,beta=0,gamma=0,delta=0"
    );
    let (rc, _, err, p) = read("nokey.json", Some(r#"{"fitted": {}}"#));
    assert_eq!(rc, HC_CAPI_EINVAL);
    assert_eq!(
        err,
        format!("{p}: not a model file (no 'model' key; keys: fitted)")
    );
    let (_, _, err, p) = read("missing.json", None);
    assert!(err.starts_with(&format!("{p}: cannot read it (")), "{err}");
    let mut out = [0 as c_char; 256];
    let rc = unsafe { hc_default_model(out.as_mut_ptr(), out.len(), std::ptr::null_mut(), 0) };
    assert_eq!(rc, HC_CAPI_OK);
    assert_eq!(
        text(&out),
        "pipelined:alpha_p=1340ns,alpha_r=340ns,beta=0,gamma=0,delta=0"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_generated_headers_are_there() {
    let include = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let codes = std::fs::read_to_string(include.join("hc_codes.h")).unwrap();
    assert_eq!(codes, c_codes_header());
    let h = std::fs::read_to_string(include.join("hypercuboid.h")).unwrap();
    for decl in [
        "#include \"hc_codes.h\"",
        "typedef struct hc_columns {",
        "int hc_allreduce_program(const char *algorithm,",
        "void hc_columns_free(struct hc_columns *columns);",
        "int hc_allreduce_resolve(const char *algorithm,",
        "int hc_model_file(const char *path,",
        "int hc_default_model(char *out, size_t outlen, char *err, size_t errlen);",
        "int hc_allreduce_check(const char *algorithm, int *is_auto, char *err, size_t errlen);",
        "#define HC_CAPI_EINVAL -1",
    ] {
        assert!(h.contains(decl), "{decl} missing from hypercuboid.h:\n{h}");
    }
}

#[test]
fn a_panic_is_an_internal_error_naming_the_call() {
    let mut err = [0 as c_char; 256];
    let rc = unsafe {
        call(
            err.as_mut_ptr(),
            err.len(),
            || "hc_test(count 7)".into(),
            || panic!("injected at the boundary"),
        )
    };
    assert_eq!(rc, HC_CAPI_EINTERNAL);
    assert_eq!(
        text(&err),
        "internal error in hypercuboid (please report it) in hc_test(count 7): injected at the \
         boundary"
    );
    // a formatted panic message, and a description that panics itself
    let rc = unsafe {
        call(
            err.as_mut_ptr(),
            err.len(),
            || panic!("cannot describe"),
            || -> Result<(), String> { panic!("index {} out of bounds", 410) },
        )
    };
    assert_eq!(rc, HC_CAPI_EINTERNAL);
    assert_eq!(
        text(&err),
        "internal error in hypercuboid (please report it) in a call whose arguments cannot be \
         shown: index 410 out of bounds"
    );
}

#[test]
fn a_panic_quotes_string_arguments_bounded() {
    let long = CString::new("x".repeat(100)).unwrap();
    let q = unsafe { quoted(long.as_ptr()) };
    assert_eq!(q, format!("'{}...'", "x".repeat(80)));
    assert_eq!(unsafe { quoted(std::ptr::null()) }, "NULL");
    let short = CString::new("ring").unwrap();
    assert_eq!(unsafe { quoted(short.as_ptr()) }, "'ring'");
}
