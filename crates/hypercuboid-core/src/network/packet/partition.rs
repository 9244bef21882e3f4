//! Splitting the routers into parts of about equal weight with few links between parts: the
//! parts the parallel runner simulates one thread each ([`super::Network::partition`]).
//!
//! Every link between two parts is a mailbox the parts exchange packets and credits through,
//! and bounds how far one part may run ahead of the other; the fewer links cross parts, the
//! less the threads talk. Parts of equal weight (ports) keep the threads equally busy.
//!
//! The method, deterministic (no random numbers; every tie is broken in a fixed order):
//! 1. **recursive bisection**: the routers are cut in two sides of `⌊k/2⌋` and `⌈k/2⌉` parts'
//!    worth of weight, each side is cut again, down to one part per side;
//! 2. each **bisection** grows side 0 from a seed, adding the router with the most links into
//!    it (the fewest out of it) until it holds its share of the weight, then refines the cut
//!    with Fiduccia–Mattheyses passes (move the router of best gain, even a worsening one,
//!    lock it, keep the best prefix of the moves) that keep side 0 within one router's
//!    weight of its share; of a few seeds (a router far from the others, router 0 and two
//!    more), the smallest cut is kept;
//! 3. a **k-way refinement** then moves a router to the neighbouring part it has the most
//!    links into while that cuts fewer links (or as many, and evens the weights), keeping
//!    every part within one router's weight of the mean (or of the bisection's lightest and
//!    heaviest part, if further);
//! 4. the same refinement of **runs of consecutive routers** of about equal weight (the split
//!    the engine used before: where the numbering follows the structure, as a dragonfly's
//!    groups, it is a good start, which single moves do not find), kept instead when it cuts
//!    fewer links.
//!
//! A bisection keeps side 0 within one router's weight of its share, so a part's weight lies
//! within about two routers' weight of the mean (the tests check it on four networks). The
//! cost is a few passes over the links per level of the bisection and per seed.

/// A graph of routers: `adj[off[x]..off[x + 1]]` are the neighbours of router `x` (one entry
/// per link, so parallel links count as many times), `weight[x]` its weight.
#[derive(Clone, Copy)]
pub(super) struct Graph<'a> {
    pub(super) off: &'a [u32],
    pub(super) adj: &'a [u32],
    pub(super) weight: &'a [u64],
}

impl Graph<'_> {
    fn len(&self) -> usize {
        self.weight.len()
    }

    fn neighbours(&self, x: usize) -> &[u32] {
        &self.adj[self.off[x] as usize..self.off[x + 1] as usize]
    }
}

/// Splits the routers of `g` into `parts` (1 to 256, at most the number of routers) and
/// returns each router's part.
pub(super) fn split(g: &Graph<'_>, parts: usize) -> Vec<u8> {
    let n = g.len();
    debug_assert!((1..=256).contains(&parts) && parts <= n.max(1));
    let mut owner = vec![0u8; n];
    if parts <= 1 {
        return owner;
    }
    let all: Vec<u32> = (0..n as u32).collect();
    let wmax = g.weight.iter().copied().max().unwrap_or(0).max(1);
    bisect_into(g, &all, 0, parts, wmax, &mut owner);
    refine(g, &mut owner, parts);
    let mut runs = runs(g.weight, parts);
    refine(g, &mut runs, parts);
    if cut(g, &runs) < cut(g, &owner) {
        return runs;
    }
    owner
}

/// Runs of consecutive routers with about as much weight each: where numbering follows the
/// structure (a dragonfly's groups, one after the other), a good start.
fn runs(weight: &[u64], parts: usize) -> Vec<u8> {
    let total: u64 = weight.iter().sum::<u64>().max(1);
    let mut before = 0u64;
    weight
        .iter()
        .map(|&w| {
            let o = (before * parts as u64 / total) as u8;
            before += w;
            o
        })
        .collect()
}

