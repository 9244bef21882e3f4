//! Schedule strings of recursive multiplying (Ruefenacht, Bull, Booth 2017, section 4.2):
//! parsing, printing, and checking that a schedule fits a number of ranks.
//!
//! # Grammar
//! A schedule is a comma-separated list of stages (no spaces; an empty string is the empty
//! schedule, which fits one rank):
//!
//! | stage      | meaning |
//! |------------|---------|
//! | `aB`       | multi-way exchange: each rank exchanges with the `B − 1` other members of its group (`B ≥ 2`) |
//! | `cTmB`     | collapse: the ranks below the threshold `T` fold into one rank per group of `B` (the group's last rank); `B ≥ 2` divides `T` |
//! | `eTmB`     | expand: the inverse of `cTmB` (the folded ranks receive the result) |
//! | `mRgGaB`   | merge: a multi-way exchange of factor `B` that also takes in the `R` remainder ranks; `G` is the number of groups of the stage |
//! | `nRgGaB`   | inverse merge: a multi-way exchange of factor `B` whose groups also send their partial results to the `R` remainder ranks; `G` groups |
//!
//! Structure: `c…` stages come first, their `e…` stages last in reverse order with the same `T`
//! and `B` (nested like brackets); in between, either only `a` stages, or an `m` stage, any `a`
//! stages and an `n` stage with the same `R`. On `N` ranks each collapse leaves
//! `N − T + T/B` ranks, a merge `N − R`; the factors of the exchanges (`a`, `m` and `n` stages)
//! multiply to what is left, and `G = (N − R)/B` for the merge and inverse merge.
//!
//! The seed's examples: `a8,a3,a4` (96 ranks), `c6m2,a2,a2,e6m2` (MPICH's fix on 7 ranks),
//! `m1g2a3,n1g3a2` and `m3g2a2,n3g2a2` (7 ranks in two stages).

use std::fmt;

/// One stage of a recursive multiplying schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// `aB`: a `B`-way exchange.
    Factor(u32),
    /// `cTmB`: the ranks below `threshold` fold into one rank per group of `base`.
    Collapse {
        /// `T`, a multiple of `base`.
        threshold: u32,
        /// `B ≥ 2`.
        base: u32,
    },
    /// `eTmB`: the folded ranks of the matching collapse receive the result.
    Expand {
        /// `T`.
        threshold: u32,
        /// `B`.
        base: u32,
    },
    /// `mRgGaB`: a `base`-way exchange that also takes in `remainder` ranks.
    Merge {
        /// `R ≥ 1`.
        remainder: u32,
        /// `G`, the number of groups of the stage.
        groups: u32,
        /// `B ≥ 2`.
        base: u32,
    },
    /// `nRgGaB`: a `base`-way exchange whose groups also send to the `remainder` ranks.
    InverseMerge {
        /// `R ≥ 1`.
        remainder: u32,
        /// `G`, the number of groups of the stage.
        groups: u32,
        /// `B ≥ 2`.
        base: u32,
    },
}

impl Stage {
    /// The exchange factor of an `a`, `m` or `n` stage, `None` for collapse and expand.
    pub const fn factor(&self) -> Option<u32> {
        match *self {
            Stage::Factor(b) => Some(b),
            Stage::Merge { base, .. } | Stage::InverseMerge { base, .. } => Some(base),
            Stage::Collapse { .. } | Stage::Expand { .. } => None,
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Stage::Factor(b) => write!(f, "a{b}"),
            Stage::Collapse { threshold, base } => write!(f, "c{threshold}m{base}"),
            Stage::Expand { threshold, base } => write!(f, "e{threshold}m{base}"),
            Stage::Merge {
                remainder,
                groups,
                base,
            } => write!(f, "m{remainder}g{groups}a{base}"),
            Stage::InverseMerge {
                remainder,
                groups,
                base,
            } => write!(f, "n{remainder}g{groups}a{base}"),
        }
    }
}

/// A parsed recursive multiplying schedule such as `a8,a3,a4` or `c6m2,a2,a2,e6m2`.
///
/// Parsing ([`ScheduleString::parse`]) checks the syntax and the structure (collapses around
/// the rest, merges paired); [`ScheduleString::fit`] checks the arithmetic against a number of
/// ranks. `Display` prints the canonical text, which parses back to the same schedule.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ScheduleString {
    stages: Vec<Stage>,
}

