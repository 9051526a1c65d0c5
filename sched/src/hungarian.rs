//! The linear sum assignment problem (LSAP) solver behind lsap-sched and
//! lsap-fair-sched (Guo, Fox, Zhou, "Investigation of Data Locality and
//! Fairness in MapReduce", section 3.2: "a couple of algorithms with
//! polynomial-time complexity (e.g. Hungarian algorithm)").
//!
//! The method is the Hungarian method in its shortest-augmenting-path form
//! with dual potentials u (rows) and v (columns): Jonker & Volgenant (1987)
//! with Crouse's (2016) refinements, as in SciPy's `linear_sum_assignment`;
//! O(n³) in the worst case.
//!
//! - Square matrices start with Jonker-Volgenant's initialisation (column
//!   reduction, reduction transfer, two rounds of augmenting row
//!   reduction), which assigns most rows before any path search.
//! - Each row left free gets a Dijkstra search over the reduced costs
//!   `c[i][j] - u[i] - v[j]`, one contiguous pass over a cost row per step
//!   (AVX2 when the CPU has it); a free column wins ties, so that paths end
//!   as early as they can (scheduling costs are full of ties).
//! - Square matrices from [`SPARSE_MIN`] on go through [`sparse`] first: the
//!   same search on each row's cheapest entries, then a proof of optimality
//!   over the whole matrix (see there). This is what keeps large solves
//!   fast: the dense search is bound by reading cost rows from memory.
//! - Buffers are allocated once per solve; nothing allocates in the loops.
//!
//! Rectangular matrices: the paper squares its matrix with zero-cost dummy
//! rows (fewer tasks than slots) or columns (more tasks than slots), solves,
//! and filters the dummies out, and proves that the dummies add the same
//! constant to every complete assignment. Solving the rectangular problem
//! directly (every row of the smaller side assigned, unassigned columns kept
//! at zero potential) therefore gives the same optimum without the dummies'
//! work; that is what [`solve`] does, and the tests check it against the
//! literal expansion ([`expand_to_square`]) and against brute force.

use std::time::Duration;

/// Marks an unassigned row or column.
const FREE: u32 = u32::MAX;

/// Square matrices from this size on try the sparse route first (below it
/// the dense solver is as fast or faster: measured on uniform and
/// scheduling-shaped matrices).
pub const SPARSE_MIN: usize = 600;

/// Augmenting row reduction retries per row and round in the dense solver:
/// each retry scans a whole cost row; past the budget a displaced row waits
/// for the path search instead (2 was the fastest of 0-16 at n = 500-2900).
const DENSE_ARR_RETRIES: usize = 2;

/// Optimal assignment of rows to columns of a rectangular cost matrix (all
/// rows the same length, finite costs): minimises the total cost over
/// assignments of `min(rows, cols)` pairs, no row or column used twice.
/// Returns, for each row, its column, or `None` for rows left over when
/// there are more rows than columns (the paper's dummy columns).
pub fn solve(cost: &[Vec<f64>]) -> Vec<Option<usize>> {
    let n = cost.len();
    let m = cost.first().map_or(0, Vec::len);
    assert!(
        cost.iter().all(|r| r.len() == m),
        "cost matrix rows differ in length"
    );
    let mut flat = Vec::with_capacity(n * m);
    for r in cost {
        flat.extend_from_slice(r);
    }
    solve_flat(n, m, &flat)
}

/// [`solve`] on a row-major `rows × cols` matrix.
pub fn solve_flat(rows: usize, cols: usize, cost: &[f64]) -> Vec<Option<usize>> {
    assert_eq!(cost.len(), rows * cols, "cost matrix is not {rows}x{cols}");
    assert!(
        cost.iter().all(|c| c.is_finite()),
        "cost matrix holds a non-finite value"
    );
    assert!(rows.max(cols) < FREE as usize, "cost matrix too large");
    if rows == 0 || cols == 0 {
        return vec![None; rows];
    }
    if rows == cols && rows >= SPARSE_MIN {
        if let Some(a) = sparse::solve(rows, cost, sparse::K) {
            return a.into_iter().map(Some).collect();
        }
    }
    if rows <= cols {
        return dense(rows, cols, cost).into_iter().map(Some).collect();
    }
    // More rows than columns: solve the transpose (columns as rows).
    let mut t = vec![0.0; rows * cols];
    for i in 0..rows {
        for j in 0..cols {
            t[j * rows + i] = cost[i * cols + j];
        }
    }
    let mut out = vec![None; rows];
    for (j, i) in dense(cols, rows, &t).into_iter().enumerate() {
        out[i] = Some(j);
    }
    out
}

/// The paper's `expandToSquare(C, fill)`: pads a rows × cols matrix with
/// `fill` rows or columns to k × k, k = max(rows, cols). [`solve`] does not
/// need it; it is here to show and test the equivalence.
pub fn expand_to_square(rows: usize, cols: usize, cost: &[f64], fill: f64) -> (usize, Vec<f64>) {
    let k = rows.max(cols);
    let mut sq = vec![fill; k * k];
    for i in 0..rows {
        sq[i * k..i * k + cols].copy_from_slice(&cost[i * cols..(i + 1) * cols]);
    }
    (k, sq)
}

/// Total cost of an assignment returned by [`solve_flat`].
pub fn total(cols: usize, cost: &[f64], assignment: &[Option<usize>]) -> f64 {
    assignment
        .iter()
        .enumerate()
        .filter_map(|(i, j)| j.map(|j| cost[i * cols + j]))
        .sum()
}