/// Links between parts.
fn cut(g: &Graph<'_>, owner: &[u8]) -> usize {
    (0..g.len())
        .map(|x| {
            g.neighbours(x)
                .iter()
                .filter(|&&y| owner[y as usize] != owner[x])
                .count()
        })
        .sum::<usize>()
        / 2
}

/// Splits `set` into parts `first..first + parts`.
fn bisect_into(
    g: &Graph<'_>,
    set: &[u32],
    first: usize,
    parts: usize,
    wmax: u64,
    owner: &mut [u8],
) {
    if parts == 1 || set.len() <= 1 {
        for &x in set {
            owner[x as usize] = first as u8;
        }
        return;
    }
    let sub = Sub::new(g, set);
    let k0 = parts / 2;
    let total: u64 = sub.w.iter().sum();
    let target = total * k0 as u64 / parts as u64;
    let side = sub.bisect(target, wmax, [k0, parts - k0]);
    let (a, b): (Vec<u32>, Vec<u32>) = {
        let mut a = Vec::new();
        let mut b = Vec::new();
        for (i, &x) in set.iter().enumerate() {
            if side[i] == 0 {
                a.push(x)
            } else {
                b.push(x)
            }
        }
        (a, b)
    };
    bisect_into(g, &a, first, k0, wmax, owner);
    bisect_into(g, &b, first + k0, parts - k0, wmax, owner);
}

/// The graph induced by a set of routers, renumbered `0..set.len()` in the set's order.
struct Sub {
    off: Vec<u32>,
    adj: Vec<u32>,
    w: Vec<u64>,
    /// The largest degree.
    dmax: usize,
}

impl Sub {
    fn new(g: &Graph<'_>, set: &[u32]) -> Sub {
        const OUT: u32 = u32::MAX;
        let mut local = vec![OUT; g.len()];
        for (i, &x) in set.iter().enumerate() {
            local[x as usize] = i as u32;
        }
        let mut off = Vec::with_capacity(set.len() + 1);
        let mut adj = Vec::new();
        let mut dmax = 0;
        off.push(0);
        for &x in set {
            let before = adj.len();
            for &y in g.neighbours(x as usize) {
                let l = local[y as usize];
                if l != OUT && y != x {
                    adj.push(l);
                }
            }
            dmax = dmax.max(adj.len() - before);
            off.push(adj.len() as u32);
        }
        let w = set.iter().map(|&x| g.weight[x as usize]).collect();
        Sub { off, adj, w, dmax }
    }

    fn graph(&self) -> Graph<'_> {
        Graph {
            off: &self.off,
            adj: &self.adj,
            weight: &self.w,
        }
    }

    /// A side for every router: side 0 holds `target ± wmax` of the weight, each side at
    /// least `need` routers (as many as its parts), with as few links to side 1 as the seeds
    /// and passes find.
    fn bisect(&self, target: u64, wmax: u64, need: [usize; 2]) -> Vec<u8> {
        let g = self.graph();
        let n = g.len();
        let mut seeds = vec![far_from(&g, 0), 0, n / 3, 2 * n / 3];
        let mut seen = Vec::new();
        seeds.retain(|&s| {
            let new = !seen.contains(&s);
            seen.push(s);
            new
        });
        let mut best: Option<(usize, Vec<u8>)> = None;
        for s in seeds {
            let mut fm = Fm::new(self, target, wmax, need);
            fm.grow(s);
            fm.refine();
            let c = cut(&g, &fm.side);
            if best.as_ref().is_none_or(|(b, _)| c < *b) {
                best = Some((c, fm.side));
            }
        }
        best.map(|(_, s)| s).unwrap_or_default()
    }
}

/// The router a breadth-first search of `g` from `x` reaches last (one far from the others),
/// searched again from there.
fn far_from(g: &Graph<'_>, x: usize) -> usize {
    let mut at = x;
    for _ in 0..2 {
        let mut dist = vec![u32::MAX; g.len()];
        let mut queue = std::collections::VecDeque::from([at]);
        dist[at] = 0;
        let mut last = at;
        while let Some(v) = queue.pop_front() {
            last = v;
            for &y in g.neighbours(v) {
                if dist[y as usize] == u32::MAX {
                    dist[y as usize] = dist[v] + 1;
                    queue.push_back(y as usize);
                }
            }
        }
        at = last;
    }
    at
}

