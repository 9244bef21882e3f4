//! The values of a GOAL statement: clauses, sizes, peers, tags, slices and times.

use super::*;

impl Parser {
    /// Optional clauses, in any order, each at most once, up to the end of the line.
    pub(super) fn clauses(
        &mut self,
        c: &mut Cur,
        word: &str,
        allowed: &[Clause],
    ) -> Result<Clauses> {
        let mut cl = Clauses::default();
        while !self.trailing(c) {
            let k_at = c.p;
            let Some(k) = allowed.iter().copied().find(|k| c.eat(k.word().as_bytes())) else {
                let names: Vec<String> =
                    allowed.iter().map(|k| format!("'{}'", k.word())).collect();
                return Err(self.err_found(
                    c,
                    k_at,
                    format_args!(
                        "expected {} or end of line after the {word}",
                        names.join(", ")
                    ),
                ));
            };
            c.ws();
            let dup = match k {
                Clause::Tag => {
                    let t = self.tag(c)?;
                    cl.tag.replace(t).is_some()
                }
                Clause::Cpu => {
                    let v = self.small(c, "cpu")?;
                    cl.cpu.replace(v).is_some()
                }
                Clause::Nic => {
                    let v = self.small(c, "nic")?;
                    cl.nic.replace(v).is_some()
                }
                Clause::Data => {
                    let d_at = c.p;
                    let s = self.slice(c)?;
                    cl.data.replace((d_at, s)).is_some()
                }
                Clause::Reduce => {
                    let comb = self.before_after(c, "after 'reduce'")?;
                    cl.reduce.replace(comb).is_some()
                }
                Clause::With => {
                    let s = self.slice(c)?;
                    cl.with.replace(s).is_some()
                }
            };
            if dup {
                return Err(self.err(c, k_at, format!("'{}' given twice", k.word())));
            }
        }
        Ok(cl)
    }

    pub(super) fn size(&self, c: &mut Cur, word: &str) -> Result<u64> {
        let at = c.p;
        if c.at_negative() {
            return Err(self.err_found(
                c,
                at,
                format_args!("{word} size must be a whole number of bytes >= 0"),
            ));
        }
        let d = self.digits(c, format_args!("a size in bytes after '{word}' (e.g. 8b)"))?;
        let Some(size) = to_u64(d) else {
            return Err(self.err(
                c,
                at,
                format!(
                    "{word} size {} is too large (at most {} bytes)",
                    text(d),
                    u64::MAX
                ),
            ));
        };
        c.ws();
        if !c.eat(b"b") {
            return Err(self.err_found(
                c,
                c.p,
                format_args!(
                    "expected 'b' after the {word} size {size} (sizes are in bytes, e.g. \
                     {size}b)"
                ),
            ));
        }
        Ok(size)
    }

    pub(super) fn peer(&self, c: &mut Cur, recv: bool) -> Result<Rank> {
        let at = c.p;
        let n = self.nranks.map_or(0, |n| n.0);
        let (what, any) = if recv {
            ("recv from", ", or -1 for any source")
        } else {
            ("send to", "")
        };
        if c.at_negative() {
            c.p += 1;
            let d = c.digits();
            if recv && d == b"1" {
                return Ok(ANY_SOURCE);
            }
            return Err(self.err(
                c,
                at,
                format!("{what} rank -{}: ranks are 0..{}{any}", text(d), n - 1),
            ));
        }
        let expect = if recv {
            "a rank or -1 after 'from'"
        } else {
            "a rank after 'to'"
        };
        let d = self.digits(c, format_args!("{expect}"))?;
        match to_u64(d) {
            Some(r) if r < n as u64 => Ok(r as Rank),
            _ => Err(self.err(
                c,
                at,
                format!(
                    "{what} rank {} but num_ranks is {n} (ranks are 0..{}{any})",
                    text(d),
                    n - 1
                ),
            )),
        }
    }

    pub(super) fn tag(&self, c: &mut Cur) -> Result<i32> {
        let at = c.p;
        let neg = c.eat(b"-");
        let d = c.digits();
        if d.is_empty() {
            return Err(self.err_found(
                c,
                at,
                "expected a tag (an integer >= 0, or -1 for any) after 'tag'",
            ));
        }
        match (neg, to_u64(d)) {
            (true, Some(1)) => Ok(ANY_TAG),
            (false, Some(t)) if t <= i32::MAX as u64 => Ok(t as i32),
            _ => Err(self.err(
                c,
                at,
                format!(
                    "tag {}{} is out of range (tags are 0..{}, or -1 for any)",
                    if neg { "-" } else { "" },
                    text(d),
                    i32::MAX
                ),
            )),
        }
    }

    pub(super) fn small(&self, c: &mut Cur, what: &str) -> Result<u16> {
        let at = c.p;
        let d = self.digits(c, format_args!("a number after '{what}'"))?;
        match to_u64(d) {
            Some(v) if v <= u16::MAX as u64 => Ok(v as u16),
            _ => Err(self.err(
                c,
                at,
                format!("{what} {} is too large (at most {})", text(d), u16::MAX),
            )),
        }
    }

