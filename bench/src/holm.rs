//! Holm's step-down correction: with several comparisons named before the
//! runs (`--compare atlas:all` is eleven of them with twelve policies),
//! each at 5 % would find a difference by chance in about one family in
//! two. Holm keeps the chance of any false claim in the family at 5 %, and
//! rejects at least as much as Bonferroni.

/// Holm-adjusted p-values, in the order given: sorted ascending, the i-th
/// (from 0) of `m` is multiplied by `m − i`, then made non-decreasing and
/// capped at 1. A comparison is a claim at level α when its adjusted
/// p-value is at most α.
pub fn adjusted(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (i, &k) in order.iter().enumerate() {
        let v = if p[k].is_nan() {
            1.0
        } else {
            ((m - i) as f64 * p[k]).min(1.0)
        };
        running = running.max(v);
        out[k] = running;
    }
    out
}

/// Which comparisons Holm's procedure rejects at level `alpha`.
pub fn rejects(p: &[f64], alpha: f64) -> Vec<bool> {
    adjusted(p).into_iter().map(|a| a <= alpha).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four p-values worked by hand: sorted 0.01, 0.02, 0.03, 0.5; times
    /// 4, 3, 2, 1: 0.04, 0.06, 0.06, 0.5. At 5 % only the first stands
    /// (Bonferroni, 0.05 / 4 = 0.0125, would also keep only it; unadjusted,
    /// three would).
    #[test]
    fn adjusted_by_hand() {
        let p = [0.03, 0.5, 0.01, 0.02];
        let a = adjusted(&p);
        let want = [0.06, 0.5, 0.04, 0.06];
        for (x, w) in a.iter().zip(want) {
            assert!((x - w).abs() < 1e-12, "{a:?}");
        }
        assert_eq!(rejects(&p, 0.05), vec![false, false, true, false]);
        // Step-down: the adjusted values never decrease with the raw ones.
        assert_eq!(adjusted(&[0.04, 0.001]), vec![0.04, 0.002]);
        assert_eq!(adjusted(&[0.3, 0.2]), vec![0.4, 0.4]);
        assert_eq!(rejects(&[0.049], 0.05), vec![true]);
        assert!(adjusted(&[]).is_empty());
    }
}