/// Why a schedule string was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScheduleStringError {
    /// A stage that is not written as the grammar says.
    Syntax {
        /// The schedule text.
        text: String,
        /// 1-based index of the bad stage.
        stage: usize,
        /// Why.
        reason: String,
    },
    /// Stages in an order the grammar does not allow (an expand without its collapse, ...).
    Structure {
        /// The schedule text.
        text: String,
        /// Why.
        reason: String,
    },
    /// A well-formed schedule that does not fit the number of ranks.
    DoesNotFit {
        /// The schedule text.
        text: String,
        /// The number of ranks.
        nranks: u32,
        /// Why.
        reason: String,
        /// Schedules that fit (canonical text).
        suggestions: Vec<String>,
    },
}

impl ScheduleStringError {
    /// The schedule text that was refused.
    pub fn text(&self) -> &str {
        match self {
            ScheduleStringError::Syntax { text, .. }
            | ScheduleStringError::Structure { text, .. }
            | ScheduleStringError::DoesNotFit { text, .. } => text,
        }
    }

    /// The message without the leading `invalid schedule '…': `.
    pub fn reason(&self) -> String {
        match self {
            ScheduleStringError::Syntax { stage, reason, .. } => {
                format!("stage {stage}: {reason}")
            }
            ScheduleStringError::Structure { reason, .. } => reason.clone(),
            ScheduleStringError::DoesNotFit {
                nranks,
                reason,
                suggestions,
                ..
            } => {
                let mut s = format!("it does not fit {}: {reason}", ranks(*nranks as u64));
                if !suggestions.is_empty() {
                    let list: Vec<String> = suggestions
                        .iter()
                        .map(|x| {
                            if x.is_empty() {
                                "'' (the empty schedule)".to_string()
                            } else {
                                format!("'{x}'")
                            }
                        })
                        .collect();
                    s.push_str(&format!(
                        "; schedules that fit {} include {}",
                        ranks(*nranks as u64),
                        list.join(", ")
                    ));
                }
                s
            }
        }
    }
}

impl fmt::Display for ScheduleStringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid schedule '{}': {}", self.text(), self.reason())
    }
}

impl std::error::Error for ScheduleStringError {}

impl From<ScheduleStringError> for crate::schedule::ScheduleError {
    fn from(e: ScheduleStringError) -> Self {
        match e {
            ScheduleStringError::DoesNotFit {
                ref suggestions, ..
            } => crate::schedule::ScheduleError::DoesNotFit {
                name: "schedule".into(),
                value: e.text().to_string(),
                reason: e.reason(),
                fits: suggestions.clone(),
            },
            _ => crate::schedule::ScheduleError::BadParameter {
                name: "schedule".into(),
                value: e.text().to_string(),
                reason: e.reason(),
            },
        }
    }
}

/// `1 rank`, `7 ranks`.
fn ranks(n: u64) -> String {
    if n == 1 {
        "1 rank".into()
    } else {
        format!("{n} ranks")
    }
}

/// The accepted stage forms, for error messages.
pub const STAGE_FORMS: &str = "aB (B >= 2), cTmB, eTmB, mRgGaB, nRgGaB";

/// Largest stage parameter accepted (rank counts are `u32`).
const MAX_PARAM: u64 = u32::MAX as u64;

/// Reads `digits` at the start of `s`: the value and the rest.
fn number(s: &str) -> Option<(u64, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    let v = s[..end].parse::<u64>().ok()?;
    Some((v, &s[end..]))
}

