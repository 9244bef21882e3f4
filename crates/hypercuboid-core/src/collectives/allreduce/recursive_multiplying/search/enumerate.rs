//! Counting and enumerating the legal schedules of `N` ranks: factored, split and merged
//! (see the [module documentation](super)).

use super::*;

/// Which families to enumerate, and how many schedules at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnumerateOptions {
    /// Ordered factorisations.
    pub factored: bool,
    /// Collapse/expand variants.
    pub split: bool,
    /// Merge variants.
    pub merged: bool,
    /// At most this many schedules (0: no cap).
    pub max_schedules: u64,
}

impl Default for EnumerateOptions {
    fn default() -> Self {
        EnumerateOptions {
            factored: true,
            split: true,
            merged: true,
            max_schedules: DEFAULT_MAX_SCHEDULES,
        }
    }
}

/// How many schedules each family has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Ordered factorisations (`H(N)`).
    pub factored: u128,
    /// Split variants.
    pub split: u128,
    /// Merged variants.
    pub merged: u128,
}

impl Counts {
    /// All families together.
    pub fn total(&self) -> u128 {
        self.factored + self.split + self.merged
    }
}

/// Memoised counts over the divisors of one number.
pub(super) struct DivisorTable {
    pub(super) divs: Vec<u32>,
}

impl DivisorTable {
    pub(super) fn new(n: u32) -> DivisorTable {
        DivisorTable { divs: divisors(n) }
    }
    pub(super) fn index(&self, d: u32) -> usize {
        self.divs.binary_search(&d).expect("a divisor")
    }
    /// Ordered factorisations of every divisor (index-aligned with `divs`).
    fn ordered(&self) -> Vec<u128> {
        let mut h = vec![0u128; self.divs.len()];
        h[0] = 1; // divs[0] = 1
        for i in 1..self.divs.len() {
            let d = self.divs[i];
            let mut s = 0u128;
            for &f in &self.divs[1..=i] {
                if d.is_multiple_of(f) {
                    s = s.saturating_add(h[self.index(d / f)]);
                }
            }
            h[i] = s;
        }
        h
    }
    /// Multiplicative partitions of `d` into factors `≤ maxf`.
    fn partitions(
        &self,
        d: u32,
        maxf: u32,
        memo: &mut std::collections::HashMap<(u32, u32), u128>,
    ) -> u128 {
        if d == 1 {
            return 1;
        }
        if let Some(&v) = memo.get(&(d, maxf)) {
            return v;
        }
        let mut s = 0u128;
        for &f in &self.divs[1..] {
            if f > maxf || f > d {
                break;
            }
            if d.is_multiple_of(f) {
                s = s.saturating_add(self.partitions(d / f, f, memo));
            }
        }
        memo.insert((d, maxf), s);
        s
    }
}

/// The number of ordered factorisations of `n` (`H(n)`; `H(1) = 1`).
pub fn ordered_factorisations(n: u32) -> u128 {
    if n == 0 {
        return 0;
    }
    *DivisorTable::new(n).ordered().last().expect("1 divides n")
}

/// The number of multiplicative partitions of `n` (unordered factorisations; 1 for `n = 1`).
pub fn multiplicative_partitions(n: u32) -> u128 {
    if n == 0 {
        return 0;
    }
    DivisorTable::new(n).partitions(n, n, &mut Default::default())
}

/// The largest stage factor of the split and merged variants of `n` ranks: below `n`'s largest
/// prime factor, the prime the variants avoid.
fn variant_max_factor(n: u32) -> u32 {
    if n < 2 {
        1
    } else {
        largest_prime_factor(n) - 1
    }
}

/// How many schedules [`for_each_schedule`] would produce, without producing them.
pub fn count_schedules(n: u32, opts: &EnumerateOptions) -> Result<Counts, TuningError> {
    if n == 0 {
        return Err(bad("nranks", n, "an allreduce has at least 1 rank"));
    }
    let mut c = Counts::default();
    if opts.factored {
        c.factored = ordered_factorisations(n);
    }
    if opts.split || opts.merged {
        let maxf = variant_max_factor(n);
        for m in inner_sizes(n)? {
            let t = DivisorTable::new(m);
            let parts = t.partitions(m, maxf, &mut Default::default());
            if opts.split && collapse_for(n, n - m).is_some() {
                c.split += parts;
            }
            if opts.merged {
                // At least two factors: drop the one-stage body `am`.
                c.merged += parts - u128::from(m <= maxf);
            }
        }
    }
    Ok(c)
}

