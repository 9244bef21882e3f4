//! Which names may name the exported entry point ([`check_c_name`]).

use super::super::ScheduleError;
use super::bad;
use super::c_text::{ENTRY_BUFFERS, ENTRY_COMMON, ENTRY_RUN, ENTRY_SIZES_ONLY, STATE_OF_C};
use super::sources;
use std::collections::HashSet;
use std::sync::OnceLock;

/// C's keywords (C99, C11, C23) and `main`: never an entry point's name.
#[rustfmt::skip]
pub(super) const C_KEYWORDS: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "alignas", "alignof", "bool", "constexpr",
    "false", "nullptr", "static_assert", "thread_local", "true", "typeof", "typeof_unqual", "main",
];

/// Every identifier of the C text that the export writes around the entry point's name: the
/// runner's sources and the entry point's code (comments, strings and numbers skipped).
pub(super) fn file_identifiers() -> &'static HashSet<String> {
    static IDS: OnceLock<HashSet<String>> = OnceLock::new();
    IDS.get_or_init(|| {
        let mut ids = HashSet::new();
        let sources = sources::sources();
        let texts = sources.iter().map(|(_, t)| t.as_str()).chain([
            ENTRY_COMMON,
            STATE_OF_C,
            ENTRY_RUN,
            ENTRY_BUFFERS,
            ENTRY_SIZES_ONLY,
        ]);
        for t in texts {
            c_identifiers(t, |id| {
                if id != "NAME" {
                    ids.insert(id.to_string());
                }
            });
        }
        ids
    })
}

/// Calls `f` with every identifier of C text `t`, outside comments, string and character
/// literals; numbers (`64ull`, `1e9`) are skipped whole.
pub(super) fn c_identifiers(t: &str, mut f: impl FnMut(&str)) {
    let b = t.as_bytes();
    let mut i = 0;
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        if b[i..].starts_with(b"/*") {
            i = t[i + 2..].find("*/").map_or(b.len(), |j| i + 2 + j + 2);
        } else if b[i..].starts_with(b"//") {
            i = t[i..].find('\n').map_or(b.len(), |j| i + j);
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c.is_ascii_digit() {
            while i < b.len() && (word(b[i]) || b[i] == b'.') {
                i += 1;
            }
        } else if word(c) {
            let start = i;
            while i < b.len() && word(b[i]) {
                i += 1;
            }
            f(&t[start..i]);
        } else {
            i += 1;
        }
    }
}

/// Checks that `name` can name the entry point: a C identifier (a letter or `_`, then letters,
/// digits and `_`), not a keyword or `main`, not reserved (`_` followed by a capital or `_`:
/// the C library; `MPI_`, `PMPI_` in any case: the MPI library; `hce_`: the export's own
/// tables), and not an identifier the exported file uses (the runner's `reduce`,
/// `hc_plan_run`, ...).
pub fn check_c_name(name: &str) -> Result<(), ScheduleError> {
    let refuse = |reason: String| bad("C entry point name", name, reason);
    let b = name.as_bytes();
    let ident = !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_');
    if !ident {
        return Err(refuse(
            "a C identifier is a letter or '_' followed by letters, digits and '_' (ASCII)".into(),
        ));
    }
    if C_KEYWORDS.contains(&name) {
        return Err(refuse(format!("'{name}' is a C keyword or main")));
    }
    if b[0] == b'_' && b.len() > 1 && (b[1] == b'_' || b[1].is_ascii_uppercase()) {
        return Err(refuse(
            "names beginning with '_' and a capital letter or a second '_' are reserved for \
             the C implementation"
                .into(),
        ));
    }
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("mpi_") || lower.starts_with("pmpi_") {
        return Err(refuse(
            "the MPI standard reserves names beginning with MPI_ and PMPI_ (in any case) for \
             the MPI library"
                .into(),
        ));
    }
    if lower.starts_with("hce_") {
        return Err(refuse(
            "names beginning with hce_ name the exported file's own tables and functions".into(),
        ));
    }
    if file_identifiers().contains(name) {
        return Err(refuse(format!(
            "'{name}' is an identifier the exported file already uses (the embedded runner or \
             the entry point's code); choose another, e.g. hc_allreduce_{name}"
        )));
    }
    Ok(())
}
