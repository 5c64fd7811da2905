//! The hall of fame: the best program found at each complexity, and the Pareto front of
//! complexity against training loss drawn from it.

use super::candidate::Origin;
use super::expr::Genome;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A fitted program.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Member {
    /// The program text; its free variables are the inputs and `params`.
    pub src: String,
    /// The parameters' names.
    pub params: Vec<String>,
    /// Their fitted values.
    pub values: Vec<f64>,
    /// The loss on the rows the search fits on (the mean squared error unless `--loss` or
    /// `--weights` say otherwise).
    pub loss: f64,
    /// Node count.
    pub complexity: usize,
    /// The genome with its fitted constants, when it is one.
    pub genome: Option<Genome>,
    /// Where it came from.
    pub origin: Origin,
}

/// The best member at each complexity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HallOfFame {
    best: BTreeMap<usize, Member>,
}

impl HallOfFame {
    /// Keeps `m` when it beats the best at its complexity (a tie keeps the earlier); true when
    /// kept.
    pub fn offer(&mut self, m: &Member) -> bool {
        if !m.loss.is_finite() {
            return false;
        }
        match self.best.get(&m.complexity) {
            Some(b) if b.loss <= m.loss => false,
            _ => {
                self.best.insert(m.complexity, m.clone());
                true
            }
        }
    }

    /// The Pareto front: by complexity, each member with a lower loss than every simpler one.
    pub fn front(&self) -> Vec<&Member> {
        let mut out: Vec<&Member> = Vec::new();
        for m in self.best.values() {
            if out.last().is_none_or(|b| m.loss < b.loss) {
                out.push(m);
            }
        }
        out
    }

    /// Every complexity's best, by complexity.
    pub fn members(&self) -> impl Iterator<Item = &Member> {
        self.best.values()
    }

    /// The lowest loss.
    pub fn best_loss(&self) -> Option<f64> {
        self.best.values().map(|m| m.loss).min_by(f64::total_cmp)
    }

    /// Replaces the members with `members` (after a refit), keeping each complexity's best.
    pub fn rebuild(&mut self, members: Vec<Member>) {
        self.best.clear();
        for m in &members {
            self.offer(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(complexity: usize, loss: f64, src: &str) -> Member {
        Member {
            src: src.into(),
            params: Vec::new(),
            values: Vec::new(),
            loss,
            complexity,
            genome: None,
            origin: Origin::Seed,
        }
    }

    #[test]
    fn the_front_keeps_what_no_simpler_member_beats() {
        let mut h = HallOfFame::default();
        assert!(h.offer(&m(3, 1.0, "a")));
        assert!(h.offer(&m(5, 2.0, "b")));
        assert!(h.offer(&m(7, 0.5, "c")));
        assert!(!h.offer(&m(7, 0.5, "tie keeps the first")));
        assert!(h.offer(&m(5, 0.8, "d")));
        assert!(!h.offer(&m(1, f64::NAN, "nan")));
        let f: Vec<&str> = h.front().iter().map(|m| m.src.as_str()).collect();
        assert_eq!(f, vec!["a", "d", "c"]);
        assert_eq!(h.best_loss(), Some(0.5));
    }
}