fn parse_stage(s: &str) -> Result<Stage, String> {
    let bad = || format!("'{s}' is not a stage; accepted stages: {STAGE_FORMS}");
    let mut chars = s.chars();
    let head = chars.next().ok_or_else(|| {
        format!("empty stage (two commas in a row, or a trailing comma); accepted: {STAGE_FORMS}")
    })?;
    let rest = chars.as_str();
    // Leading zeros, signs and spaces are refused so that every schedule has one spelling.
    let num = |t: &str| -> Result<(u32, String), String> {
        let (v, r) = number(t).ok_or_else(bad)?;
        if t.starts_with('0') && t.len() > 1 && t.as_bytes()[1].is_ascii_digit() {
            return Err(format!("'{s}': numbers are written without leading zeros"));
        }
        if v > MAX_PARAM {
            return Err(format!("'{s}': {v} is larger than {MAX_PARAM}"));
        }
        Ok((v as u32, r.to_string()))
    };
    let factor_ok = |what: &str, b: u32| -> Result<(), String> {
        if b < 2 {
            Err(format!(
                "'{s}': the {what} must be at least 2 (a stage of 1 exchanges nothing)"
            ))
        } else {
            Ok(())
        }
    };
    match head {
        'a' => {
            let (b, r) = num(rest)?;
            if !r.is_empty() {
                return Err(bad());
            }
            factor_ok("factor B of aB", b)?;
            Ok(Stage::Factor(b))
        }
        'c' | 'e' => {
            let (t, r) = num(rest)?;
            let r = r.strip_prefix('m').ok_or_else(bad)?;
            let (b, r) = num(r)?;
            if !r.is_empty() {
                return Err(bad());
            }
            factor_ok("base B of cTmB / eTmB", b)?;
            if t == 0 || t % b != 0 {
                return Err(format!(
                    "'{s}': the threshold T = {t} must be a positive multiple of the base B = {b}"
                ));
            }
            Ok(if head == 'c' {
                Stage::Collapse {
                    threshold: t,
                    base: b,
                }
            } else {
                Stage::Expand {
                    threshold: t,
                    base: b,
                }
            })
        }
        'm' | 'n' => {
            let (rem, r) = num(rest)?;
            let r = r.strip_prefix('g').ok_or_else(bad)?;
            let (g, r) = num(r)?;
            let r = r.strip_prefix('a').ok_or_else(bad)?;
            let (b, r) = num(r)?;
            if !r.is_empty() {
                return Err(bad());
            }
            if rem == 0 {
                return Err(format!(
                    "'{s}': the remainder R must be at least 1 (with no remainder write aB)"
                ));
            }
            if g == 0 {
                return Err(format!("'{s}': the number of groups G must be at least 1"));
            }
            factor_ok("factor B of mRgGaB / nRgGaB", b)?;
            Ok(if head == 'm' {
                Stage::Merge {
                    remainder: rem,
                    groups: g,
                    base: b,
                }
            } else {
                Stage::InverseMerge {
                    remainder: rem,
                    groups: g,
                    base: b,
                }
            })
        }
        _ => Err(bad()),
    }
}

/// The structure of a schedule: collapse levels around a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Number of collapse (and expand) stages.
    pub collapses: usize,
    /// Whether the body starts with a merge and ends with an inverse merge.
    pub merged: bool,
}

impl ScheduleString {
    /// The empty schedule (fits one rank).
    pub fn empty() -> ScheduleString {
        ScheduleString { stages: Vec::new() }
    }

    /// A schedule of these stages, checked like [`ScheduleString::parse`] checks text.
    pub fn new(stages: Vec<Stage>) -> Result<ScheduleString, ScheduleStringError> {
        let s = ScheduleString { stages };
        s.shape()?;
        for (i, st) in s.stages.iter().enumerate() {
            // Re-parse the printed stage so that values the text form refuses are refused here.
            parse_stage(&st.to_string()).map_err(|reason| ScheduleStringError::Syntax {
                text: s.to_string(),
                stage: i + 1,
                reason,
            })?;
        }
        Ok(s)
    }

    /// Only `a` stages of these factors (each ≥ 2).
    pub fn factored(factors: &[u32]) -> Result<ScheduleString, ScheduleStringError> {
        ScheduleString::new(factors.iter().map(|&b| Stage::Factor(b)).collect())
    }

