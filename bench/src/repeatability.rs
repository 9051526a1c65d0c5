//! The lab's own repeatability: how well half of the runs ranks the
//! policies like the other half (split-half Spearman of the policies' mean
//! job times). It is the ceiling for any model of the cluster: a simulator
//! cannot be asked to rank the policies better than the cluster ranks them
//! against itself. Issue 41 found it near 0 for the policies other than
//! the best: there, their order was noise.

use std::collections::BTreeMap;

/// Splits enumerated in full up to this many; above it, a seeded sample of
/// this many (C(10, 5) = 252 in full; C(20, 10) = 184,756 sampled).
pub const MAX_SPLITS: usize = 2000;

/// Average ranks from 1 (ties share the mean of their ranks).
pub fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut r = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            r[k] = avg;
        }
        i = j + 1;
    }
    r
}

/// Spearman's rank correlation (Pearson's of the average ranks); `None`
/// below two values or when either side has all its values tied.
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    let (ra, rb) = (ranks(a), ranks(b));
    let n = ra.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in ra.iter().zip(&rb) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma).powi(2);
        sbb += (y - mb).powi(2);
    }
    (saa > 0.0 && sbb > 0.0).then(|| sab / (saa * sbb).sqrt())
}

/// The split-half figures of one load.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SplitHalf {
    /// The mean Spearman between halves over every policy.
    pub all: Option<f64>,
    /// The same without the best policy (the lowest mean job time over
    /// every run): whether the lab can order the rest.
    pub without_best: Option<f64>,
    pub best: String,
    /// The runs every policy has, which the splits divide.
    pub runs: usize,
    pub splits: usize,
    /// Whether the splits are a seeded sample rather than all of them.
    pub sampled: bool,
}