const NIL: u32 = u32::MAX;

/// A bisection under refinement: the sides, the gains (links a router has to the other side
/// less those to its own) and, per side, the unlocked routers in buckets by gain.
struct Fm<'s> {
    g: Graph<'s>,
    /// The largest degree: gains lie within ±`dmax`.
    dmax: usize,
    side: Vec<u8>,
    gain: Vec<i64>,
    /// Weight of side 0 and its bounds.
    w0: u64,
    lo: u64,
    hi: u64,
    target: u64,
    /// Routers on side 0, and the fewest each side may hold.
    n0: usize,
    need: [usize; 2],
    /// Bucket lists: `head[s][gain + dmax]`, `next`/`prev` per router.
    head: [Vec<u32>; 2],
    next: Vec<u32>,
    prev: Vec<u32>,
    /// The highest bucket of each side that may be non-empty.
    top: [usize; 2],
    locked: Vec<bool>,
}

impl<'s> Fm<'s> {
    /// Every router on side 1.
    fn new(sub: &'s Sub, target: u64, wmax: u64, need: [usize; 2]) -> Fm<'s> {
        let g = sub.graph();
        let n = g.len();
        let b = 2 * sub.dmax + 1;
        let mut fm = Fm {
            g,
            dmax: sub.dmax,
            side: vec![1; n],
            gain: vec![0; n],
            w0: 0,
            lo: target.saturating_sub(wmax),
            hi: target + wmax,
            target,
            n0: 0,
            need,
            head: [vec![NIL; b], vec![NIL; b]],
            next: vec![NIL; n],
            prev: vec![NIL; n],
            top: [0, 0],
            locked: vec![false; n],
        };
        fm.fill();
        fm
    }

    /// Computes every gain and puts every router, unlocked, in its side's buckets.
    fn fill(&mut self) {
        for h in &mut self.head {
            h.fill(NIL);
        }
        self.top = [0, 0];
        self.locked.fill(false);
        for x in (0..self.g.len()).rev() {
            let s = self.side[x];
            let ext = self
                .g
                .neighbours(x)
                .iter()
                .filter(|&&y| self.side[y as usize] != s)
                .count();
            self.gain[x] = 2 * ext as i64 - self.g.neighbours(x).len() as i64;
            self.insert(x);
        }
    }

    fn bucket(&self, x: usize) -> usize {
        (self.gain[x] + self.dmax as i64) as usize
    }

    fn insert(&mut self, x: usize) {
        let (s, b) = (self.side[x] as usize, self.bucket(x));
        let h = self.head[s][b];
        self.next[x] = h;
        self.prev[x] = NIL;
        if h != NIL {
            self.prev[h as usize] = x as u32;
        }
        self.head[s][b] = x as u32;
        self.top[s] = self.top[s].max(b);
    }

    fn remove(&mut self, x: usize) {
        let (s, b) = (self.side[x] as usize, self.bucket(x));
        let (p, nx) = (self.prev[x], self.next[x]);
        if p == NIL {
            self.head[s][b] = nx;
        } else {
            self.next[p as usize] = nx;
        }
        if nx != NIL {
            self.prev[nx as usize] = p;
        }
    }

    /// The unlocked router of best gain on side `s` (most recently bucketed among equals).
    fn best(&mut self, s: usize) -> Option<usize> {
        loop {
            let h = self.head[s][self.top[s]];
            if h != NIL {
                return Some(h as usize);
            }
            if self.top[s] == 0 {
                return None;
            }
            self.top[s] -= 1;
        }
    }

    /// Moves router `x` (unlocked, in its buckets) to the other side and locks it.
    fn flip(&mut self, x: usize) {
        self.remove(x);
        self.locked[x] = true;
        self.shift(x);
        self.gain[x] = -self.gain[x];
        let s = self.side[x];
        let g = self.g;
        for &y in g.neighbours(x) {
            let y = y as usize;
            let d = if self.side[y] == s { -2 } else { 2 };
            if self.locked[y] {
                self.gain[y] += d;
            } else {
                self.remove(y);
                self.gain[y] += d;
                self.insert(y);
            }
        }
    }

    /// Moves router `x` to the other side: its side, the weight and count of side 0.
    fn shift(&mut self, x: usize) {
        let w = self.g.weight[x];
        if self.side[x] == 0 {
            self.w0 -= w;
            self.n0 -= 1;
        } else {
            self.w0 += w;
            self.n0 += 1;
        }
        self.side[x] ^= 1;
    }

    /// Grows side 0 from `seed` until it holds the target weight and its routers, leaving
    /// side 1 its routers.
    fn grow(&mut self, seed: usize) {
        let n = self.g.len();
        let mut next = Some(seed);
        while let Some(x) = next {
            if n - self.n0 <= self.need[1] {
                break;
            }
            self.flip(x);
            if self.w0 >= self.target && self.n0 >= self.need[0] {
                break;
            }
            next = self.best(1);
        }
    }

    /// Fiduccia–Mattheyses passes while they cut fewer links (at most 8).
    fn refine(&mut self) {
        for _ in 0..8 {
            if !self.pass() {
                break;
            }
        }
    }

    /// How far side 0 is from its target.
    fn off(&self) -> u64 {
        self.w0.abs_diff(self.target)
    }

    /// Whether side 0 is outside its bounds, the cut so far, and how far side 0 is from its
    /// target: the lower, the better.
    fn score(&self, delta: i64) -> (bool, i64, u64) {
        (self.w0 < self.lo || self.w0 > self.hi, delta, self.off())
    }

    /// One pass: moves that keep side 0 within its bounds (or bring it closer to its target),
    /// each of the best gain on either side, until none is left or many did not improve;
    /// then undoes the moves after the best prefix (within the bounds, fewest cut links,
    /// closest to the target). Returns whether the cut shrank.
    fn pass(&mut self) -> bool {
        self.fill();
        let n = self.g.len();
        let patience = 64 + n / 8;
        let mut moves: Vec<usize> = Vec::new();
        let mut delta = 0i64;
        let (mut best, mut best_len) = (self.score(0), 0usize);
        loop {
            let mut pick: Option<(i64, u64, usize)> = None;
            for s in 0..2 {
                let Some(x) = self.best(s) else { continue };
                let w = self.g.weight[x];
                let left = if s == 0 { self.n0 } else { n - self.n0 };
                if left <= self.need[s] {
                    continue;
                }
                let w0 = if s == 0 { self.w0 - w } else { self.w0 + w };
                let off = w0.abs_diff(self.target);
                if (w0 < self.lo || w0 > self.hi) && off >= self.off() {
                    continue;
                }
                let key = (self.gain[x], u64::MAX - off);
                if pick.is_none_or(|(g, o, _)| key > (g, o)) {
                    pick = Some((key.0, key.1, x));
                }
            }
            let Some((g, _, x)) = pick else { break };
            self.flip(x);
            moves.push(x);
            delta -= g;
            if self.score(delta) < best {
                (best, best_len) = (self.score(delta), moves.len());
            } else if moves.len() - best_len > patience {
                break;
            }
        }
        for &x in moves[best_len..].iter().rev() {
            self.shift(x);
        }
        best_len > 0
    }
}

/// Moves routers to the neighbouring part they have the most links into while that cuts
/// fewer links, or as many and evens the weights, keeping every part's weight within one
/// router's of the mean (or of its lightest and heaviest part to start with, if further)
/// and one router at least (at most 8 sweeps over the routers in order).
fn refine(g: &Graph<'_>, owner: &mut [u8], parts: usize) {
    let mut wt = vec![0u64; parts];
    for (x, &o) in owner.iter().enumerate() {
        wt[o as usize] += g.weight[x];
    }
    let mut count = vec![0usize; parts];
    for &o in owner.iter() {
        count[o as usize] += 1;
    }
    let total: u64 = wt.iter().sum();
    let wmax = g.weight.iter().copied().max().unwrap_or(0);
    let mean = total / parts as u64;
    let cap = wt.iter().copied().max().unwrap_or(0).max(mean + 1 + wmax);
    let floor = wt
        .iter()
        .copied()
        .min()
        .unwrap_or(0)
        .min(mean.saturating_sub(wmax));
    let mut conn = vec![0i64; parts];
    let mut touched: Vec<usize> = Vec::new();
    for _ in 0..8 {
        let mut moved = false;
        for x in 0..g.len() {
            let own = owner[x] as usize;
            for &y in g.neighbours(x) {
                let q = owner[y as usize] as usize;
                if conn[q] == 0 {
                    touched.push(q);
                }
                conn[q] += 1;
            }
            let w = g.weight[x];
            let mut to: Option<(i64, usize)> = None;
            if wt[own] >= floor + w && count[own] > 1 {
                for &q in &touched {
                    if q == own || wt[q] + w > cap {
                        continue;
                    }
                    let gain = conn[q] - conn[own];
                    let evens = wt[q] + w < wt[own];
                    if (gain > 0 || (gain == 0 && evens))
                        && to.is_none_or(|(b, bq)| {
                            (gain, std::cmp::Reverse(q)) > (b, std::cmp::Reverse(bq))
                        })
                    {
                        to = Some((gain, q));
                    }
                }
            }
            for &q in &touched {
                conn[q] = 0;
            }
            touched.clear();
            if let Some((_, q)) = to {
                owner[x] = q as u8;
                wt[own] -= w;
                wt[q] += w;
                count[own] -= 1;
                count[q] += 1;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A graph of `n` routers of weight `w` from an edge list.
    fn graph(n: usize, edges: &[(u32, u32)], w: u64) -> Sub {
        let mut nb: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &(a, b) in edges {
            nb[a as usize].push(b);
            nb[b as usize].push(a);
        }
        let (off, adj) = crate::csr::flatten(nb);
        Sub {
            off,
            adj,
            w: vec![w; n],
            dmax: 0,
        }
    }

    #[test]
    fn two_cliques_joined_by_one_link_split_at_that_link() {
        // Routers 0, 2, 4, 6 form a clique, 1, 3, 5, 7 another, and 6–7 joins them: runs of
        // numbers would cut 8 links, the bisection cuts the one.
        let mut e = Vec::new();
        for s in 0..2u32 {
            for a in 0..4u32 {
                for b in a + 1..4 {
                    e.push((2 * a + s, 2 * b + s));
                }
            }
        }
        e.push((6, 7));
        let sub = graph(8, &e, 3);
        let g = sub.graph();
        let owner = split(&g, 2);
        assert_eq!(cut(&g, &owner), 1);
        assert_eq!(owner.iter().filter(|&&o| o == 0).count(), 4);
        assert_eq!(owner[0], owner[2]);
        assert_ne!(owner[0], owner[1]);
    }

    #[test]
    fn a_ring_splits_into_arcs() {
        // A ring of 64 in 8 parts: 8 arcs of 8, 8 links cut.
        let e: Vec<(u32, u32)> = (0..64).map(|i| (i, (i + 1) % 64)).collect();
        let sub = graph(64, &e, 1);
        let g = sub.graph();
        let owner = split(&g, 8);
        assert_eq!(cut(&g, &owner), 8);
        for p in 0..8u8 {
            assert_eq!(owner.iter().filter(|&&o| o == p).count(), 8, "part {p}");
        }
    }

    #[test]
    fn as_many_parts_as_routers_gives_each_its_own() {
        let e: Vec<(u32, u32)> = (0..5).map(|i| (i, (i + 1) % 5)).collect();
        let sub = graph(5, &e, 2);
        let g = sub.graph();
        let mut owner = split(&g, 5);
        owner.sort_unstable();
        assert_eq!(owner, vec![0, 1, 2, 3, 4]);
    }
}