/// Times one solve of a seeded n×n matrix of uniform random costs in
/// [0, 100), as the paper's overhead test (section 4.1: "values in the
/// matrices were randomly generated") fed its solver.
pub fn bench(n: usize, seed: u64) -> Duration {
    let mut rng = fastrand::Rng::with_seed(seed);
    let cost: Vec<f64> = (0..n * n).map(|_| rng.f64() * 100.0).collect();
    let t = std::time::Instant::now();
    std::hint::black_box(solve_flat(n, n, std::hint::black_box(&cost)));
    t.elapsed()
}

/// The dense solver, n ≤ m: assigns every row; returns row → column.
fn dense(n: usize, m: usize, c: &[f64]) -> Vec<usize> {
    debug_assert!(n <= m);
    let mut u = vec![0.0f64; n];
    let mut v = vec![0.0f64; m];
    let mut row_of = vec![FREE; m];
    let mut col_of = vec![FREE; n];
    let mut free: Vec<u32> = Vec::with_capacity(n);
    if n == m {
        column_reduction(n, c, &mut v, &mut row_of, &mut col_of, &mut free);
        augmenting_row_reduction(
            &mut v,
            &mut row_of,
            &mut col_of,
            &mut free,
            DENSE_ARR_RETRIES * n,
            |i, v| min2(c[i * n..(i + 1) * n].iter().copied().enumerate(), v),
        );
        // Duals consistent with the start: every assigned row sits on a
        // column of minimum reduced cost (JV's invariant).
        for i in 0..n {
            if col_of[i] != FREE {
                let j = col_of[i] as usize;
                u[i] = c[i * m + j] - v[j];
            }
        }
    } else {
        // Row reduction: u[i] = min_j c[i][j] with v = 0 (an unassigned
        // column must keep v = 0 in the rectangular problem); a row takes
        // its cheapest column when that is still free.
        for i in 0..n {
            let row = &c[i * m..(i + 1) * m];
            let (mut best, mut jb) = (row[0], 0);
            for (j, &x) in row.iter().enumerate().skip(1) {
                if x < best {
                    best = x;
                    jb = j;
                }
            }
            u[i] = best;
            if row_of[jb] == FREE {
                row_of[jb] = i as u32;
                col_of[i] = jb as u32;
            } else {
                free.push(i as u32);
            }
        }
    }

    // A shortest augmenting path from each free row. A scanned column is
    // masked out of later scans by v = -inf (its reduced cost becomes +inf)
    // and dist = +inf; its potential and final distance wait in `scanned`.
    let mut dist = vec![f64::INFINITY; m];
    let mut pred = vec![0u64; m];
    let mut scanned: Vec<(u32, f64, f64)> = Vec::with_capacity(m);
    let simd = simd::available();
    for &cur in &free {
        dist.fill(f64::INFINITY);
        scanned.clear();
        let mut min_val = 0.0f64;
        let mut i = cur as usize;
        let sink = loop {
            let row = &c[i * m..(i + 1) * m];
            let base = min_val - u[i];
            let (lowest, j) = if simd {
                // SAFETY: `simd::available()` checked the CPU features.
                let (lowest, at, ties) =
                    unsafe { simd::scan(row, base, &v, &mut dist, &mut pred, i) };
                // The closest column is taken; if it is assigned and others
                // are as close, a free one among them ends the path now.
                let free_tie = || {
                    dist.iter()
                        .zip(&row_of)
                        .position(|(&d, &r)| d == lowest && r == FREE)
                };
                let tie = (ties > 1 && row_of[at] != FREE).then(free_tie).flatten();
                (lowest, tie.unwrap_or(at))
            } else {
                scan(row, base, &v, &mut dist, &mut pred, &row_of, i)
            };
            min_val = lowest;
            scanned.push((j as u32, v[j], lowest));
            v[j] = f64::NEG_INFINITY;
            dist[j] = f64::INFINITY;
            if row_of[j] == FREE {
                break j;
            }
            i = row_of[j] as usize;
        };
        // Dual update over the scanned columns and the rows they hold.
        u[cur as usize] += min_val;
        for &(j, vj, dj) in &scanned {
            let j = j as usize;
            let d = min_val - dj;
            v[j] = vj - d;
            if j != sink {
                u[row_of[j] as usize] += d;
            }
        }
        augment(cur, sink, |j| pred[j] as u32, &mut row_of, &mut col_of);
    }
    col_of.into_iter().map(|j| j as usize).collect()
}

/// Flips the alternating path that ends at free column `sink` and starts
/// at free row `cur`; `pred(j)` is the row column j was reached from.
fn augment(
    cur: u32,
    sink: usize,
    pred: impl Fn(usize) -> u32,
    row_of: &mut [u32],
    col_of: &mut [u32],
) {
    let mut j = sink;
    loop {
        let i = pred(j);
        row_of[j] = i;
        let prev = std::mem::replace(&mut col_of[i as usize], j as u32);
        if i == cur {
            break;
        }
        j = prev as usize;
    }
}

/// One Dijkstra step from row `i` without SIMD: relaxes every column
/// through this row (`base` = distance to the row minus u[i]) and returns
/// the closest column, a free one on ties.
fn scan(
    row: &[f64],
    base: f64,
    v: &[f64],
    dist: &mut [f64],
    pred: &mut [u64],
    row_of: &[u32],
    i: usize,
) -> (f64, usize) {
    let m = row.len();
    let (v, dist, pred, row_of) = (&v[..m], &mut dist[..m], &mut pred[..m], &row_of[..m]);
    let mut lowest = f64::INFINITY;
    let mut at = usize::MAX;
    for j in 0..m {
        let r = base + row[j] - v[j];
        let mut d = dist[j];
        if r < d {
            d = r;
            dist[j] = r;
            pred[j] = i as u64;
        }
        if d <= lowest && (d < lowest || row_of[j] == FREE || at == usize::MAX) {
            lowest = d;
            at = j;
        }
    }
    (lowest, at)
}

