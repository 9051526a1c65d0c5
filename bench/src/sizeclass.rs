//! Size classes of jobs by their time alone, for slowdown per class: a
//! policy that favours short jobs can halve their slowdown while the big
//! jobs' barely moves, and one mean over all jobs hides both.
//!
//! The boundaries are the terciles of the slice's times alone, by count:
//! sorted, the first ⌈n/3⌉ jobs are small, up to the ⌈2n/3⌉-th medium, the
//! rest big (40 jobs: 14, 13, 13; jobs tied at a boundary share the lower
//! class). Every report prints the boundaries, since they change with the
//! slice and the cluster.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SizeClass {
    Small,
    Medium,
    Big,
}

impl SizeClass {
    pub const ALL: [SizeClass; 3] = [SizeClass::Small, SizeClass::Medium, SizeClass::Big];

    pub fn name(self) -> &'static str {
        match self {
            SizeClass::Small => "small",
            SizeClass::Medium => "medium",
            SizeClass::Big => "big",
        }
    }
}

/// The class boundaries, seconds alone.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Classes {
    /// The largest time alone of a small job.
    pub small_max_s: f64,
    /// The largest time alone of a medium job.
    pub medium_max_s: f64,
}

impl Classes {
    /// The terciles of `alone` (the slice's times alone); `None` when empty.
    pub fn terciles(alone: &[f64]) -> Option<Classes> {
        let mut v: Vec<f64> = alone.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(Classes {
            small_max_s: v[v.len().div_ceil(3) - 1],
            medium_max_s: v[(2 * v.len()).div_ceil(3) - 1],
        })
    }

    pub fn of(&self, alone_s: f64) -> SizeClass {
        if alone_s <= self.small_max_s {
            SizeClass::Small
        } else if alone_s <= self.medium_max_s {
            SizeClass::Medium
        } else {
            SizeClass::Big
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Times alone 1..9: the 3rd and the 6th, three jobs a class; 40 jobs
    /// split 14, 13, 13.
    #[test]
    fn terciles_by_hand() {
        let alone: Vec<f64> = (1..=9).map(f64::from).collect();
        let c = Classes::terciles(&alone).unwrap();
        assert_eq!((c.small_max_s, c.medium_max_s), (3.0, 6.0));
        let classes: Vec<SizeClass> = alone.iter().map(|&a| c.of(a)).collect();
        let count = |k| classes.iter().filter(|&&x| x == k).count();
        assert_eq!(
            (
                count(SizeClass::Small),
                count(SizeClass::Medium),
                count(SizeClass::Big)
            ),
            (3, 3, 3)
        );
        let forty: Vec<f64> = (1..=40).map(f64::from).collect();
        let c = Classes::terciles(&forty).unwrap();
        assert_eq!((c.small_max_s, c.medium_max_s), (14.0, 27.0));
        assert!(Classes::terciles(&[]).is_none());
        assert_eq!(Classes::terciles(&[2.0]).unwrap().of(2.0), SizeClass::Small);
    }
}