    /// Parses a schedule such as `a8,a3,a4`. See the [module docs](self) for the grammar.
    pub fn parse(text: &str) -> Result<ScheduleString, ScheduleStringError> {
        if text.is_empty() {
            return Ok(ScheduleString::empty());
        }
        let mut stages = Vec::new();
        for (i, part) in text.split(',').enumerate() {
            let st = parse_stage(part).map_err(|reason| ScheduleStringError::Syntax {
                text: text.to_string(),
                stage: i + 1,
                reason,
            })?;
            stages.push(st);
        }
        let s = ScheduleString { stages };
        s.shape().map_err(|e| match e {
            ScheduleStringError::Structure { reason, .. } => ScheduleStringError::Structure {
                text: text.to_string(),
                reason,
            },
            other => other,
        })?;
        Ok(s)
    }

    /// The stages, in order.
    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// Number of stages (communication rounds as the paper counts them).
    pub fn len(&self) -> usize {
        self.stages.len()
    }

    /// Whether the schedule has no stage.
    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }

    /// Whether the schedule is only `a` stages.
    pub fn is_factored(&self) -> bool {
        self.stages.iter().all(|s| matches!(s, Stage::Factor(_)))
    }

    /// The factors of the exchange stages (`a`, `m`, `n`), in order.
    pub fn factors(&self) -> Vec<u32> {
        self.stages.iter().filter_map(|s| s.factor()).collect()
    }

    fn structure_error(&self, reason: String) -> ScheduleStringError {
        ScheduleStringError::Structure {
            text: self.to_string(),
            reason,
        }
    }

    /// Checks the order of the stages (not the numbers).
    pub(crate) fn shape(&self) -> Result<Shape, ScheduleStringError> {
        let st = &self.stages;
        let collapses = st
            .iter()
            .take_while(|s| matches!(s, Stage::Collapse { .. }))
            .count();
        let expands = st
            .iter()
            .rev()
            .take_while(|s| matches!(s, Stage::Expand { .. }))
            .count();
        // A stage is never both a collapse and an expand, so the two runs do not overlap.
        debug_assert!(collapses + expands <= st.len());
        let body = &st[collapses..st.len() - expands];
        // Collapse / expand stages anywhere else, or unmatched.
        for s in body {
            match s {
                Stage::Collapse { .. } => {
                    return Err(self.structure_error(format!(
                        "'{s}' must come before every other stage (collapses are the first stages)"
                    )))
                }
                Stage::Expand { .. } => {
                    return Err(self.structure_error(format!(
                        "'{s}' must come after every other stage (expands are the last stages)"
                    )))
                }
                _ => {}
            }
        }
        if collapses != expands {
            return Err(self.structure_error(format!(
                "{collapses} collapse stage(s) but {expands} expand stage(s); every cTmB needs \
                 an eTmB with the same T and B at the mirrored position"
            )));
        }
        for i in 0..collapses {
            let (c, e) = (st[i], st[st.len() - 1 - i]);
            if let (
                Stage::Collapse {
                    threshold: t1,
                    base: b1,
                },
                Stage::Expand {
                    threshold: t2,
                    base: b2,
                },
            ) = (c, e)
            {
                if (t1, b1) != (t2, b2) {
                    return Err(self.structure_error(format!(
                        "'{c}' is closed by '{e}'; the expand must repeat the collapse's T and B \
                         (e{t1}m{b1})"
                    )));
                }
            }
        }
        let merges = body
            .iter()
            .filter(|s| matches!(s, Stage::Merge { .. }))
            .count();
        let inverse = body
            .iter()
            .filter(|s| matches!(s, Stage::InverseMerge { .. }))
            .count();
        let merged = merges > 0 || inverse > 0;
        if merged {
            let first = body.first();
            let last = body.last();
            let ok = merges == 1
                && inverse == 1
                && body.len() >= 2
                && matches!(first, Some(Stage::Merge { .. }))
                && matches!(last, Some(Stage::InverseMerge { .. }));
            if !ok {
                return Err(self.structure_error(
                    "a merged schedule has one mRgGaB as its first exchange stage and one \
                     nRgGaB as its last, with only aB stages between (e.g. m1g2a3,n1g3a2)"
                        .into(),
                ));
            }
            if let (
                Some(Stage::Merge { remainder: r1, .. }),
                Some(Stage::InverseMerge { remainder: r2, .. }),
            ) = (first, last)
            {
                if r1 != r2 {
                    return Err(self.structure_error(format!(
                        "the merge takes in {r1} remainder rank(s) but the inverse merge serves \
                         {r2}; R must be the same in both"
                    )));
                }
            }
        }
        Ok(Shape { collapses, merged })
    }

    /// The number of ranks the schedule fits, if any: the only `N` for which
    /// [`ScheduleString::fit`] succeeds.
    pub fn nranks(&self) -> Option<u32> {
        let shape = self.shape().ok()?;
        let body = &self.stages[shape.collapses..self.stages.len() - shape.collapses];
        let mut n: u64 = 1;
        for s in body {
            n = n.checked_mul(s.factor()? as u64)?;
        }
        if let Some(Stage::Merge { remainder, .. }) = body.first() {
            n = n.checked_add(*remainder as u64)?;
        }
        // Unwind the collapses from the inside: n_outer − T + T/B = n_inner.
        for s in self.stages[..shape.collapses].iter().rev() {
            if let Stage::Collapse { threshold, base } = *s {
                n = n.checked_add(threshold as u64 - (threshold / base) as u64)?;
            }
        }
        let n = u32::try_from(n).ok()?;
        self.fit_unsuggested(n).ok().map(|_| n)
    }

    /// Checks that the schedule fits `nranks` ranks and returns its plan; the error says why
    /// not, without suggestions ([`ScheduleString::fit`] adds them).
    pub fn fit_unsuggested(&self, nranks: u32) -> Result<Plan, ScheduleStringError> {
        self.plan(nranks)
            .map_err(|reason| ScheduleStringError::DoesNotFit {
                text: self.to_string(),
                nranks,
                reason,
                suggestions: Vec::new(),
            })
    }

    fn plan(&self, nranks: u32) -> Result<Plan, String> {
        let shape = self.shape().map_err(|e| e.reason())?;
        if nranks == 0 {
            return Err("an allreduce has at least 1 rank".into());
        }
        let st = &self.stages;
        let mut n = nranks as u64;
        let mut levels = Vec::with_capacity(shape.collapses + 1);
        for (i, s) in st[..shape.collapses].iter().enumerate() {
            if let Stage::Collapse { threshold, base } = *s {
                let (t, b) = (threshold as u64, base as u64);
                if t > n {
                    return Err(format!(
                        "'{s}' folds the ranks below T = {t}, but only {} are there",
                        ranks(n)
                    ));
                }
                levels.push(Level::Collapse {
                    threshold,
                    base,
                    size: n as u32,
                    collapse_tag: i as i32,
                    expand_tag: (st.len() - 1 - i) as i32,
                });
                n = n - t + t / b;
            }
        }
        let body_start = shape.collapses;
        let body = &st[body_start..st.len() - shape.collapses];
        if shape.merged {
            let (
                Stage::Merge {
                    remainder,
                    groups: g1,
                    base: b1,
                },
                Stage::InverseMerge {
                    groups: gk,
                    base: bk,
                    ..
                },
            ) = (body[0], body[body.len() - 1])
            else {
                unreachable!("shape() checked the merge stages");
            };
            if remainder as u64 >= n {
                return Err(format!(
                    "'{}' sets {} aside, but only {} are there; R must be smaller",
                    body[0],
                    ranks(remainder as u64),
                    ranks(n)
                ));
            }
            let inner = n - remainder as u64;
            let product = product(body);
            if product != Some(inner) {
                return Err(format!(
                    "{} minus the remainder R = {remainder} leave {inner}, but {}",
                    ranks(n),
                    product_text(body, product)
                ));
            }
            for (s, g, b) in [(body[0], g1, b1), (body[body.len() - 1], gk, bk)] {
                if g as u64 * b as u64 != inner {
                    return Err(format!(
                        "'{s}' has G = {g} groups, but {inner} ranks in groups of {b} make \
                         G = {}",
                        inner / b as u64
                    ));
                }
            }
            levels.push(Level::Merge {
                remainder,
                size: n as u32,
                first_base: b1,
                first_groups: g1,
                last_groups: gk,
                merge_tag: body_start as i32,
                inverse_tag: (body_start + body.len() - 1) as i32,
            });
            n = inner;
        } else {
            let prod = product(body);
            if prod != Some(n) {
                let p = prod.unwrap_or(u64::MAX);
                return Err(if shape.collapses == 0 {
                    if body.is_empty() {
                        format!("the empty schedule fits 1 rank, not {n}")
                    } else {
                        format!("{}, not {n}", product_text(body, Some(p)))
                    }
                } else if body.is_empty() {
                    format!(
                        "the collapses leave {}, but there is no exchange stage between the \
                         collapse and the expand (that fits only when 1 rank is left)",
                        ranks(n)
                    )
                } else {
                    format!(
                        "the collapses leave {}, but {}",
                        ranks(n),
                        product_text(body, Some(p))
                    )
                });
            }
        }
        let mut stages = Vec::with_capacity(body.len());
        let mut mask: u64 = 1;
        for (i, s) in body.iter().enumerate() {
            let b = s.factor().expect("body stages are exchanges") as u64;
            stages.push(BodyStage {
                factor: b as u32,
                mask: mask as u32,
                tag: (body_start + i) as i32,
            });
            mask *= b;
        }
        Ok(Plan {
            nranks,
            levels,
            inner: n as u32,
            stages,
        })
    }
}