/// Jonker-Volgenant's column reduction and reduction transfer on a square
/// matrix: sets `v`, a partial assignment in which each assigned row holds
/// a column of minimum reduced cost `c[i][j] - v[j]`, and the free rows.
fn column_reduction(
    n: usize,
    c: &[f64],
    v: &mut [f64],
    row_of: &mut [u32],
    col_of: &mut [u32],
    free: &mut Vec<u32>,
) {
    // v[j] = min_i c[i][j], swept row by row (cache-friendly); strict `<`
    // keeps the lowest row on ties, as JV's column-wise scan does.
    let mut argmin = vec![0u32; n];
    v.fill(f64::INFINITY);
    for i in 0..n {
        let row = &c[i * n..(i + 1) * n];
        for j in 0..n {
            if row[j] < v[j] {
                v[j] = row[j];
                argmin[j] = i as u32;
            }
        }
    }
    // Last column first (JV: "reverse order gives better results"): a row
    // takes the first column whose minimum it holds.
    let mut matches = vec![0u32; n];
    for j in (0..n).rev() {
        let i = argmin[j] as usize;
        matches[i] += 1;
        if matches[i] == 1 {
            col_of[i] = j as u32;
            row_of[j] = i as u32;
        }
    }
    // Reduction transfer: a row assigned once passes its slack to its column.
    for i in 0..n {
        match matches[i] {
            0 => free.push(i as u32),
            1 => {
                let j1 = col_of[i] as usize;
                let row = &c[i * n..(i + 1) * n];
                let mut min = f64::INFINITY;
                for j in 0..n {
                    if j != j1 {
                        min = min.min(row[j] - v[j]);
                    }
                }
                if min.is_finite() {
                    v[j1] -= min;
                }
            }
            _ => {}
        }
    }
}

/// The smallest and second smallest reduced cost `x - v[j]` over a row's
/// `(j, x)` entries, with their columns (usize::MAX when absent).
fn min2(entries: impl Iterator<Item = (usize, f64)>, v: &[f64]) -> (f64, usize, f64, usize) {
    let (mut umin, mut j1) = (f64::INFINITY, usize::MAX);
    let (mut usub, mut j2) = (f64::INFINITY, usize::MAX);
    for (j, x) in entries {
        let h = x - v[j];
        if h < usub {
            if h >= umin {
                usub = h;
                j2 = j;
            } else {
                usub = umin;
                umin = h;
                j2 = j1;
                j1 = j;
            }
        }
    }
    (umin, j1, usub, j2)
}

/// Jonker-Volgenant's augmenting row reduction, two rounds: each free row
/// takes its cheapest column (reduced cost), lowering that column's v so
/// the row's minimum rises to its second minimum; the row it displaces is
/// retried at once, within `budget` retries per round (retries strictly
/// lower a potential, so they end, but on some matrices only after many
/// tiny steps; past the budget a displaced row waits for the path search).
/// Keeps JV's invariant: every assigned row holds a column of minimum
/// reduced cost. `row_min2(i, v)` is [`min2`] over row i.
fn augmenting_row_reduction(
    v: &mut [f64],
    row_of: &mut [u32],
    col_of: &mut [u32],
    free: &mut Vec<u32>,
    budget: usize,
    row_min2: impl Fn(usize, &[f64]) -> (f64, usize, f64, usize),
) {
    for _ in 0..2 {
        let mut retries = budget;
        // Rows still free after this round are compacted to free[..still];
        // a displaced row is retried in the slot just read (free[k - 1]).
        let (mut k, mut still, prev) = (0, 0, free.len());
        while k < prev {
            let i = free[k] as usize;
            k += 1;
            let (umin, mut j1, usub, j2) = row_min2(i, v);
            if j1 == usize::MAX {
                // A row without entries (sparse graphs only): leave it.
                free[still] = i as u32;
                still += 1;
                continue;
            }
            let mut i0 = row_of[j1];
            if umin < usub {
                if usub.is_finite() {
                    v[j1] -= usub - umin;
                }
            } else if i0 != FREE && j2 != usize::MAX {
                // Equal minima: take the second column, which may be free.
                j1 = j2;
                i0 = row_of[j2];
            }
            col_of[i] = j1 as u32;
            row_of[j1] = i as u32;
            if i0 != FREE {
                col_of[i0 as usize] = FREE;
                if umin < usub && retries > 0 {
                    retries -= 1;
                    k -= 1;
                    free[k] = i0;
                } else {
                    free[still] = i0;
                    still += 1;
                }
            }
        }
        free.truncate(still);
    }
}

/// Large square problems, solved on a sparse candidate graph and proven
/// optimal on the full matrix.
///
/// On a dense n×n matrix the last free rows of the dense search each scan
/// hundreds of full cost rows, and reading them from memory dominates. An
/// optimal assignment of a typical matrix uses only entries among each
/// row's cheapest few, so: keep each row's `k` cheapest entries, run the
/// same initialisation and shortest augmenting path search on that graph,
/// then check the LP optimality certificate over the whole matrix in one
/// pass: reduced costs `c[i][j] - u[i] - v[j]` ≥ 0 everywhere, with the
/// assigned entries tight (the search keeps them so), prove the assignment
/// optimal for the full matrix. An entry that fails joins its row's
/// candidates, the row is re-solved, and the check repeats. When the graph
/// has no perfect assignment or the rounds run out, the caller falls back
/// to the dense solver, so the result is always optimal.
mod sparse {
    use super::FREE;
    use std::cmp::Ordering;
    use std::collections::BinaryHeap;