/// Every `k`-subset of `0..n`, in lexicographic order.
fn subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut c: Vec<usize> = (0..k).collect();
    loop {
        out.push(c.clone());
        let Some(i) = (0..k).rev().find(|&i| c[i] < n - k + i) else {
            return out;
        };
        c[i] += 1;
        for j in i + 1..k {
            c[j] = c[j - 1] + 1;
        }
    }
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// The halves: every subset of ⌊n/2⌋ runs, or a seeded sample of
/// [`MAX_SPLITS`] of them when there are more.
fn halves(n: usize, seed: u64) -> (Vec<Vec<usize>>, bool) {
    let k = n / 2;
    if binomial(n, k) <= MAX_SPLITS as f64 {
        return (subsets(n, k), false);
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut all: Vec<usize> = (0..n).collect();
    let picks = (0..MAX_SPLITS)
        .map(|_| {
            rng.shuffle(&mut all);
            let mut h = all[..k].to_vec();
            h.sort_unstable();
            h
        })
        .collect();
    (picks, true)
}

/// The mean Spearman over the splits of the runs every policy has, between
/// the policies' mean job times in one half and in the other; `means` is
/// each policy's mean job time per run. With fewer than two runs or two
/// policies there is nothing to split or rank; a split where one half has
/// every policy tied has no rank to correlate and is left out of the mean.
pub fn split_half(means: &[(String, BTreeMap<u32, f64>)], seed: u64) -> SplitHalf {
    let mut runs: Vec<u32> = means
        .first()
        .map_or(vec![], |m| m.1.keys().copied().collect());
    runs.retain(|r| means.iter().all(|m| m.1.contains_key(r)));
    let overall =
        |m: &BTreeMap<u32, f64>| runs.iter().map(|r| m[r]).sum::<f64>() / runs.len() as f64;
    let best = means
        .iter()
        .min_by(|a, b| overall(&a.1).total_cmp(&overall(&b.1)))
        .map_or(String::new(), |m| m.0.clone());
    let mut out = SplitHalf {
        all: None,
        without_best: None,
        best,
        runs: runs.len(),
        splits: 0,
        sampled: false,
    };
    if runs.len() < 2 || means.len() < 2 {
        return out;
    }
    let (splits, sampled) = halves(runs.len(), seed);
    let keep: Vec<usize> = (0..means.len())
        .filter(|&i| means[i].0 != out.best)
        .collect();
    let (mut all, mut rest) = (Vec::new(), Vec::new());
    for h in &splits {
        let half = |m: &BTreeMap<u32, f64>, inside: bool| {
            let v: Vec<f64> = (0..runs.len())
                .filter(|i| h.contains(i) == inside)
                .map(|i| m[&runs[i]])
                .collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        let a: Vec<f64> = means.iter().map(|m| half(&m.1, true)).collect();
        let b: Vec<f64> = means.iter().map(|m| half(&m.1, false)).collect();
        all.extend(spearman(&a, &b));
        let pick = |v: &[f64]| keep.iter().map(|&i| v[i]).collect::<Vec<_>>();
        rest.extend(spearman(&pick(&a), &pick(&b)));
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    out.all = mean(&all);
    out.without_best = mean(&rest);
    out.splits = splits.len();
    out.sampled = sampled;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_by_hand() {
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]), Some(1.0));
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), Some(-1.0));
        // Ranks 1,2,3,4 against 2,1,4,3: d² = 4, 1 - 6·4/(4·15) = 0.6.
        let r = spearman(&[1.0, 2.0, 3.0, 4.0], &[2.0, 1.0, 4.0, 3.0]).unwrap();
        assert!((r - 0.6).abs() < 1e-12);
        assert_eq!(ranks(&[5.0, 1.0, 5.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
        assert_eq!(spearman(&[1.0, 1.0], &[1.0, 2.0]), None);
    }

    #[test]
    fn subsets_are_all_there() {
        assert_eq!(subsets(4, 2).len(), 6);
        assert_eq!(subsets(10, 5).len(), 252);
        assert_eq!(subsets(3, 1), vec![vec![0], vec![1], vec![2]]);
        let (h, sampled) = halves(20, 1);
        assert!(sampled && h.len() == MAX_SPLITS && h.iter().all(|x| x.len() == 10));
        assert_eq!(halves(20, 1), halves(20, 1));
    }

    fn policy(name: &str, f: impl Fn(u32) -> f64) -> (String, BTreeMap<u32, f64>) {
        (name.into(), (1..=6).map(|r| (r, f(r))).collect())
    }

    /// Policies 1 s apart with run noise of ±0.1: every half ranks them
    /// alike. The best far ahead and the other two trading places run by
    /// run: with three runs a half, one half always has more of the runs
    /// where b is ahead, the other more of those where c is, so the halves
    /// order b and c oppositely: −1 without the best, and over all three
    /// ranks (1, 2, 3) against (1, 3, 2): 1 − 6·2/(3·8) = 0.5.
    #[test]
    fn a_steady_lab_ranks_alike_and_a_noisy_one_does_not() {
        let noise = |r: u32| if r.is_multiple_of(2) { 0.1 } else { -0.1 };
        let steady: Vec<_> = (0..4)
            .map(|k| policy(&format!("p{k}"), |r| k as f64 + noise(r)))
            .collect();
        let s = split_half(&steady, 1);
        assert_eq!((s.all, s.without_best), (Some(1.0), Some(1.0)));
        assert_eq!(
            (s.best.as_str(), s.runs, s.splits, s.sampled),
            ("p0", 6, 20, false)
        );
        // b and c trade places run by run; a is always 5 s ahead.
        let noisy = vec![
            policy("a", |_| 1.0),
            policy("b", |r| 6.0 + noise(r)),
            policy("c", |r| 6.0 - noise(r)),
        ];
        let s = split_half(&noisy, 1);
        assert_eq!(s.best, "a");
        assert_eq!((s.all, s.without_best), (Some(0.5), Some(-1.0)), "{s:?}");
        assert_eq!(split_half(&[policy("a", |_| 1.0)], 1).all, None);
    }
}