fn product(stages: &[Stage]) -> Option<u64> {
    let mut p: u64 = 1;
    for s in stages {
        p = p.checked_mul(s.factor()? as u64)?;
    }
    Some(p)
}

/// `the factors 8 x 3 multiply to 24` / `the stage a7 spans 7 ranks`.
fn product_text(stages: &[Stage], product: Option<u64>) -> String {
    let f: Vec<String> = stages
        .iter()
        .filter_map(|s| s.factor())
        .map(|b| b.to_string())
        .collect();
    let p = product.map_or("more than 2^64".to_string(), |p| p.to_string());
    if f.len() == 1 {
        format!("the stage {} spans {p} ranks", stages[0])
    } else {
        format!("the factors {} multiply to {p}", f.join(" x "))
    }
}

impl fmt::Display for ScheduleString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.stages.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for ScheduleString {
    type Err = ScheduleStringError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ScheduleString::parse(s)
    }
}

/// A level of rank renumbering between the real ranks and the ranks of the exchange stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// `cTmB … eTmB` on `size` ranks.
    Collapse {
        threshold: u32,
        base: u32,
        size: u32,
        collapse_tag: i32,
        expand_tag: i32,
    },
    /// `mRgGaB … nRgGaB` on `size` ranks (`size − remainder` take part in the exchanges).
    Merge {
        remainder: u32,
        size: u32,
        first_base: u32,
        first_groups: u32,
        last_groups: u32,
        merge_tag: i32,
        inverse_tag: i32,
    },
}

