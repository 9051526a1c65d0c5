//! The linear sum assignment problem (LSAP) solver behind lsap-sched and
//! lsap-fair-sched (Guo, Fox, Zhou, "Investigation of Data Locality and
//! Fairness in MapReduce", section 3.2: "a couple of algorithms with
//! polynomial-time complexity (e.g. Hungarian algorithm)").
//!
//! The method is the Hungarian method in its shortest-augmenting-path form
//! with dual potentials (Jonker & Volgenant 1987, with Crouse's 2016
//! refinements as in SciPy's `linear_sum_assignment`): O(n³) worst case.
//!
//! - Square matrices start with Jonker-Volgenant's initialisation (column
//!   reduction, reduction transfer, two rounds of augmenting row reduction),
//!   which on typical matrices assigns most rows before any path search.
//! - Every remaining free row gets a Dijkstra-like search over reduced costs
//!   `c[i][j] - u[i] - v[j]`; the unscanned columns are kept compacted at the
//!   front of one permutation array, so each step scans only those, and a free
//!   column wins ties so that paths end as early as possible.
//! - All buffers are allocated once per solve: nothing allocates in the loops.
//!
//! Rectangular matrices: the paper squares its matrix with zero-cost dummy
//! rows (fewer tasks than slots) or columns (more tasks than slots), solves,
//! and filters the dummies out; its own proof shows the dummies add a
//! constant to every complete assignment. Solving the rectangular problem
//! directly (every row of the smaller side assigned, unassigned columns kept
//! at zero potential) gives exactly the same optimum without the dummies'
//! work, so that is what [`solve`] does; the unit tests check it against the
//! literal expansion ([`expand_to_square`]) and against brute force.

use std::time::Duration;

const NONE: usize = usize::MAX;

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
    if rows == 0 || cols == 0 {
        return vec![None; rows];
    }
    if rows <= cols {
        return sap(rows, cols, cost).into_iter().map(Some).collect();
    }
    // More rows than columns: solve the transpose (columns as rows).
    let mut t = vec![0.0; rows * cols];
    for i in 0..rows {
        for j in 0..cols {
            t[j * rows + i] = cost[i * cols + j];
        }
    }
    let mut out = vec![None; rows];
    for (j, i) in sap(cols, rows, &t).into_iter().enumerate() {
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

/// Per-column state of the search, kept together for locality: a scan
/// touches the cost row and this record for each unscanned column.
#[derive(Clone, Copy)]
struct Col {
    /// Dual potential v[j].
    v: f64,
    /// Length of the shortest alternating path found so far to this column.
    dist: f64,
    /// Row this column was reached from on that path.
    pred: usize,
    /// Row assigned to this column, or NONE.
    row: usize,
}

/// n ≤ m: assigns every row; returns row → column.
fn sap(n: usize, m: usize, c: &[f64]) -> Vec<usize> {
    debug_assert!(n <= m);
    let mut u = vec![0.0f64; n];
    let mut cols = vec![
        Col {
            v: 0.0,
            dist: f64::INFINITY,
            pred: NONE,
            row: NONE,
        };
        m
    ];
    let mut col_of = vec![NONE; n];
    let mut free: Vec<usize> = Vec::with_capacity(n);
    if n == m {
        jv_init(n, c, &mut cols, &mut col_of, &mut free);
    } else {
        // Row reduction: u[i] = min_j c[i][j], v = 0 (an unassigned column
        // must keep v = 0 in the rectangular problem); a row takes its
        // cheapest column when that is still free.
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
            if cols[jb].row == NONE {
                cols[jb].row = i;
                col_of[i] = jb;
            } else {
                free.push(i);
            }
        }
    }
    if n == m {
        // Duals consistent with the initial assignment: every assigned row
        // sits on a column of minimum reduced cost (JV's invariant).
        for i in 0..n {
            if col_of[i] != NONE {
                u[i] = c[i * m + col_of[i]] - cols[col_of[i]].v;
            }
        }
    }

    // Unscanned columns live in remaining[..left]; scanned ones after it.
    let mut remaining: Vec<usize> = (0..m).collect();
    let mut steps = 0usize;
    let mut elems = 0usize;
    let t0 = std::time::Instant::now();
    for &cur in &free {
        for col in cols.iter_mut() {
            col.dist = f64::INFINITY;
        }
        let mut left = m;
        let mut min_val = 0.0f64;
        let mut i = cur;
        let sink;
        loop {
            let ui = u[i];
            let row = &c[i * m..(i + 1) * m];
            let mut lowest = f64::INFINITY;
            let mut at = NONE;
            steps += 1;
            elems += left;
            for (k, &j) in remaining[..left].iter().enumerate() {
                let col = &mut cols[j];
                let r = min_val + row[j] - ui - col.v;
                if r < col.dist {
                    col.pred = i;
                    col.dist = r;
                }
                if col.dist < lowest || (col.dist == lowest && col.row == NONE) {
                    lowest = col.dist;
                    at = k;
                }
            }
            // Finite costs and n ≤ m: some column is always reachable.
            debug_assert!(at != NONE);
            min_val = lowest;
            let j = remaining[at];
            left -= 1;
            remaining.swap(at, left);
            if cols[j].row == NONE {
                sink = j;
                break;
            }
            i = cols[j].row;
        }
        // Dual update over the scanned columns and the rows they hold.
        u[cur] += min_val;
        for &j in &remaining[left..] {
            if j == sink {
                continue;
            }
            let d = min_val - cols[j].dist;
            u[cols[j].row] += d;
            cols[j].v -= d;
        }
        // Augment along the path back to `cur`.
        let mut j = sink;
        loop {
            let i = cols[j].pred;
            cols[j].row = i;
            let prev = std::mem::replace(&mut col_of[i], j);
            if i == cur {
                break;
            }
            j = prev;
        }
    }
    if std::env::var("HDEBUG").is_ok() {
        eprintln!(
            "n={n} m={m} free={} steps={steps} elems={elems} sap={:?}",
            free.len(),
            t0.elapsed()
        );
    }
    col_of
}

