//! The parser behind [`super::parse`] and [`super::parse_reader`]: fed one line at a time, it
//! builds each rank's program while reading and hands it to a [`ScheduleBuilder`] at the rank's
//! closing `}`, so memory holds the schedule being built and one rank of text (plus the programs
//! of ranks read ahead of a lower rank that has not appeared yet).
//!
//! The statement structure follows LogGOPSim's `txt2bin.re` scanner: at the start of a statement
//! an identifier is read greedily (so `send8b` is a label, not `send`), whereas keywords after
//! that point are matched as prefixes without a word boundary (`to1`, `tag0` and `8bto 1` are
//! accepted, as `txt2bin` accepts them).

use crate::schedule::{
    Collective, Combine, Dep, DepKind, Dtype, Meta, Op, OpKind, Payload, Program, Rank, ReduceOp,
    Schedule, ScheduleBuilder, ScheduleError, Slice, Slot, ANY_SOURCE, ANY_TAG, MAX_RANKS,
};
use crate::units::Time;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

type Result<T> = std::result::Result<T, ScheduleError>;

/// The longest line a GOAL reader takes (1 MiB): a longer one is no schedule.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// How many label names an "unknown label" error lists.
const LABELS_SHOWN: usize = 4;

mod lex;
mod values;

use lex::*;

struct Block {
    rank: Rank,
    at: Pos,
}

/// The labels of one rank block. Canonical `l<n>` labels (as `write_goal` and Schedgen write
/// them) are kept by number, without allocating; any other label by name.
#[derive(Default)]
struct Labels {
    numbered: FxHashMap<u64, u32>,
    named: FxHashMap<Box<[u8]>, u32>,
    /// The first few names, in definition order and joined by ", ", for error messages.
    first: Vec<u8>,
    shown: usize,
}

impl Labels {
    /// `n` if `l` is `l<n>` written without leading zeros.
    #[inline]
    fn number(l: &[u8]) -> Option<u64> {
        match l {
            [b'l', d @ ..]
                if !d.is_empty() && d.len() <= 18 && d.iter().all(u8::is_ascii_digit) =>
            {
                (d[0] != b'0' || d.len() == 1).then(|| to_u64(d).unwrap_or(u64::MAX))
            }
            _ => None,
        }
    }

    #[inline]
    fn get(&self, l: &[u8]) -> Option<u32> {
        match Labels::number(l) {
            Some(n) => self.numbered.get(&n).copied(),
            None => self.named.get(l).copied(),
        }
    }

    #[inline]
    fn insert(&mut self, l: &[u8], op: u32) {
        match Labels::number(l) {
            Some(n) => {
                self.numbered.insert(n, op);
            }
            None => {
                self.named.insert(l.into(), op);
            }
        }
        if self.shown < LABELS_SHOWN {
            if self.shown > 0 {
                self.first.extend_from_slice(b", ");
            }
            self.first.extend_from_slice(l);
            self.shown += 1;
        }
    }

    fn len(&self) -> usize {
        self.numbered.len() + self.named.len()
    }

    fn clear(&mut self) {
        self.numbered.clear();
        self.named.clear();
        self.first.clear();
        self.shown = 0;
    }
}

/// A dependency naming a label not defined yet, resolved at the end of the block.
struct Forward {
    a: Box<[u8]>,
    a_at: Pos,
    b: Box<[u8]>,
    b_at: Pos,
    kind: DepKind,
}

/// Line-fed parser state.
pub(crate) struct Parser {
    line_no: usize,
    last_len: usize,
    nranks: Option<(u32, Pos)>,
    meta: Meta,
    collective_at: Option<Pos>,
    name_at: Option<Pos>,
    builder: Option<ScheduleBuilder>,
    block: Option<Block>,
    /// An open `/* ...` comment.
    comment: Option<Pos>,
    prog: Program,
    op_pos: Vec<Pos>,
    labels: Labels,
    forward: Vec<Forward>,
    /// Programs of ranks read before a lower rank (validated already).
    held: BTreeMap<Rank, Program>,
}