/// An exchange stage of the body: factor, stride of its groups, tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BodyStage {
    pub factor: u32,
    pub mask: u32,
    pub tag: i32,
}

/// A schedule checked against a number of ranks: the renumbering levels and the exchange
/// stages, as the generator uses them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub(crate) nranks: u32,
    pub(crate) levels: Vec<Level>,
    pub(crate) inner: u32,
    pub(crate) stages: Vec<BodyStage>,
}

impl Plan {
    /// Number of ranks that take part in the exchange stages.
    pub fn inner_ranks(&self) -> u32 {
        self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for t in [
            "a8,a3,a4",
            "c6m2,a2,a2,e6m2",
            "m1g2a3,n1g3a2",
            "m3g2a2,n3g2a2",
            "c4m2,c2m2,a2,e2m2,e4m2",
            "",
        ] {
            let s = ScheduleString::parse(t).unwrap();
            assert_eq!(s.to_string(), t);
        }
    }

    #[test]
    fn nranks_of_the_seed_examples() {
        let n = |t: &str| ScheduleString::parse(t).unwrap().nranks();
        assert_eq!(n("a8,a3,a4"), Some(96));
        assert_eq!(n("c6m2,a2,a2,e6m2"), Some(7));
        assert_eq!(n("m1g2a3,n1g3a2"), Some(7));
        assert_eq!(n("m3g2a2,n3g2a2"), Some(7));
        assert_eq!(n(""), Some(1));
        // G does not match: no N fits.
        assert_eq!(n("m1g3a3,n1g3a2"), None);
    }
}
