//! The scanner under the GOAL parser: positions, a cursor over one line, keywords and clauses.

use super::*;

/// A 1-based position in the text.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pos {
    pub(super) line: usize,
    pub(super) col: usize,
}

impl Pos {
    pub(super) fn err(self, message: String) -> ScheduleError {
        ScheduleError::Parse {
            line: self.line,
            column: self.col,
            message,
        }
    }
}

/// 1-based column of byte `at` of `s`, counting characters (UTF-8 continuation bytes do not
/// start a character).
pub(super) fn column(s: &[u8], at: usize) -> usize {
    s[..at.min(s.len())]
        .iter()
        .filter(|&&b| b & 0xC0 != 0x80)
        .count()
        + 1
}

/// What an error message says was found at byte `at`: the next whitespace-delimited token, or
/// `end of line`.
pub(super) fn found(s: &[u8], mut at: usize) -> String {
    while at < s.len() && (s[at] == b' ' || s[at] == b'\t') {
        at += 1;
    }
    if at >= s.len() {
        return "end of line".into();
    }
    let end = s[at..]
        .iter()
        .position(|&b| b == b' ' || b == b'\t')
        .map_or(s.len(), |i| at + i);
    let tok = String::from_utf8_lossy(&s[at..end]);
    if tok.chars().count() > 24 {
        format!("'{}...'", tok.chars().take(24).collect::<String>())
    } else {
        format!("'{tok}'")
    }
}

/// `b` as an error message quotes it ([`crate::units::bounded`]: a megabyte number is cut
/// short).
pub(super) fn text(b: &[u8]) -> String {
    crate::units::bounded(&String::from_utf8_lossy(b)).into_owned()
}

pub(super) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Decimal digits to u64; `None` on overflow.
#[inline]
pub(super) fn to_u64(d: &[u8]) -> Option<u64> {
    if d.len() <= 19 {
        Some(d.iter().fold(0u64, |n, &b| n * 10 + (b - b'0') as u64))
    } else {
        d.iter().try_fold(0u64, |n, &b| {
            n.checked_mul(10)?.checked_add((b - b'0') as u64)
        })
    }
}

/// A cursor over one line.
pub(super) struct Cur<'a> {
    pub(super) s: &'a [u8],
    pub(super) p: usize,
}

impl<'a> Cur<'a> {
    #[inline]
    pub(super) fn ws(&mut self) {
        while let Some(&b) = self.s.get(self.p) {
            if b == b' ' || b == b'\t' {
                self.p += 1;
            } else {
                break;
            }
        }
    }

    #[inline]
    pub(super) fn peek(&self) -> Option<u8> {
        self.s.get(self.p).copied()
    }

    #[inline]
    pub(super) fn at_end(&self) -> bool {
        self.p >= self.s.len()
    }

    /// Whether the text at the cursor starts with `kw` (byte by byte: keywords are short, and a
    /// `memcmp` call per keyword showed in profiles).
    #[inline]
    pub(super) fn looking_at(&self, kw: &[u8]) -> bool {
        let rest = self.s.get(self.p..).unwrap_or(&[]);
        rest.len() >= kw.len() && rest.iter().zip(kw).all(|(a, b)| a == b)
    }

    #[inline]
    pub(super) fn eat(&mut self, kw: &[u8]) -> bool {
        if self.looking_at(kw) {
            self.p += kw.len();
            true
        } else {
            false
        }
    }

    /// `[a-zA-Z][a-zA-Z0-9_]*`, possibly empty.
    #[inline]
    pub(super) fn ident(&mut self) -> &'a [u8] {
        let start = self.p;
        if self.peek().is_some_and(|b| b.is_ascii_alphabetic()) {
            self.p += 1;
            while self
                .peek()
                .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
            {
                self.p += 1;
            }
        }
        &self.s[start..self.p]
    }

    /// `[0-9]*`.
    #[inline]
    pub(super) fn digits(&mut self) -> &'a [u8] {
        let start = self.p;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.p += 1;
        }
        &self.s[start..self.p]
    }

    /// `-` followed by a digit.
    pub(super) fn at_negative(&self) -> bool {
        self.peek() == Some(b'-') && self.s.get(self.p + 1).is_some_and(|b| b.is_ascii_digit())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kw {
    Send,
    Recv,
    Calc,
    Sleep,
    Reduce,
    Copy,
}

impl Kw {
    pub(super) const ALL: [Kw; 6] = [
        Kw::Send,
        Kw::Recv,
        Kw::Calc,
        Kw::Sleep,
        Kw::Reduce,
        Kw::Copy,
    ];

    pub(super) fn word(self) -> &'static str {
        match self {
            Kw::Send => "send",
            Kw::Recv => "recv",
            Kw::Calc => "calc",
            Kw::Sleep => "sleep",
            Kw::Reduce => "reduce",
            Kw::Copy => "copy",
        }
    }

    pub(super) fn from_word(w: &[u8]) -> Option<Kw> {
        Kw::ALL.into_iter().find(|k| k.word().as_bytes() == w)
    }
}

/// Optional clauses after an op's fixed part.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Clause {
    Tag,
    Cpu,
    Nic,
    Data,
    Reduce,
    With,
}

impl Clause {
    pub(super) fn word(self) -> &'static str {
        match self {
            Clause::Tag => "tag",
            Clause::Cpu => "cpu",
            Clause::Nic => "nic",
            Clause::Data => "data",
            Clause::Reduce => "reduce",
            Clause::With => "with",
        }
    }
}

#[derive(Default)]
pub(super) struct Clauses {
    pub(super) tag: Option<i32>,
    pub(super) cpu: Option<u16>,
    pub(super) nic: Option<u16>,
    pub(super) data: Option<(usize, Slice)>,
    pub(super) reduce: Option<Combine>,
    pub(super) with: Option<Slice>,
}