impl Parser {
    pub(crate) fn new(name: &str) -> Parser {
        Parser {
            line_no: 0,
            last_len: 0,
            nranks: None,
            meta: Meta::sizes_only(name),
            collective_at: None,
            name_at: None,
            builder: None,
            block: None,
            comment: None,
            prog: Program::new(),
            op_pos: Vec::new(),
            labels: Labels::default(),
            forward: Vec::new(),
            held: BTreeMap::new(),
        }
    }

    fn pos(&self, s: &[u8], at: usize) -> Pos {
        Pos {
            line: self.line_no,
            col: column(s, at),
        }
    }

    fn err(&self, c: &Cur, at: usize, message: String) -> ScheduleError {
        self.pos(c.s, at).err(message)
    }

    /// The error `MESSAGE, found WHAT` at byte `at`, `WHAT` being the word that stands there
    /// (or `end of line`).
    fn err_found(&self, c: &Cur, at: usize, message: impl std::fmt::Display) -> ScheduleError {
        self.err(c, at, format!("{message}, found {}", found(c.s, at)))
    }

    /// Feeds one line, without its `\n` (a trailing `\r` is dropped).
    /// The error for a line longer than [`MAX_LINE`] (a file that is no GOAL text, or
    /// `/dev/zero`), before it is read whole.
    pub(crate) fn line_too_long(&self) -> ScheduleError {
        Pos {
            line: self.line_no + 1,
            col: 1,
        }
        .err(format!(
            "line longer than {} bytes: not a GOAL schedule",
            MAX_LINE
        ))
    }

    pub(crate) fn line(&mut self, raw: &[u8]) -> Result<()> {
        self.line_no += 1;
        if (self.line_no as u64).is_multiple_of(crate::cancel::EVERY) {
            crate::cancel::check()?;
        }
        let s = raw.strip_suffix(b"\r").unwrap_or(raw);
        self.last_len = s.len();
        let mut c = Cur { s, p: 0 };
        loop {
            if self.comment.is_some() {
                match find(&s[c.p..], b"*/") {
                    Some(i) => {
                        c.p += i + 2;
                        self.comment = None;
                    }
                    None => return Ok(()),
                }
            }
            c.ws();
            if c.at_end() || c.looking_at(b"//") {
                return Ok(());
            }
            if c.looking_at(b"/*") {
                self.comment = Some(self.pos(s, c.p));
                c.p += 2;
                continue;
            }
            if c.peek() == Some(b'}') {
                self.close_block(&c)?;
                c.p += 1;
                continue;
            }
            let start = c.p;
            let w = c.ident();
            if w.is_empty() {
                return Err(self.err(&c, start, self.expected_statement(s, start)));
            }
            // `w:` labels an op and `w requires ...` is a dependency, whatever the word.
            let after = c.p;
            c.ws();
            if c.peek() == Some(b':') {
                c.p += 1;
                return self.labelled_op(&mut c, w, start);
            }
            if c.looking_at(b"requires") || c.looking_at(b"irequires") {
                return self.dependency(&mut c, w, start);
            }
            c.p = after;
            match w {
                b"num_ranks" => self.num_ranks(&mut c, start)?,
                b"rank" => self.open_block(&mut c, start)?,
                b"collective" => return self.collective(&mut c, start),
                b"name" => return self.name(&mut c, start),
                _ => match Kw::from_word(w) {
                    Some(kw) => {
                        self.need_block(&c, start, kw.word())?;
                        return self.op(&mut c, kw, start, None);
                    }
                    None => return Err(self.err(&c, start, self.expected_statement(s, start))),
                },
            }
        }
    }

    fn expected_statement(&self, s: &[u8], at: usize) -> String {
        if self.block.is_some() {
            format!(
                "expected an op (send, recv, calc, reduce, copy, sleep), a label ('l1: send ...'), \
                 a dependency ('l2 requires l1') or '}}', found {}",
                found(s, at)
            )
        } else {
            format!(
                "expected 'num_ranks N', 'rank R {{', 'collective ...' or 'name ...', found {}",
                found(s, at)
            )
        }
    }