    /// Candidates kept per row at first (12-32 measured about the same on
    /// uniform matrices; more is more robust on structured ones).
    pub const K: usize = 16;
    /// Certification rounds before giving up on the sparse route.
    const ROUNDS: usize = 8;
    /// Augmenting row reduction retries per row and round: a retry scans
    /// only a row's candidates, so it is cheap here.
    const ARR_RETRIES: usize = 8;

    /// A heap entry: tentative distance, then whether the column is
    /// assigned (a free column wins ties, as in the dense scan), smallest
    /// first.
    #[derive(PartialEq)]
    struct Entry(f64, bool, u32);
    impl Eq for Entry {}
    impl Ord for Entry {
        fn cmp(&self, o: &Self) -> Ordering {
            o.0.total_cmp(&self.0)
                .then(o.1.cmp(&self.1))
                .then(o.2.cmp(&self.2))
        }
    }
    impl PartialOrd for Entry {
        fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }

    /// row → column, or None when the sparse route gives up.
    pub fn solve(n: usize, c: &[f64], k: usize) -> Option<Vec<usize>> {
        solve_counting(n, c, k).map(|(a, _)| a)
    }

    /// [`solve`] and the number of certification rounds that found
    /// violations (for tests).
    /// Each row's `k` cheapest entries as (column, cost), by insertion
    /// into a sorted buffer (after the first few, an entry costs one
    /// comparison), and the largest magnitude in `c` for the rounding
    /// tolerance.
    fn cheapest_edges(n: usize, c: &[f64], k: usize) -> (Vec<Vec<(u32, f64)>>, f64) {
        let mut edges: Vec<Vec<(u32, f64)>> = Vec::with_capacity(n);
        let mut buf: Vec<(f64, u32)> = Vec::with_capacity(k + 1);
        let mut scale = 0.0f64;
        for i in 0..n {
            let row = &c[i * n..(i + 1) * n];
            // Each row starts at its own offset, so that among equal costs
            // rows keep different columns (with many ties, every row would
            // otherwise keep the same first columns, and no perfect
            // assignment would exist among them).
            let off = ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33) as usize % n;
            let mut cols = (off..n).chain(0..off);
            buf.clear();
            buf.extend(cols.by_ref().take(k).map(|j| (row[j], j as u32)));
            buf.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut top = buf[k - 1].0;
            for j in cols {
                let x = row[j];
                if x < top {
                    let at = buf.partition_point(|e| e.0 <= x);
                    buf.insert(at, (x, j as u32));
                    buf.pop();
                    top = buf[k - 1].0;
                }
            }
            scale = row.iter().fold(scale, |a, &x| a.max(x.abs()));
            edges.push(buf.iter().map(|&(x, j)| (j, x)).collect());
        }
        (edges, scale)
    }

    pub fn solve_counting(n: usize, c: &[f64], k: usize) -> Option<(Vec<usize>, usize)> {
        let k = k.clamp(1, n);
        let (mut edges, scale) = cheapest_edges(n, c, k);
        // Reduced costs this far below zero are rounding, not violations.
        let eps = 1e-9 * (1.0 + scale);

        // Row reduction (u = row minimum, v = 0, a row takes its cheapest
        // column when free), then augmenting row reduction on the graph.
        let mut u = vec![0.0f64; n];
        let mut v = vec![0.0f64; n];
        let mut row_of = vec![FREE; n];
        let mut col_of = vec![FREE; n];
        let mut free: Vec<u32> = Vec::new();
        for i in 0..n {
            let j = edges[i][0].0 as usize;
            if row_of[j] == FREE {
                row_of[j] = i as u32;
                col_of[i] = j as u32;
            } else {
                free.push(i as u32);
            }
        }
        super::augmenting_row_reduction(
            &mut v,
            &mut row_of,
            &mut col_of,
            &mut free,
            ARR_RETRIES * n,
            |i, v| super::min2(edges[i].iter().map(|&(j, x)| (j as usize, x)), v),
        );
        for i in 0..n {
            if col_of[i] != FREE {
                let j = col_of[i] as usize;
                u[i] = c[i * n + j] - v[j];
            }
        }

        let mut search = Search::new(n);
        let mut bad: Vec<(u32, u32)> = Vec::new();
        for round in 0..ROUNDS {
            for &cur in &free {
                search.run(cur, &edges, &mut u, &mut v, &mut row_of, &mut col_of)?;
            }
            free.clear();
            // The certificate, over the whole matrix.
            bad.clear();
            for i in 0..n {
                let row = &c[i * n..(i + 1) * n];
                let ui = u[i] - eps;
                for (j, (&x, &vj)) in row.iter().zip(&v).enumerate() {
                    if x - vj < ui {
                        bad.push((i as u32, j as u32));
                    }
                }
            }
            let mut added = false;
            for &(i, j) in &bad {
                let i = i as usize;
                if !edges[i].iter().any(|e| e.0 == j) {
                    edges[i].push((j, c[i * n + j as usize]));
                    added = true;
                }
            }
            if !added {
                // Proven (or only rounding noise on known entries is left).
                return Some((col_of.iter().map(|&j| j as usize).collect(), round));
            }
            // Lower each offending row's u to feasibility on its entries; a
            // row whose own entry is no longer tight gives its column up
            // (square problem: every column is assigned again by the end).
            let mut last = u32::MAX;
            for &(i, _) in &bad {
                if i == last {
                    continue;
                }
                last = i;
                let i = i as usize;
                let min = edges[i]
                    .iter()
                    .map(|&(j, x)| x - v[j as usize])
                    .fold(f64::INFINITY, f64::min);
                u[i] = u[i].min(min);
                let j = col_of[i] as usize;
                if c[i * n + j] - v[j] - u[i] > eps {
                    row_of[j] = FREE;
                    col_of[i] = FREE;
                    free.push(i as u32);
                }
            }
        }
        None
    }

    /// Reusable buffers of the sparse shortest augmenting path search.
    pub(super) struct Search {
        dist: Vec<f64>,
        pred: Vec<u32>,
        done: Vec<bool>,
        /// Columns given a finite distance in this search, to reset.
        touched: Vec<u32>,
        /// Columns settled, in order, for the dual update.
        scanned: Vec<u32>,
        heap: BinaryHeap<Entry>,
    }

    impl Search {
        pub(super) fn new(n: usize) -> Self {
            Search {
                dist: vec![f64::INFINITY; n],
                pred: vec![0; n],
                done: vec![false; n],
                touched: Vec::new(),
                scanned: Vec::new(),
                heap: BinaryHeap::new(),
            }
        }

        /// Assigns free row `cur` along a shortest augmenting path over the
        /// candidate entries, keeping u + v ≤ c on them and the assigned
        /// entries tight; None when no path exists in the graph.
        pub(super) fn run(
            &mut self,
            cur: u32,
            edges: &[Vec<(u32, f64)>],
            u: &mut [f64],
            v: &mut [f64],
            row_of: &mut [u32],
            col_of: &mut [u32],
        ) -> Option<()> {
            let mut i = cur as usize;
            let mut min_val = 0.0f64;
            let sink = loop {
                let base = min_val - u[i];
                for &(j, x) in &edges[i] {
                    let ju = j as usize;
                    if self.done[ju] {
                        continue;
                    }
                    let r = base + x - v[ju];
                    if r < self.dist[ju] {
                        if self.dist[ju] == f64::INFINITY {
                            self.touched.push(j);
                        }
                        self.dist[ju] = r;
                        self.pred[ju] = i as u32;
                        self.heap.push(Entry(r, row_of[ju] != FREE, j));
                    }
                }
                // Closest unsettled column (stale heap entries skipped).
                let j = loop {
                    let Some(Entry(d, _, j)) = self.heap.pop() else {
                        self.reset();
                        return None;
                    };
                    let ju = j as usize;
                    if !self.done[ju] && d == self.dist[ju] {
                        break ju;
                    }
                };
                min_val = self.dist[j];
                self.done[j] = true;
                self.scanned.push(j as u32);
                if row_of[j] == FREE {
                    break j;
                }
                i = row_of[j] as usize;
            };
            u[cur as usize] += min_val;
            for &j in &self.scanned {
                let j = j as usize;
                if j != sink {
                    let d = min_val - self.dist[j];
                    v[j] -= d;
                    u[row_of[j] as usize] += d;
                }
            }
            super::augment(cur, sink, |j| self.pred[j], row_of, col_of);
            self.reset();
            Some(())
        }

        fn reset(&mut self) {
            for &j in &self.touched {
                self.dist[j as usize] = f64::INFINITY;
                self.done[j as usize] = false;
            }
            self.touched.clear();
            self.scanned.clear();
            self.heap.clear();
        }
    }
}