/// Jonker-Volgenant initialisation of a square problem: sets `v`, a partial
/// assignment where each assigned row holds a column of minimum reduced cost
/// `c[i][j] - v[j]`, and the list of rows left free.
fn jv_init(n: usize, c: &[f64], cols: &mut [Col], col_of: &mut [usize], free: &mut Vec<usize>) {
    // Column reduction, last column first (JV: "reverse order gives better
    // results"): v[j] = min_i c[i][j]; a row takes the first column whose
    // minimum it holds.
    let mut matches = vec![0u32; n];
    let mut colmin = vec![f64::INFINITY; n];
    let mut argmin = vec![0usize; n];
    // Row-major sweep (cache-friendly) for the column minima; strict `<`
    // keeps the lowest row index on ties, as a column-wise scan would.
    for i in 0..n {
        let row = &c[i * n..(i + 1) * n];
        for j in 0..n {
            if row[j] < colmin[j] {
                colmin[j] = row[j];
                argmin[j] = i;
            }
        }
    }
    for j in (0..n).rev() {
        let i = argmin[j];
        cols[j].v = colmin[j];
        matches[i] += 1;
        if matches[i] == 1 {
            col_of[i] = j;
            cols[j].row = i;
        }
    }
    // Reduction transfer: a row assigned once passes its slack to its column.
    for i in 0..n {
        match matches[i] {
            0 => free.push(i),
            1 => {
                let j1 = col_of[i];
                let row = &c[i * n..(i + 1) * n];
                let mut min = f64::INFINITY;
                for j in 0..n {
                    if j != j1 {
                        min = min.min(row[j] - cols[j].v);
                    }
                }
                if min.is_finite() {
                    cols[j1].v -= min;
                }
            }
            _ => {}
        }
    }
    // Augmenting row reduction, twice.
    for _ in 0..2 {
        let mut k = 0;
        let prev = free.len();
        let mut still = 0;
        // Retries strictly lower a potential, so they end, but on some
        // matrices only after many tiny steps; past this budget a displaced
        // row simply waits for the path search (ARR is only a head start).
        let mut retries = 8 * n;
        // Rows still free after this round are compacted to free[..still];
        // a row displaced on a strict improvement is retried at once in
        // the slot just read (free[k - 1]), as in JV's listing.
        while k < prev {
            let i = free[k];
            k += 1;
            let row = &c[i * n..(i + 1) * n];
            let (mut umin, mut j1) = (row[0] - cols[0].v, 0usize);
            let (mut usub, mut j2) = (f64::INFINITY, NONE);
            for j in 1..n {
                let h = row[j] - cols[j].v;
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
            let mut i0 = cols[j1].row;
            if umin < usub {
                // Raise this row's minimum to its second minimum.
                cols[j1].v -= usub - umin;
            } else if i0 != NONE && j2 != NONE {
                // Equal minima: take the second column, which may be free.
                j1 = j2;
                i0 = cols[j2].row;
            }
            col_of[i] = j1;
            cols[j1].row = i;
            if i0 != NONE {
                col_of[i0] = NONE;
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

/// Times one solve of a seeded n×n matrix of uniform random costs in
/// [0, 100), as the paper's overhead test (section 4.1) fed its solver.
pub fn bench(n: usize, seed: u64) -> Duration {
    let mut rng = fastrand::Rng::with_seed(seed);
    let cost: Vec<f64> = (0..n * n).map(|_| rng.f64() * 100.0).collect();
    let t = std::time::Instant::now();
    std::hint::black_box(solve_flat(n, n, std::hint::black_box(&cost)));
    t.elapsed()
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

    #[test]
    fn optimal_on_random_small_matrices() {
        let mut rng = fastrand::Rng::with_seed(7);
        for round in 0..3000 {
            let n = rng.usize(1..=7);
            let m = rng.usize(1..=7);
            // Alternate real-valued costs, small integers (many ties, the
            // shape of scheduling costs) and negative values.
            let c: Vec<f64> = (0..n * m)
                .map(|_| match round % 3 {
                    0 => rng.f64() * 100.0,
                    1 => rng.u32(0..4) as f64,
                    _ => rng.f64() * 20.0 - 10.0,
                })
                .collect();
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
        for _ in 0..200 {
            let n = rng.usize(1..=40);
            let m = rng.usize(1..=40);
            let c: Vec<f64> = (0..n * m).map(|_| rng.u32(0..10) as f64).collect();
            let a = solve_flat(n, m, &c);
            check_valid(n, m, &a);
            let (k, sq) = expand_to_square(n, m, &c, 0.0);
            let b = solve_flat(k, k, &sq);
            check_valid(k, k, &b);
            // filterDummy: keep real rows on real columns.
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
    }

    #[test]
    fn larger_matrices_match_the_padded_reference() {
        // Beyond brute force: the square solve (JV start) and the
        // rectangular one (row-reduction start) reach the same optimum on
        // the same problem.
        let mut rng = fastrand::Rng::with_seed(3);
        for n in [50usize, 120, 200] {
            let c: Vec<f64> = (0..n * n).map(|_| rng.u32(0..50) as f64).collect();
            let sq = solve_flat(n, n, &c);
            check_valid(n, n, &sq);
            // Same problem with one extra column that costs too much to use.
            let mut wide = Vec::with_capacity(n * (n + 1));
            for i in 0..n {
                wide.extend_from_slice(&c[i * n..(i + 1) * n]);
                wide.push(1e6);
            }
            let w = solve_flat(n, n + 1, &wide);
            check_valid(n, n + 1, &w);
            assert!((total(n, &c, &sq) - total(n + 1, &wide, &w)).abs() < 1e-6);
        }
    }

    #[test]
    #[ignore = "timing; run with --release -- --ignored --nocapture"]
    fn solver_times_at_the_papers_sizes() {
        for n in [100, 500, 1700, 2900] {
            let best = (0..3).map(|s| bench(n, s)).min().unwrap();
            println!("lsap solve {n}x{n}: {:.1} ms", best.as_secs_f64() * 1e3);
        }
    }
}