    /// After a statement: whitespace and comments. `true` if the line ends here (an unclosed
    /// `/*` stays open into the next lines).
    fn trailing(&mut self, c: &mut Cur) -> bool {
        loop {
            c.ws();
            if c.at_end() {
                return true;
            }
            if c.looking_at(b"//") {
                c.p = c.s.len();
                return true;
            }
            if c.looking_at(b"/*") {
                match find(&c.s[c.p + 2..], b"*/") {
                    Some(i) => {
                        c.p += i + 4;
                        continue;
                    }
                    None => {
                        self.comment = Some(self.pos(c.s, c.p));
                        c.p = c.s.len();
                        return true;
                    }
                }
            }
            return false;
        }
    }

    fn end_of_statement(&mut self, c: &mut Cur, what: &str) -> Result<()> {
        if self.trailing(c) {
            Ok(())
        } else {
            Err(self.err_found(c, c.p, format_args!("expected end of line after {what}")))
        }
    }

    fn need_block(&self, c: &Cur, at: usize, what: &str) -> Result<()> {
        if self.block.is_none() {
            return Err(self.err(
                c,
                at,
                format!("{what} outside a rank block; expected 'rank R {{' before it"),
            ));
        }
        Ok(())
    }

    fn before_blocks(&self, c: &Cur, at: usize, what: &str) -> Result<()> {
        if self.block.is_some() || self.builder.is_some() {
            return Err(self.err(
                c,
                at,
                format!("'{what}' must come before the first rank block"),
            ));
        }
        Ok(())
    }

    /// Eats the word `word`, or the error `expected 'WORD' after AFTER, found ...`.
    fn expect(&self, c: &mut Cur, word: &str, after: std::fmt::Arguments<'_>) -> Result<()> {
        if c.eat(word.as_bytes()) {
            return Ok(());
        }
        Err(self.err_found(c, c.p, format_args!("expected '{word}' after {after}")))
    }

    /// The digits at the cursor, or the error `expected WHAT, found ...` where none stand.
    fn digits<'a>(&self, c: &mut Cur<'a>, what: std::fmt::Arguments<'_>) -> Result<&'a [u8]> {
        let at = c.p;
        let d = c.digits();
        if d.is_empty() {
            return Err(self.err_found(c, at, format_args!("expected {what}")));
        }
        Ok(d)
    }

    /// A file-level statement `what` that may stand once (`first`: where it stood before),
    /// before the first rank block.
    fn once_before_blocks(&self, c: &Cur, at: usize, what: &str, first: Option<Pos>) -> Result<()> {
        self.before_blocks(c, at, what)?;
        match first {
            Some(p) => Err(self.err(
                c,
                at,
                format!("'{what}' given twice (first on line {})", p.line),
            )),
            None => Ok(()),
        }
    }

    // ---- file-level statements -------------------------------------------------------------

    fn num_ranks(&mut self, c: &mut Cur, at: usize) -> Result<()> {
        if self.block.is_some() {
            return Err(self.err(
                c,
                at,
                "'num_ranks' inside a rank block; it must come before the first rank block".into(),
            ));
        }
        c.ws();
        let d_at = c.p;
        let d = self.digits(c, format_args!("the number of ranks after 'num_ranks'"))?;
        let n = match to_u64(d) {
            Some(n) if (1..=MAX_RANKS).contains(&n) => n as u32,
            _ => {
                return Err(self.err(
                    c,
                    d_at,
                    format!("num_ranks {} is out of range (1 to {MAX_RANKS})", text(d)),
                ))
            }
        };
        match self.nranks {
            Some((m, p)) if m != n => Err(self.err(
                c,
                at,
                format!("num_ranks {n} contradicts num_ranks {m} on line {}", p.line),
            )),
            Some(_) => Ok(()),
            None => {
                // (Refused before the builder allocates its ranks.)
                crate::resources::check(
                    || format!("a GOAL schedule of {n} ranks"),
                    (n as u64).saturating_mul(crate::resources::SCHEDULE_BYTES_PER_RANK),
                    "read a schedule of fewer ranks",
                )?;
                self.nranks = Some((n, self.pos(c.s, at)));
                Ok(())
            }
        }
    }