    pub(super) fn before_after(&self, c: &mut Cur, where_: &str) -> Result<Combine> {
        if c.eat(b"before") {
            Ok(Combine::Before)
        } else if c.eat(b"after") {
            Ok(Combine::After)
        } else {
            Err(self.err_found(
                c,
                c.p,
                format_args!(
                    "expected 'before' (dst = src op dst) or 'after' (dst = dst op src) \
                     {where_}"
                ),
            ))
        }
    }

    /// `in[a:b]`, `out[a:b]` or `scratchK[a:b]`.
    pub(super) fn slice(&self, c: &mut Cur) -> Result<Slice> {
        let at = c.p;
        let slot = if c.eat(b"scratch") {
            let k_at = c.p;
            let d = c.digits();
            match to_u64(d) {
                Some(k) if !d.is_empty() && k <= u16::MAX as u64 => Slot::Scratch(k as u16),
                _ => {
                    return Err(self.err_found(
                        c,
                        k_at,
                        format_args!(
                            "expected a scratch buffer number 0..{} after 'scratch'",
                            u16::MAX
                        ),
                    ))
                }
            }
        } else if c.eat(b"out") {
            Slot::Output
        } else if c.eat(b"in") {
            Slot::Input
        } else {
            return Err(self.err_found(
                c,
                at,
                "expected a buffer slice (in[a:b], out[a:b] or scratchK[a:b])",
            ));
        };
        let bound = |c: &mut Cur, before: u8, what: &str| -> Result<u64> {
            if !c.eat(&[before]) {
                return Err(self.err_found(
                    c,
                    c.p,
                    format_args!("expected '{}' in the slice (e.g. in[0:8])", before as char),
                ));
            }
            let d_at = c.p;
            let d = c.digits();
            match to_u64(d) {
                Some(v) if !d.is_empty() => Ok(v),
                _ => Err(self.err_found(
                    c,
                    d_at,
                    format_args!("expected the {what} element of the slice"),
                )),
            }
        };
        let a = bound(c, b'[', "first")?;
        let b = bound(c, b':', "end")?;
        if !c.eat(b"]") {
            return Err(self.err_found(c, c.p, "expected ']' to close the slice"));
        }
        if b < a {
            return Err(self.err(
                c,
                at,
                format!("slice {slot}[{a}:{b}] ends before it starts"),
            ));
        }
        Ok(Slice::new(slot, a, b - a))
    }

    /// A time: digits, an optional decimal fraction and an optional unit; a bare number is ns.
    /// Exact integer arithmetic (no floating point) so every picosecond value round-trips.
    pub(super) fn time(&self, c: &mut Cur, word: &str) -> Result<Time> {
        let at = c.p;
        let expected = || {
            format!(
                "expected a time after '{word}' (a number of ns, or with a unit: 250ns, \
                 1.5us)"
            )
        };
        if c.at_negative() {
            return Err(self.err_found(c, at, format_args!("{word} time must be >= 0")));
        }
        let int = c.digits();
        if int.is_empty() {
            return Err(self.err_found(c, at, expected()));
        }
        let mut frac: &[u8] = &[];
        if c.peek() == Some(b'.') {
            c.p += 1;
            frac = c.digits();
            if frac.is_empty() {
                return Err(self.err_found(c, at, expected()));
            }
        }
        let u_at = c.p;
        while c
            .peek()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == 0xC2 || b == 0xB5)
        {
            c.p += 1;
        }
        let unit = &c.s[u_at..c.p];
        let scale: u128 = match unit {
            b"" => 1_000,
            b"ps" => 1,
            b"ns" => 1_000,
            b"us" | b"\xc2\xb5s" => 1_000_000,
            b"ms" => 1_000_000_000,
            b"s" => 1_000_000_000_000,
            // `calc 100cpu 1`, as txt2bin reads it: no unit, then the cpu clause.
            _ if unit.starts_with(b"cpu") || unit.starts_with(b"nic") => {
                c.p = u_at;
                1_000
            }
            _ => {
                return Err(self.err(
                    c,
                    u_at,
                    format!(
                        "unknown time unit '{}' (units are ps, ns, us, ms, s; a bare number is ns)",
                        text(unit)
                    ),
                ))
            }
        };
        let too_large = || {
            self.err(
                c,
                at,
                format!(
                    "{word} time {} is too large (at most {} ps)",
                    text(&c.s[at..c.p]),
                    u64::MAX
                ),
            )
        };
        if int.len() > 30 || frac.len() > 30 {
            return Err(too_large());
        }
        let digits = |d: &[u8]| d.iter().fold(0u128, |n, &b| n * 10 + (b - b'0') as u128);
        let whole = digits(int) * scale;
        let den = 10u128.pow(frac.len() as u32);
        let part = digits(frac) * scale;
        if !part.is_multiple_of(den) {
            return Err(self.err(
                c,
                at,
                format!(
                    "{word} time {} is finer than one picosecond, the simulator's resolution",
                    text(&c.s[at..c.p])
                ),
            ));
        }
        let ps = whole + part / den;
        if ps > u64::MAX as u128 {
            return Err(too_large());
        }
        Ok(ps as Time)
    }
}