/// A rectangular assignment problem given implicitly: a cost for any
/// entry, a few candidate entries per row to start from, and a check of the
/// LP optimality certificate over the whole matrix that does not visit every
/// entry (the caller knows the matrix's structure: equal costs over large
/// blocks). See [`solve_implicit`].
pub trait Implicit {
    /// Rows; at most [`Implicit::cols`]: every row is assigned.
    fn rows(&self) -> usize;
    fn cols(&self) -> usize;
    /// Entry (i, j): finite, and 0 or more.
    fn cost(&self, i: usize, j: usize) -> f64;
    /// Row i's entries to start from, (column, cost).
    fn candidates(&self, i: usize, out: &mut Vec<(u32, f64)>);
    /// Entries whose reduced cost `cost(i, j) - u[i] - v[j]` is below
    /// `-eps`, pushed as (row, column): none when there are none, at least
    /// one when there are some.
    fn violations(&self, u: &[f64], v: &[f64], eps: f64, out: &mut Vec<(u32, u32)>);
}

/// Certification rounds after which [`solve_implicit`] gives every row all
/// its entries (a safety net: the structured checks normally settle in one
/// or two rounds).
const IMPLICIT_ROUNDS: usize = 12;

/// Optimal assignment of every row of an [`Implicit`] problem (rows ≤
/// cols): row → column.
///
/// The sparse route's shortest augmenting path search runs on the
/// candidate entries, from u = row minima and v = 0; v only falls, and only
/// on columns that are then assigned, so v ≤ 0 with v = 0 on every column
/// left free, and the assigned entries are tight. If moreover every entry
/// of the whole matrix has `cost - u - v ≥ 0` (what
/// [`Implicit::violations`] checks), (u, v) is feasible for the dual of the
/// rectangular problem (rows assigned exactly once, columns at most once,
/// v ≤ 0) and complementary slackness holds, so the assignment is optimal
/// for the whole matrix, not just the candidates. Entries that fail join
/// their rows and the search runs again from the start.
pub fn solve_implicit(p: &dyn Implicit) -> Vec<usize> {
    let (n, m) = (p.rows(), p.cols());
    assert!(n <= m, "more rows ({n}) than columns ({m})");
    assert!(m < FREE as usize, "too many columns");
    let mut edges: Vec<Vec<(u32, f64)>> = (0..n)
        .map(|i| {
            let mut e = Vec::new();
            p.candidates(i, &mut e);
            e
        })
        .collect();
    let full_row =
        |i: usize| -> Vec<(u32, f64)> { (0..m).map(|j| (j as u32, p.cost(i, j))).collect() };
    let mut bad: Vec<(u32, u32)> = Vec::new();
    let mut search = sparse::Search::new(m);
    for round in 0.. {
        if round == IMPLICIT_ROUNDS {
            for (i, e) in edges.iter_mut().enumerate() {
                *e = full_row(i);
            }
        }
        for e in edges.iter_mut() {
            e.sort_unstable_by_key(|x| x.0);
            e.dedup_by_key(|x| x.0);
        }
        let scale = edges.iter().flatten().fold(0.0f64, |a, x| a.max(x.1.abs()));
        let eps = 1e-9 * (1.0 + scale);
        // Row reduction: u = the row's cheapest candidate, taken when free.
        let mut u = vec![0.0f64; n];
        let mut v = vec![0.0f64; m];
        let mut row_of = vec![FREE; m];
        let mut col_of = vec![FREE; n];
        let mut free: Vec<u32> = Vec::new();
        for i in 0..n {
            if edges[i].is_empty() {
                edges[i] = full_row(i);
            }
            let (j, c) =
                edges[i].iter().fold(
                    (u32::MAX, f64::INFINITY),
                    |b, &(j, c)| if c < b.1 { (j, c) } else { b },
                );
            u[i] = c;
            if row_of[j as usize] == FREE {
                row_of[j as usize] = i as u32;
                col_of[i] = j;
            } else {
                free.push(i as u32);
            }
        }
        for &cur in &free {
            let i = cur as usize;
            if search
                .run(cur, &edges, &mut u, &mut v, &mut row_of, &mut col_of)
                .is_none()
            {
                // No augmenting path among the candidates: the row gets
                // every column (a free one among them ends the path), with
                // u lowered to keep its entries feasible (it holds none).
                edges[i] = full_row(i);
                u[i] = edges[i]
                    .iter()
                    .map(|&(j, c)| c - v[j as usize])
                    .fold(f64::INFINITY, f64::min);
                search
                    .run(cur, &edges, &mut u, &mut v, &mut row_of, &mut col_of)
                    .expect("a row with every column reaches a free one");
            }
        }
        bad.clear();
        p.violations(&u, &v, eps, &mut bad);
        let mut added = false;
        for &(i, j) in &bad {
            let row = &mut edges[i as usize];
            if !row.iter().any(|e| e.0 == j) {
                row.push((j, p.cost(i as usize, j as usize)));
                added = true;
            }
        }
        if !added {
            return col_of.into_iter().map(|j| j as usize).collect();
        }
    }
    unreachable!("the rounds end with every entry a candidate")
}