    fn open_block(&mut self, c: &mut Cur, at: usize) -> Result<()> {
        c.ws();
        let d = self.digits(c, format_args!("a rank number after 'rank'"))?;
        c.ws();
        self.expect(c, "{", format_args!("'rank {}'", text(d)))?;
        if let Some(b) = &self.block {
            return Err(self.err(
                c,
                at,
                format!(
                    "rank {} block opened inside the block of rank {} (opened on line {}); \
                     expected '}}' first",
                    text(d),
                    b.rank,
                    b.at.line
                ),
            ));
        }
        let Some((n, _)) = self.nranks else {
            return Err(self.err(
                c,
                at,
                "expected 'num_ranks N' before the first rank block".into(),
            ));
        };
        let r = match to_u64(d) {
            Some(r) if r < n as u64 => r as Rank,
            _ => {
                return Err(self.err(
                    c,
                    at,
                    format!(
                        "rank {} is outside num_ranks {n} (ranks are 0..{})",
                        text(d),
                        n - 1
                    ),
                ))
            }
        };
        if self.builder.is_none() {
            self.builder = Some(ScheduleBuilder::new(n as u64, self.meta.clone())?);
        }
        let next = self.builder.as_ref().map_or(0, |b| b.next_rank());
        if r < next || self.held.contains_key(&r) {
            return Err(self.err(
                c,
                at,
                format!("rank {r} has a second block (a rank has at most one)"),
            ));
        }
        self.block = Some(Block {
            rank: r,
            at: self.pos(c.s, at),
        });
        Ok(())
    }

    fn close_block(&mut self, c: &Cur) -> Result<()> {
        let Some(block) = self.block.take() else {
            return Err(self.err(c, c.p, "'}' without an open rank block".into()));
        };
        let rank = block.rank;
        for f in std::mem::take(&mut self.forward) {
            let a = self.resolve(&f.a, f.a_at, rank)?;
            let b = self.resolve(&f.b, f.b_at, rank)?;
            self.prog.deps.push((
                a,
                Dep {
                    on: b,
                    kind: f.kind,
                },
            ));
        }
        let nranks = self.nranks.map_or(0, |n| n.0);
        let builder = self.builder.as_mut().expect("a block has a builder");
        if rank == builder.next_rank() {
            let pushed = builder.push(&mut self.prog);
            pushed.map_err(|e| map_program_error(&self.op_pos, block.at, e))?;
            while let Some(mut p) = self.held.remove(&builder.next_rank()) {
                builder
                    .push(&mut p)
                    .map_err(|e| map_program_error(&[], block.at, e))?;
            }
            self.prog.clear();
        } else {
            self.prog.normalize();
            self.prog
                .validate(rank, nranks)
                .map_err(|e| map_program_error(&self.op_pos, block.at, e))?;
            self.held.insert(rank, std::mem::take(&mut self.prog));
        }
        self.op_pos.clear();
        self.labels.clear();
        Ok(())
    }

    fn resolve(&self, label: &[u8], at: Pos, rank: Rank) -> Result<u32> {
        if let Some(i) = self.labels.get(label) {
            return Ok(i);
        }
        let defined = if self.labels.len() == 0 {
            format!("rank {rank} defines no labels")
        } else {
            let more = if self.labels.len() > self.labels.shown {
                ", ..."
            } else {
                ""
            };
            format!(
                "labels defined in rank {rank}: {}{more}",
                text(&self.labels.first)
            )
        };
        Err(at.err(format!(
            "unknown label '{}' in dependency ({defined})",
            text(label)
        )))
    }

