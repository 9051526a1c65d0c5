//! Rack-aware replica placement, HDFS's default policy
//! (`BlockPlacementPolicyDefault`): the first replica on the writer when the
//! writer is a worker (else a random node), the second on another rack, the
//! third on the second's rack on another node, any further ones at random.
//! With a single rack it degrades to distinct random nodes.

use std::collections::HashSet;

/// A node placement may choose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub name: String,
    pub rack: String,
}

/// Chooses up to `count` distinct targets from `nodes`, none in `exclude`,
/// given replicas that already exist (`existing`, for re-replication).
pub fn choose_targets(
    nodes: &[Candidate],
    existing: &[Candidate],
    exclude: &HashSet<String>,
    writer: Option<&str>,
    count: usize,
    rng: &mut fastrand::Rng,
) -> Vec<Candidate> {
    let mut chosen: Vec<Candidate> = Vec::new();
    let taken = |c: &Candidate, chosen: &[Candidate]| {
        exclude.contains(&c.name)
            || existing.iter().any(|e| e.name == c.name)
            || chosen.iter().any(|e| e.name == c.name)
    };
    let pick = |pred: &dyn Fn(&Candidate) -> bool,
                chosen: &[Candidate],
                rng: &mut fastrand::Rng|
     -> Option<Candidate> {
        let pool: Vec<&Candidate> = nodes
            .iter()
            .filter(|c| !taken(c, chosen) && pred(c))
            .collect();
        if pool.is_empty() {
            None
        } else {
            Some(pool[rng.usize(..pool.len())].clone())
        }
    };
    while chosen.len() < count {
        let placed: Vec<Candidate> = existing.iter().chain(chosen.iter()).cloned().collect();
        let next = match placed.len() {
            0 => writer
                .and_then(|w| nodes.iter().find(|c| c.name == w && !taken(c, &chosen)))
                .cloned()
                .or_else(|| pick(&|_| true, &chosen, rng)),
            1 => pick(&|c| c.rack != placed[0].rack, &chosen, rng)
                .or_else(|| pick(&|_| true, &chosen, rng)),
            _ => {
                // Third replica: a rack that already holds one, but only if the
                // replicas so far already span two racks; otherwise reach
                // another rack so that a rack loss never loses the block.
                let racks: HashSet<&str> = placed.iter().map(|c| c.rack.as_str()).collect();
                if racks.len() >= 2 {
                    let second_rack = placed[1].rack.clone();
                    pick(&|c| c.rack == second_rack, &chosen, rng)
                        .or_else(|| pick(&|_| true, &chosen, rng))
                } else {
                    pick(&|c| !racks.contains(c.rack.as_str()), &chosen, rng)
                        .or_else(|| pick(&|_| true, &chosen, rng))
                }
            }
        };
        match next {
            Some(c) => chosen.push(c),
            None => break,
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster() -> Vec<Candidate> {
        (1..=6)
            .map(|i| Candidate {
                name: format!("w{i}"),
                rack: format!("r{}", 2 - i % 2),
            })
            .collect()
    }

    #[test]
    fn hdfs_default_layout() {
        let nodes = cluster();
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..100 {
            let t = choose_targets(&nodes, &[], &HashSet::new(), Some("w3"), 3, &mut rng);
            assert_eq!(t.len(), 3);
            assert_eq!(t[0].name, "w3");
            assert_ne!(t[1].rack, t[0].rack);
            assert_eq!(t[2].rack, t[1].rack);
            assert_ne!(t[2].name, t[1].name);
        }
    }

    #[test]
    fn rereplication_reaches_another_rack() {
        let nodes = cluster();
        let mut rng = fastrand::Rng::with_seed(1);
        let existing = vec![nodes[0].clone()];
        let t = choose_targets(&nodes, &existing, &HashSet::new(), None, 1, &mut rng);
        assert_ne!(t[0].rack, nodes[0].rack);
    }

    #[test]
    fn never_more_than_nodes() {
        let nodes = cluster();
        let mut rng = fastrand::Rng::with_seed(3);
        let ex: HashSet<String> = ["w1".to_string()].into();
        let t = choose_targets(&nodes, &[], &ex, None, 10, &mut rng);
        assert_eq!(t.len(), 5);
        assert!(t.iter().all(|c| c.name != "w1"));
    }
}
