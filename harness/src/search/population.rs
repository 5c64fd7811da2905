//! An island of the built-in proposer: a population of fitted genomes, tournament selection on
//! a score of loss, size and crowding, and age-regularised replacement (an accepted child takes
//! the place of the oldest member, so no program lives forever and the island keeps moving). A
//! child is accepted when it scores better than its parent, and otherwise with a probability
//! that falls with how much worse it is (a fixed temperature, as simulated annealing at one
//! temperature).

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
    /// Its program text: its skeleton.
    pub src: String,
}

/// How selection weighs loss against size.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    /// Members drawn per tournament.
    pub tournament: usize,
    /// Added to the log10 of the normalised loss per node of complexity.
    pub parsimony: f64,
    /// Added per unit of the share of the island at the same complexity (keeps the island
    /// spread over sizes).
    pub crowding: f64,
    /// How much worse (in log10 of the loss) a child may score and still be taken: one unit of
    /// temperature makes it e times less likely.
    pub temperature: f64,
    /// The variance of the fitted target (normalises the loss).
    pub variance: f64,
}

/// How many of an island's members have each complexity.
#[derive(Clone, Debug, Default)]
pub struct Crowd {
    counts: Vec<u32>,
    total: u32,
}

impl Crowd {
    /// The share of the island at complexity `c`.
    pub fn share(&self, c: usize) -> f64 {
        let n = self.counts.get(c).copied().unwrap_or(0);
        f64::from(n) / f64::from(self.total.max(1))
    }
}

impl Pressure {
    /// Lower is better: log10 of the normalised loss (floored at 1e-14), the parsimony per
    /// node, and the crowding of its complexity.
    pub fn score(&self, loss: f64, complexity: usize, crowd: &Crowd) -> f64 {
        (loss / self.variance).max(1e-14).log10()
            + self.parsimony * complexity as f64
            + self.crowding * crowd.share(complexity)
    }

    /// Whether a child scoring `child` takes its place against a parent scoring `parent`.
    pub fn accept(&self, child: f64, parent: Option<f64>, rng: &mut SplitMix) -> bool {
        match parent {
            Some(p) if child > p => {
                self.temperature > 0.0 && rng.unit() < (-(child - p) / self.temperature).exp()
            }
            _ => true,
        }
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
    /// Takes in a fitted genome whose program text is `src`: a free place while the island is
    /// below `capacity`, else the oldest member's. A skeleton the island already holds is not
    /// taken twice: a better fit of it replaces the member's constants instead.
    pub fn admit(&mut self, genome: Genome, loss: f64, src: &str, capacity: usize) {
        if let Some(m) = self.members.iter_mut().find(|m| m.src == src) {
            if loss < m.loss {
                m.genome = genome;
                m.loss = loss;
            }
            return;
        }
        let ind = Individual {
            genome,
            loss,
            born: self.arrivals,
            src: src.to_string(),
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

    /// The members' complexities.
    pub fn crowd(&self, grammar: &Grammar) -> Crowd {
        let mut c = Crowd::default();
        for m in &self.members {
            let s = grammar.complexity(&m.genome);
            if c.counts.len() <= s {
                c.counts.resize(s + 1, 0);
            }
            c.counts[s] += 1;
            c.total += 1;
        }
        c
    }

    /// The winner of a tournament of `pressure.tournament` members drawn at random, with its
    /// score.
    pub fn select(
        &self,
        rng: &mut SplitMix,
        pressure: &Pressure,
        crowd: &Crowd,
        grammar: &Grammar,
    ) -> Option<(&Individual, f64)> {
        if self.members.is_empty() {
            return None;
        }
        let mut best: Option<(&Individual, f64)> = None;
        for _ in 0..pressure.tournament.max(1) {
            let m = &self.members[below(rng, self.members.len())];
            let s = pressure.score(m.loss, grammar.complexity(&m.genome), crowd)
                + grammar.units_penalty(&m.genome);
            if best.is_none_or(|(_, b)| s < b) {
                best = Some((m, s));
            }
        }
        best
    }

    /// `n` children of tournament winners, each from one operator drawn by `weights` (a new
    /// random program when ten draws give nothing admissible, or the island is empty), each
    /// with the score of its better parent.
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
        let crowd = self.crowd(grammar);
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let mut child = None;
            for _ in 0..10 {
                let (Some((a, sa)), Some((b, sb))) = (
                    self.select(rng, pressure, &crowd, grammar),
                    self.select(rng, pressure, &crowd, grammar),
                ) else {
                    break;
                };
                let m = weights.draw(rng, grammar);
                if let Some(c) = apply(m, &a.genome, &b.genome, grammar, rng) {
                    let parent = if m == Mutation::Crossover {
                        sa.min(sb)
                    } else {
                        sa
                    };
                    child = Some((c, m == Mutation::Constants, Some(parent)));
                    break;
                }
            }
            let (genome, perturbed, parent) =
                child.unwrap_or_else(|| (grammar.random_admitted(rng), false, None));
            let mut c = Candidate::from_genome(genome, names, Origin::Island(island), perturbed);
            c.parent_score = parent;
            out.push(c);
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
            isl.admit(
                Genome::of(Expr::Input(0)),
                f64::from(i + 1),
                &format!("p{i}"),
                3,
            );
        }
        let losses: Vec<f64> = isl.members.iter().map(|m| m.loss).collect();
        assert_eq!(losses, vec![4.0, 2.0, 3.0], "the first arrival went");
        isl.admit(Genome::of(Expr::Input(1)), 9.0, "p2", 3);
        isl.admit(Genome::of(Expr::Input(1)), 1.5, "p1", 3);
        let losses: Vec<f64> = isl.members.iter().map(|m| m.loss).collect();
        assert_eq!(
            losses,
            vec![4.0, 1.5, 3.0],
            "a known skeleton is refitted, not repeated"
        );
        let p = Pressure {
            tournament: 3,
            parsimony: 0.0,
            crowding: 0.0,
            temperature: 0.1,
            variance: 1.0,
        };
        let mut rng = SplitMix(1);
        let g = super::super::generate::tests::grammar();
        let crowd = isl.crowd(&g);
        let wins = (0..300)
            .filter(|_| isl.select(&mut rng, &p, &crowd, &g).unwrap().0.loss == 1.5)
            .count();
        assert!(wins > 150, "{wins}");
        assert!((crowd.share(1) - 1.0).abs() < 1e-12);
        assert!(
            p.accept(-1.0, Some(0.0), &mut rng),
            "a better child is taken"
        );
        let taken = (0..1000)
            .filter(|_| p.accept(0.1, Some(0.0), &mut rng))
            .count();
        assert!(
            (300..450).contains(&taken),
            "about 1/e of those 0.1 worse: {taken}"
        );
    }
}