    fn collective(&mut self, c: &mut Cur, at: usize) -> Result<()> {
        self.once_before_blocks(c, at, "collective", self.collective_at)?;
        c.ws();
        let n_at = c.p;
        let name = c.ident();
        if name.is_empty() {
            return Err(self.err_found(
                c,
                n_at,
                format_args!(
                    "expected a collective ({}) after 'collective'",
                    Collective::NAMES.join(", ")
                ),
            ));
        }
        let name = text(name);
        if !Collective::NAMES.contains(&name.as_ref()) {
            let e = Collective::parse(&name, None).expect_err("not a collective");
            return Err(self.err(c, n_at, e.to_string()));
        }
        let (mut count, mut dtype, mut op, mut block) = (None, None, None, None);
        while !self.trailing(c) {
            let k_at = c.p;
            let key = c.ident();
            c.ws();
            let v_at = c.p;
            let dup = match key {
                b"count" => {
                    let d = c.digits();
                    let v = to_u64(d).filter(|_| !d.is_empty()).ok_or_else(|| {
                        self.err_found(c, v_at, "expected an element count after 'count'")
                    })?;
                    count.replace(v).is_some()
                }
                b"dtype" => {
                    let w = c.ident();
                    let d = Dtype::parse(&text(w)).map_err(|e| self.err(c, v_at, e.to_string()))?;
                    dtype.replace(d).is_some()
                }
                b"block" => {
                    let d = c.digits();
                    let v = to_u64(d).filter(|_| !d.is_empty()).ok_or_else(|| {
                        self.err_found(c, v_at, "expected the elements per rank pair after 'block'")
                    })?;
                    block.replace((v, k_at)).is_some()
                }
                b"op" => {
                    let w = c.ident();
                    let o =
                        ReduceOp::parse(&text(w)).map_err(|e| self.err(c, v_at, e.to_string()))?;
                    op.replace(o).is_some()
                }
                _ => {
                    return Err(self.err_found(
                        c,
                        k_at,
                        "expected 'count', 'dtype', 'op', 'block' or end of line after \
                             the collective",
                    ))
                }
            };
            if dup {
                return Err(self.err(c, k_at, format!("'{}' given twice", text(key))));
            }
        }
        self.collective_at = Some(self.pos(c.s, at));
        self.meta.collective =
            Collective::parse(&name, op).map_err(|e| self.err(c, n_at, e.to_string()))?;
        match (self.meta.collective, block) {
            (Collective::Alltoall { .. }, Some((v, _))) => {
                self.meta.collective = Collective::Alltoall { block: v }
            }
            (Collective::Alltoall { .. }, None) => {
                return Err(self.err(
                    c,
                    n_at,
                    "an alltoall needs 'block B': the elements each rank sends to each rank".into(),
                ))
            }
            (other, Some((_, k_at))) => {
                return Err(self.err(
                    c,
                    k_at,
                    format!(
                        "'block' is an alltoall's; a collective {} has none",
                        other.name()
                    ),
                ))
            }
            (_, None) => {}
        }
        self.meta.count = count.unwrap_or(0);
        self.meta.dtype = dtype.unwrap_or(Dtype::Byte);
        Ok(())
    }

    fn name(&mut self, c: &mut Cur, at: usize) -> Result<()> {
        self.once_before_blocks(c, at, "name", self.name_at)?;
        c.ws();
        let v_at = c.p;
        let bytes = if c.eat(b"\"") {
            let mut out = Vec::new();
            loop {
                let Some(b) = c.peek() else {
                    return Err(self.err(
                        c,
                        v_at,
                        "unterminated quoted name: expected a closing '\"' on the same line".into(),
                    ));
                };
                c.p += 1;
                match b {
                    b'"' => break,
                    b'\\' => {
                        let e_at = c.p - 1;
                        let e = c.peek();
                        c.p += 1;
                        match e {
                            Some(b'\\') => out.push(b'\\'),
                            Some(b'"') => out.push(b'"'),
                            Some(b'n') => out.push(b'\n'),
                            Some(b'r') => out.push(b'\r'),
                            Some(b't') => out.push(b'\t'),
                            Some(b'x') => {
                                let h = c.s.get(c.p..c.p + 2).and_then(|h| {
                                    u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
                                });
                                match h {
                                    Some(v) if v < 0x80 => {
                                        out.push(v);
                                        c.p += 2;
                                    }
                                    _ => {
                                        return Err(self.err(
                                            c,
                                            e_at,
                                            "expected two hex digits below 80 after '\\x'".into(),
                                        ))
                                    }
                                }
                            }
                            _ => {
                                return Err(self.err(
                                    c,
                                    e_at,
                                    format!(
                                        "unknown escape {} in the name (accepted: \\\\ \\\" \\n \
                                         \\r \\t \\xHH)",
                                        found(c.s, e_at)
                                    ),
                                ))
                            }
                        }
                    }
                    _ => out.push(b),
                }
            }
            self.end_of_statement(c, "the quoted name")?;
            out
        } else {
            let mut end = c.s.len();
            while end > v_at && (c.s[end - 1] == b' ' || c.s[end - 1] == b'\t') {
                end -= 1;
            }
            c.p = c.s.len();
            c.s[v_at..end].to_vec()
        };
        let name = String::from_utf8(bytes)
            .map_err(|_| self.err(c, v_at, "the name is not valid UTF-8".into()))?;
        self.name_at = Some(self.pos(c.s, at));
        self.meta.name = name;
        Ok(())
    }

