//! An island of the built-in proposer: a population of fitted genomes, tournament selection
//! on loss with a parsimony pressure, and age-regularised replacement (a newcomer takes the
//! place of the oldest member, so no program lives forever and the island keeps moving).

use super::candidate::{Candidate, Origin};
use super::emit::Names;
use super::expr::Genome;
use super::generate::{below, Grammar};
use super::mutate::{apply, Mutation, MutationWeights};
use crate::rng::SplitMix;
use serde::{Deserialize, Serialize};

/// A fitted genome on an island.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Individual {
    /// The genome, its constants the fitted values.
    pub genome: Genome,
    /// Mean squared error on the fit rows.
    pub loss: f64,
    /// When it arrived (a counter of the island's arrivals).
    pub born: u64,
}

/// How selection weighs loss against size.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    /// Members drawn per tournament.
    pub tournament: usize,
    /// Added to the log10 of the normalised loss per node of complexity.
    pub parsimony: f64,
    /// The variance of the fitted target (normalises the loss).
    pub variance: f64,
}

impl Pressure {
    /// Lower is better: log10 of the normalised loss (floored at 1e-14) plus the parsimony
    /// per node.
    pub fn score(&self, loss: f64, complexity: usize) -> f64 {
        (loss / self.variance).max(1e-14).log10() + self.parsimony * complexity as f64
    }
}

/// One island's population.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Island {
    /// The members.
    pub members: Vec<Individual>,
    /// Arrivals so far.
    pub arrivals: u64,
}

impl Island {
    /// Takes in a fitted genome: a free place while the island is below `capacity`, else the
    /// oldest member's.
    pub fn admit(&mut self, genome: Genome, loss: f64, capacity: usize) {
        let ind = Individual {
            genome,
            loss,
            born: self.arrivals,
        };
        self.arrivals += 1;
        if self.members.len() < capacity {
            self.members.push(ind);
            return;
        }
        if let Some(oldest) = (0..self.members.len()).min_by_key(|&i| self.members[i].born) {
            self.members[oldest] = ind;
        }
    }

    /// The winner of a tournament of `pressure.tournament` members drawn at random.
    pub fn select(&self, rng: &mut SplitMix, pressure: &Pressure) -> Option<&Individual> {
        if self.members.is_empty() {
            return None;
        }
        let mut best: Option<(&Individual, f64)> = None;
        for _ in 0..pressure.tournament.max(1) {
            let m = &self.members[below(rng, self.members.len())];
            let s = pressure.score(m.loss, m.genome.size());
            if best.is_none_or(|(_, b)| s < b) {
                best = Some((m, s));
            }
        }
        best.map(|(m, _)| m)
    }

    /// The member with the lowest score.
    pub fn best(&self, pressure: &Pressure) -> Option<&Individual> {
        self.members.iter().min_by(|a, b| {
            let sa = pressure.score(a.loss, a.genome.size());
            sa.total_cmp(&pressure.score(b.loss, b.genome.size()))
        })
    }

    /// `n` children of tournament winners, each from one operator drawn by `weights` (a new
    /// random program when ten draws give nothing admissible, or the island is empty).
    #[allow(clippy::too_many_arguments)]
    pub fn offspring(
        &self,
        rng: &mut SplitMix,
        n: usize,
        grammar: &Grammar,
        weights: &MutationWeights,
        pressure: &Pressure,
        names: &Names,
        island: u16,
    ) -> Vec<Candidate> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let mut child = None;
            for _ in 0..10 {
                let (Some(a), Some(b)) = (self.select(rng, pressure), self.select(rng, pressure))
                else {
                    break;
                };
                let m = weights.draw(rng, grammar);
                if let Some(c) = apply(m, &a.genome, &b.genome, grammar, rng) {
                    child = Some((c, m == Mutation::Constants));
                    break;
                }
            }
            let (genome, perturbed) = child.unwrap_or_else(|| (grammar.random(rng), false));
            out.push(Candidate::from_genome(
                genome,
                names,
                Origin::Island(island),
                perturbed,
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::expr::Expr;
    use super::*;

    #[test]
    fn the_oldest_gives_way_and_tournaments_prefer_the_better() {
        let mut isl = Island::default();
        for i in 0..4 {
            isl.admit(Genome::of(Expr::Input(0)), f64::from(i + 1), 3);
        }
        let losses: Vec<f64> = isl.members.iter().map(|m| m.loss).collect();
        assert_eq!(losses, vec![4.0, 2.0, 3.0], "the first arrival went");
        let p = Pressure {
            tournament: 3,
            parsimony: 0.0,
            variance: 1.0,
        };
        let mut rng = SplitMix(1);
        let wins = (0..300)
            .filter(|_| isl.select(&mut rng, &p).unwrap().loss == 2.0)
            .count();
        assert!(wins > 150, "{wins}");
        assert_eq!(isl.best(&p).unwrap().loss, 2.0);
    }
}