fn for_each_ordered(n: u32, divs: &[u32], prefix: &mut Vec<u32>, f: &mut dyn FnMut(&[u32])) {
    if n == 1 {
        f(prefix);
        return;
    }
    for &d in &divs[1..] {
        if d > n {
            break;
        }
        if n.is_multiple_of(d) {
            prefix.push(d);
            for_each_ordered(n / d, divs, prefix, f);
            prefix.pop();
        }
    }
}

fn for_each_partition(
    n: u32,
    maxf: u32,
    divs: &[u32],
    prefix: &mut Vec<u32>,
    f: &mut dyn FnMut(&[u32]),
) {
    if n == 1 {
        f(prefix);
        return;
    }
    // Largest factor first.
    for &d in divs[1..].iter().rev() {
        if d > maxf || d > n || !n.is_multiple_of(d) {
            continue;
        }
        prefix.push(d);
        for_each_partition(n / d, d, divs, prefix, f);
        prefix.pop();
    }
}

/// Calls `f` with every schedule of `n` ranks in the families `opts` selects (see the module
/// docs for what is enumerated and in which order). Refuses more than `opts.max_schedules`
/// before producing any.
pub fn for_each_schedule(
    n: u32,
    opts: &EnumerateOptions,
    f: &mut dyn FnMut(&ScheduleString),
) -> Result<Counts, TuningError> {
    let counts = count_schedules(n, opts)?;
    if opts.max_schedules > 0 && counts.total() > opts.max_schedules as u128 {
        return Err(TuningError::TooMany {
            nranks: n,
            count: counts.total(),
            cap: opts.max_schedules,
        });
    }
    let factored = |fs: &[u32]| -> Vec<Stage> { fs.iter().map(|&b| Stage::Factor(b)).collect() };
    let make = |stages: Vec<Stage>| {
        ScheduleString::new(stages).expect("enumerated schedules are well formed")
    };
    if opts.factored {
        let divs = divisors(n);
        for_each_ordered(n, &divs, &mut Vec::new(), &mut |fs| f(&make(factored(fs))));
    }
    if opts.split || opts.merged {
        let maxf = variant_max_factor(n);
        for m in inner_sizes(n)? {
            let r = n - m;
            let divs = divisors(m);
            if opts.split {
                if let Some((t, b)) = collapse_for(n, r) {
                    for_each_partition(m, maxf, &divs, &mut Vec::new(), &mut |fs| {
                        let mut st = vec![Stage::Collapse {
                            threshold: t,
                            base: b,
                        }];
                        st.extend(factored(fs));
                        st.push(Stage::Expand {
                            threshold: t,
                            base: b,
                        });
                        f(&make(st));
                    });
                }
            }
            if opts.merged {
                for_each_partition(m, maxf, &divs, &mut Vec::new(), &mut |fs| {
                    if fs.len() < 2 {
                        return;
                    }
                    let k = fs.len() - 1;
                    let mut st = Vec::with_capacity(fs.len());
                    st.push(Stage::Merge {
                        remainder: r,
                        groups: m / fs[0],
                        base: fs[0],
                    });
                    st.extend(factored(&fs[1..k]));
                    st.push(Stage::InverseMerge {
                        remainder: r,
                        groups: m / fs[k],
                        base: fs[k],
                    });
                    f(&make(st));
                });
            }
        }
    }
    Ok(counts)
}

/// Every schedule of `n` ranks that [`for_each_schedule`] produces, in its order.
pub fn enumerate_schedules(
    n: u32,
    opts: &EnumerateOptions,
) -> Result<Vec<ScheduleString>, TuningError> {
    let mut out = Vec::new();
    for_each_schedule(n, opts, &mut |s| out.push(s.clone()))?;
    Ok(out)
}