    // ---- statements inside a rank block ----------------------------------------------------

    fn labelled_op(&mut self, c: &mut Cur, label: &[u8], at: usize) -> Result<()> {
        if self.block.is_none() {
            let what = format!("label '{}'", text(label));
            return Err(self.err(
                c,
                at,
                format!("{what} outside a rank block; expected 'rank R {{' before it"),
            ));
        }
        c.ws();
        let k_at = c.p;
        let Some(kw) = Kw::ALL.into_iter().find(|k| c.eat(k.word().as_bytes())) else {
            return Err(self.err_found(
                c,
                k_at,
                format_args!(
                    "expected an op (send, recv, calc, reduce, copy, sleep) after the label \
                     '{}:'",
                    text(label)
                ),
            ));
        };
        self.op(c, kw, at, Some(label))
    }

    fn dependency(&mut self, c: &mut Cur, a: &[u8], a_at: usize) -> Result<()> {
        self.need_block(c, a_at, "a dependency")?;
        let (kind, word) = if c.eat(b"irequires") {
            (DepKind::IRequires, "irequires")
        } else {
            c.eat(b"requires");
            (DepKind::Requires, "requires")
        };
        c.ws();
        let b_at = c.p;
        let b = c.ident();
        if b.is_empty() {
            return Err(self.err_found(c, b_at, format_args!("expected a label after '{word}'")));
        }
        self.end_of_statement(c, "the dependency")?;
        if a == b {
            return Err(self.err(
                c,
                b_at,
                format!(
                    "'{} {word} {}': an op cannot depend on itself",
                    text(a),
                    text(b)
                ),
            ));
        }
        match (self.labels.get(a), self.labels.get(b)) {
            (Some(ia), Some(ib)) => self.prog.deps.push((ia, Dep { on: ib, kind })),
            _ => {
                let f = Forward {
                    a: a.into(),
                    a_at: self.pos(c.s, a_at),
                    b: b.into(),
                    b_at: self.pos(c.s, b_at),
                    kind,
                };
                self.forward.push(f);
            }
        }
        Ok(())
    }