/// The dense scan with AVX2 (4 columns per instruction, two independent
/// accumulators), chosen at run time: the same relaxation and minimum as
/// [`scan`], plus how many columns share the minimum, so that the caller
/// looks for a free one only when there is a tie.
#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    pub fn available() -> bool {
        std::is_x86_feature_detected!("avx2")
    }

    /// Returns (minimum distance, first column holding it, columns holding it).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn scan(
        row: &[f64],
        base: f64,
        v: &[f64],
        dist: &mut [f64],
        pred: &mut [u64],
        i: usize,
    ) -> (f64, usize, u64) {
        let m = row.len();
        assert!(v.len() >= m && dist.len() >= m && pred.len() >= m);
        let (rp, vp, dp, pp) = (
            row.as_ptr(),
            v.as_ptr(),
            dist.as_mut_ptr(),
            pred.as_mut_ptr(),
        );
        let vb = _mm256_set1_pd(base);
        let vi = _mm256_castsi256_pd(_mm256_set1_epi64x(i as i64));
        let ones = _mm256_castsi256_pd(_mm256_set1_epi64x(1));
        let eight = _mm256_set1_epi64x(8);
        // Two independent accumulator sets (columns 8k..8k+3 and
        // 8k+4..8k+7) so that the running minimum is not one long chain.
        let mut low = [_mm256_set1_pd(f64::INFINITY); 2];
        let mut idx = [_mm256_setzero_si256(); 2];
        let mut cnt = [_mm256_setzero_si256(); 2];
        let mut jv = [
            _mm256_setr_epi64x(0, 1, 2, 3),
            _mm256_setr_epi64x(4, 5, 6, 7),
        ];
        let chunks = m / 8;
        for k in 0..chunks {
            for h in 0..2 {
                let o = 8 * k + 4 * h;
                // SAFETY: o + 3 < m and every slice holds at least m values.
                let r = _mm256_sub_pd(
                    _mm256_add_pd(vb, _mm256_loadu_pd(rp.add(o))),
                    _mm256_loadu_pd(vp.add(o)),
                );
                let d = _mm256_loadu_pd(dp.add(o));
                let better = _mm256_cmp_pd::<_CMP_LT_OQ>(r, d);
                let d = _mm256_blendv_pd(d, r, better);
                _mm256_storeu_pd(dp.add(o), d);
                let p = _mm256_castsi256_pd(_mm256_loadu_si256(pp.add(o) as *const __m256i));
                let p = _mm256_blendv_pd(p, vi, better);
                _mm256_storeu_si256(pp.add(o) as *mut __m256i, _mm256_castpd_si256(p));
                let lt = _mm256_cmp_pd::<_CMP_LT_OQ>(d, low[h]);
                let eq = _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_EQ_OQ>(d, low[h]));
                low[h] = _mm256_blendv_pd(low[h], d, lt);
                idx[h] = _mm256_castpd_si256(_mm256_blendv_pd(
                    _mm256_castsi256_pd(idx[h]),
                    _mm256_castsi256_pd(jv[h]),
                    lt,
                ));
                // A new minimum counts 1; an equal one adds 1 (eq is all ones).
                cnt[h] = _mm256_castpd_si256(_mm256_blendv_pd(
                    _mm256_castsi256_pd(_mm256_sub_epi64(cnt[h], eq)),
                    ones,
                    lt,
                ));
                jv[h] = _mm256_add_epi64(jv[h], eight);
            }
        }
        let (mut lows, mut idxs, mut cnts) = ([0f64; 8], [0u64; 8], [0u64; 8]);
        for h in 0..2 {
            _mm256_storeu_pd(lows.as_mut_ptr().add(4 * h), low[h]);
            _mm256_storeu_si256(idxs.as_mut_ptr().add(4 * h) as *mut __m256i, idx[h]);
            _mm256_storeu_si256(cnts.as_mut_ptr().add(4 * h) as *mut __m256i, cnt[h]);
        }
        let mut lowest = f64::INFINITY;
        let mut at = usize::MAX;
        let mut ties = 0u64;
        let mut take = |d: f64, j: usize, c: u64| {
            if d < lowest {
                lowest = d;
                at = j;
                ties = c;
            } else if d == lowest {
                at = at.min(j);
                ties += c;
            }
        };
        for l in 0..8 {
            if cnts[l] > 0 {
                take(lows[l], idxs[l] as usize, cnts[l]);
            }
        }
        for j in 8 * chunks..m {
            let r = base + row[j] - v[j];
            if r < dist[j] {
                dist[j] = r;
                pred[j] = i as u64;
            }
            take(dist[j], j, 1);
        }
        (lowest, at, ties)
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod simd {
    pub fn available() -> bool {
        false
    }

    /// # Safety
    /// Never called: `available()` is false.
    pub unsafe fn scan(
        _: &[f64],
        _: f64,
        _: &[f64],
        _: &mut [f64],
        _: &mut [u64],
        _: usize,
    ) -> (f64, usize, u64) {
        unreachable!("no SIMD scan on this architecture")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Minimum total over every injective map of the smaller side into the
    /// larger (small matrices only).
    fn brute(n: usize, m: usize, c: &[f64]) -> f64 {
        fn go(i: usize, n: usize, m: usize, c: &[f64], used: &mut [bool]) -> f64 {
            if i == n {
                return 0.0;
            }
            let mut best = f64::INFINITY;
            for j in 0..m {
                if !used[j] {
                    used[j] = true;
                    best = best.min(c[i * m + j] + go(i + 1, n, m, c, used));
                    used[j] = false;
                }
            }
            best
        }
        if n <= m {
            go(0, n, m, c, &mut vec![false; m])
        } else {
            let mut t = vec![0.0; n * m];
            for i in 0..n {
                for j in 0..m {
                    t[j * n + i] = c[i * m + j];
                }
            }
            go(0, m, n, &t, &mut vec![false; n])
        }
    }

    fn check_valid(n: usize, m: usize, a: &[Option<usize>]) {
        assert_eq!(a.len(), n);
        let cols: Vec<usize> = a.iter().flatten().copied().collect();
        assert_eq!(cols.len(), n.min(m), "{a:?}");
        let distinct: std::collections::HashSet<_> = cols.iter().collect();
        assert_eq!(distinct.len(), cols.len(), "a column used twice: {a:?}");
        assert!(cols.iter().all(|&j| j < m));
    }

    /// Real-valued, small-integer (many ties, the shape of scheduling
    /// costs) and signed matrices in turn.
    fn matrix(rng: &mut fastrand::Rng, kind: usize, len: usize) -> Vec<f64> {
        (0..len)
            .map(|_| match kind % 3 {
                0 => rng.f64() * 100.0,
                1 => rng.u32(0..4) as f64,
                _ => rng.f64() * 20.0 - 10.0,
            })
            .collect()
    }

    #[test]
    fn optimal_on_random_small_matrices() {
        let mut rng = fastrand::Rng::with_seed(7);
        for round in 0..3000 {
            let n = rng.usize(1..=7);
            let m = rng.usize(1..=7);
            let c = matrix(&mut rng, round, n * m);
            let a = solve_flat(n, m, &c);
            check_valid(n, m, &a);
            let best = brute(n, m, &c);
            assert!(
                (total(m, &c, &a) - best).abs() < 1e-9,
                "{n}x{m} {c:?}: got {} want {best}",
                total(m, &c, &a)
            );
        }
    }

    #[test]
    fn rectangular_equals_the_papers_square_expansion() {
        let mut rng = fastrand::Rng::with_seed(11);
        for round in 0..300 {
            let n = rng.usize(1..=40);
            let m = rng.usize(1..=40);
            let c = matrix(&mut rng, round, n * m);
            let a = solve_flat(n, m, &c);
            check_valid(n, m, &a);
            // expandToSquare(C, 0), lsap(C), filterDummy(R).
            let (k, sq) = expand_to_square(n, m, &c, 0.0);
            let b = solve_flat(k, k, &sq);
            check_valid(k, k, &b);
            let filtered: Vec<Option<usize>> =
                b[..n].iter().map(|j| j.filter(|&j| j < m)).collect();
            assert!((total(m, &c, &a) - total(m, &c, &filtered)).abs() < 1e-9);
            assert!((total(k, &sq, &b) - total(m, &c, &a)).abs() < 1e-9);
        }
    }

    #[test]
    fn vec_of_rows_api_and_edge_cases() {
        assert_eq!(solve(&[]), Vec::<Option<usize>>::new());
        assert_eq!(solve(&[vec![], vec![]]), vec![None, None]);
        assert_eq!(solve(&[vec![5.0]]), vec![Some(0)]);
        // Three rows, two columns: the row left over is the dummy's.
        let a = solve(&[vec![1.0, 9.0], vec![9.0, 1.0], vec![5.0, 5.0]]);
        assert_eq!(a, vec![Some(0), Some(1), None]);
        let a = solve(&[
            vec![4.0, 1.0, 3.0],
            vec![2.0, 0.0, 5.0],
            vec![3.0, 2.0, 2.0],
        ]);
        assert_eq!(a, vec![Some(1), Some(0), Some(2)]);
        // All equal: any permutation, found without trouble.
        let flat = vec![1.0; 50 * 50];
        check_valid(50, 50, &solve_flat(50, 50, &flat));
    }

    #[test]
    fn sparse_route_matches_the_dense_solver() {
        let mut rng = fastrand::Rng::with_seed(3);
        let mut repaired = 0;
        for round in 0..240 {
            let n = rng.usize(20..=120);
            let c = matrix(&mut rng, round, n * n);
            let want: f64 = dense(n, n, &c)
                .iter()
                .enumerate()
                .map(|(i, &j)| c[i * n + j])
                .sum();
            // The production k, and tiny ones that force the certificate
            // to reject and repair (or the route to give up).
            let k = [sparse::K, 2, 3][round % 3];
            if let Some((a, rounds)) = sparse::solve_counting(n, &c, k) {
                let a: Vec<Option<usize>> = a.into_iter().map(Some).collect();
                check_valid(n, n, &a);
                assert!(
                    (total(n, &c, &a) - want).abs() < 1e-6,
                    "n={n} k={k}: {} vs {want}",
                    total(n, &c, &a)
                );
                if rounds > 0 {
                    repaired += 1;
                }
            }
        }
        assert!(repaired >= 3, "the repair path ran {repaired} times");
        // Through the public entry point, above the sparse threshold.
        let n = SPARSE_MIN + 37;
        for kind in 0..3 {
            let c = matrix(&mut rng, kind, n * n);
            let a = solve_flat(n, n, &c);
            check_valid(n, n, &a);
            let want: f64 = dense(n, n, &c)
                .iter()
                .enumerate()
                .map(|(i, &j)| c[i * n + j])
                .sum();
            assert!((total(n, &c, &a) - want).abs() < 1e-6);
        }
    }

    /// A dense matrix seen through [`Implicit`]: a few candidates per row,
    /// the certificate by a full pass.
    struct Seen<'a> {
        n: usize,
        m: usize,
        c: &'a [f64],
        k: usize,
    }

    impl Implicit for Seen<'_> {
        fn rows(&self) -> usize {
            self.n
        }
        fn cols(&self) -> usize {
            self.m
        }
        fn cost(&self, i: usize, j: usize) -> f64 {
            self.c[i * self.m + j]
        }
        fn candidates(&self, i: usize, out: &mut Vec<(u32, f64)>) {
            // Deliberately poor: the first k columns after an offset.
            for t in 0..self.k.min(self.m) {
                let j = (i * 7 + t) % self.m;
                out.push((j as u32, self.cost(i, j)));
            }
        }
        fn violations(&self, u: &[f64], v: &[f64], eps: f64, out: &mut Vec<(u32, u32)>) {
            for (i, ui) in u.iter().enumerate() {
                for (j, vj) in v.iter().enumerate() {
                    if self.cost(i, j) - ui - vj < -eps {
                        out.push((i as u32, j as u32));
                    }
                }
            }
        }
    }

    #[test]
    fn implicit_route_is_optimal_on_the_whole_matrix() {
        let mut rng = fastrand::Rng::with_seed(21);
        for round in 0..400 {
            let n = rng.usize(1..=30);
            let m = n + rng.usize(0..=30);
            // Costs of 0 or more, often tied (scheduling-shaped).
            let c: Vec<f64> = matrix(&mut rng, round, n * m)
                .iter()
                .map(|x| x.abs())
                .collect();
            let k = [1, 2, 4, 16][round % 4];
            let a = solve_implicit(&Seen { n, m, c: &c, k });
            let a: Vec<Option<usize>> = a.into_iter().map(Some).collect();
            check_valid(n, m, &a);
            let want: f64 = total(
                m,
                &c,
                &dense(n, m, &c).into_iter().map(Some).collect::<Vec<_>>(),
            );
            assert!(
                (total(m, &c, &a) - want).abs() < 1e-6,
                "{n}x{m} k={k}: {} vs {want}",
                total(m, &c, &a)
            );
        }
    }

    #[test]
    fn scalar_and_simd_scans_agree() {
        if !simd::available() {
            return;
        }
        let mut rng = fastrand::Rng::with_seed(9);
        for round in 0..200 {
            let m = rng.usize(1..=70);
            let row = matrix(&mut rng, round, m);
            let v = matrix(&mut rng, round + 1, m);
            let d0 = matrix(&mut rng, round, m);
            let row_of: Vec<u32> = (0..m).map(|_| FREE).collect();
            let (mut d1, mut p1) = (d0.clone(), vec![0u64; m]);
            let (mut d2, mut p2) = (d0.clone(), vec![0u64; m]);
            let (l1, _) = scan(&row, 1.5, &v, &mut d1, &mut p1, &row_of, 4);
            // SAFETY: checked above.
            let (l2, at, ties) = unsafe { simd::scan(&row, 1.5, &v, &mut d2, &mut p2, 4) };
            assert_eq!((d1, p1, l1), (d2.clone(), p2, l2));
            assert_eq!(d2[at], l2);
            assert_eq!(ties as usize, d2.iter().filter(|&&d| d == l2).count());
        }
    }
}