    fn op(&mut self, c: &mut Cur, kw: Kw, at: usize, label: Option<&[u8]>) -> Result<()> {
        let rank = self.block.as_ref().map_or(0, |b| b.rank);
        if let Some(l) = label {
            if let Some(i) = self.labels.get(l) {
                return Err(self.err(
                    c,
                    at,
                    format!(
                        "label '{}' is defined twice in rank {rank} (first on line {})",
                        text(l),
                        self.op_pos[i as usize].line
                    ),
                ));
            }
        }
        let word = kw.word();
        let (kind, cl) = match kw {
            Kw::Send | Kw::Recv => {
                let recv = kw == Kw::Recv;
                c.ws();
                let size = self.size(c, word)?;
                c.ws();
                let dir = if recv { "from" } else { "to" };
                self.expect(c, dir, format_args!("the {word} size"))?;
                c.ws();
                let peer = self.peer(c, recv)?;
                let allowed: &[Clause] = if recv {
                    &[
                        Clause::Tag,
                        Clause::Cpu,
                        Clause::Nic,
                        Clause::Data,
                        Clause::Reduce,
                        Clause::With,
                    ]
                } else {
                    &[Clause::Tag, Clause::Cpu, Clause::Nic, Clause::Data]
                };
                let cl = self.clauses(c, word, allowed)?;
                let data = match cl.data {
                    None => Payload::Bytes(size),
                    Some((d_at, s)) => {
                        let elem = self.meta.dtype.size() as u128;
                        let bytes = s.len as u128 * elem;
                        if bytes != size as u128 {
                            return Err(self.err(
                                c,
                                d_at,
                                format!(
                                    "{word} size {size}b does not match data {s}: {} elements \
                                     of {} are {bytes} bytes",
                                    s.len, self.meta.dtype
                                ),
                            ));
                        }
                        Payload::Data(s)
                    }
                };
                let tag = cl.tag.unwrap_or(0);
                let kind = if recv {
                    OpKind::Recv {
                        peer,
                        tag,
                        data,
                        combine: cl.reduce.unwrap_or(Combine::Assign),
                        operand: cl.with,
                    }
                } else {
                    OpKind::Send { peer, tag, data }
                };
                (kind, cl)
            }
            Kw::Calc | Kw::Sleep => {
                c.ws();
                let time = self.time(c, word)?;
                let cl = self.clauses(c, word, &[Clause::Cpu, Clause::Nic])?;
                let kind = if kw == Kw::Calc {
                    OpKind::Compute { time }
                } else {
                    OpKind::Sleep { time }
                };
                (kind, cl)
            }
            Kw::Reduce | Kw::Copy => {
                c.ws();
                let src = self.slice(c)?;
                c.ws();
                let joint = if kw == Kw::Reduce { "into" } else { "to" };
                self.expect(c, joint, format_args!("the {word} source {src}"))?;
                c.ws();
                let dst = self.slice(c)?;
                let kind = if kw == Kw::Reduce {
                    c.ws();
                    let combine = self.before_after(c, "after the reduce destination")?;
                    OpKind::Reduce { src, dst, combine }
                } else {
                    OpKind::Copy { src, dst }
                };
                let cl = self.clauses(c, word, &[Clause::Cpu, Clause::Nic])?;
                (kind, cl)
            }
        };
        let idx = self.prog.ops.len() as u32;
        self.prog.ops.push(Op {
            kind,
            cpu: cl.cpu.unwrap_or(0),
            nic: cl.nic.unwrap_or(0),
        });
        self.op_pos.push(self.pos(c.s, at));
        if let Some(l) = label {
            self.labels.insert(l, idx);
        }
        Ok(())
    }

    /// Ends the input: checks that nothing is left open and builds the schedule.
    pub(crate) fn finish(mut self) -> Result<Schedule> {
        if let Some(p) = self.comment {
            return Err(
                p.err("unterminated '/*' comment: no '*/' before the end of the file".into())
            );
        }
        if let Some(b) = &self.block {
            return Err(b.at.err(format!(
                "rank {} block is not closed: expected '}}' before the end of the file",
                b.rank
            )));
        }
        let Some((n, _)) = self.nranks else {
            let at = Pos {
                line: self.line_no.max(1),
                col: self.last_len + 1,
            };
            return Err(
                at.err("missing 'num_ranks N': the file never says how many ranks it has".into())
            );
        };
        let mut builder = match self.builder.take() {
            Some(b) => b,
            None => ScheduleBuilder::new(n as u64, self.meta.clone())?,
        };
        let mut empty = Program::new();
        while builder.next_rank() < n {
            match self.held.remove(&builder.next_rank()) {
                Some(mut p) => builder.push(&mut p)?,
                None => builder.push(&mut empty)?,
            }
        }
        builder.finish()
    }
}

/// A program error from the builder, placed at the op it names.
fn map_program_error(op_pos: &[Pos], block: Pos, e: ScheduleError) -> ScheduleError {
    match e {
        ScheduleError::BadOp { op, reason, .. } => op_pos
            .get(op as usize)
            .copied()
            .unwrap_or(block)
            .err(reason),
        ScheduleError::BadDependency { op, on, reason, .. } => op_pos
            .get(op as usize)
            .copied()
            .unwrap_or(block)
            .err(format!("dependency on op {on}: {reason}")),
        other => other,
    }
}
