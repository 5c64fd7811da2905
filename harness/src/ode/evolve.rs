//! The third stage of the ODE search: systems evolved as systems.
//!
//! The systems the second stage fitted seed [`ISLANDS`] islands of [`POPULATION`] systems each
//! (the best by fitness dealt round-robin). Each generation every island breeds [`CHILDREN`]
//! children, each from a parent chosen by tournament, by one change to one state's right-hand
//! side; the state is drawn in proportion to its share of the unexplained variance, so a system
//! that already fits `x` well is changed mostly in `y`:
//!
//! - **swap**: the state's right-hand side taken from a second parent;
//! - **pool**: the state's right-hand side replaced by a member of its first-stage pool;
//! - **prune**: one term of one of its sums left out;
//! - **across states**: the state's right-hand side replaced by another state's, or crossed
//!   with it (systems often share terms between their equations);
//! - **mutation**: one of the search's own operators (point, subtree, insert, delete, hoist,
//!   crossover with the second parent's same state, an added term), simplified and held to
//!   the grammar's limits.
//!
//! A child starts its fit from its parent's fitted constants. No structure is fitted twice.
//! Every child of a generation is fitted through the integrator in one parallel batch; it
//! replaces its island's worst member when it is fitter. Every third generation each island's
//! best member migrates to the next island. Fitness is the log of the integrated training
//! NMSE plus [`PARSIMONY`] per node. The children are drawn from a generator seeded by the
//! generation, island and child, so a search bounded by generations gives the same systems on
//! any number of threads.
//!
//! Last, [`Evolution::prune`] fits every system one term smaller than a member of the front.

use super::discover::{front_indexes, system_key, Fitted, Outsiders, Record, Systems};
use crate::rng::SplitMix;
use crate::search::engine::rng_for;
use crate::search::expr::Genome;
use crate::search::generate::{below, chance, Grammar};
use crate::search::mutate::{self, Mutation, MutationWeights};
use crate::search::prune;
use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Islands of systems.
pub const ISLANDS: usize = 4;
/// Systems per island.
pub const POPULATION: usize = 12;
/// Children per island per generation.
pub const CHILDREN: usize = 6;
/// Generations between migrations.
pub const MIGRATE_EVERY: usize = 3;
/// Systems in a tournament.
pub const TOURNAMENT: usize = 3;
/// Fitness added per node (in units of the log NMSE: twenty nodes cost a factor e).
pub const PARSIMONY: f64 = 0.05;

/// How children are made.
pub struct Breeder<'a> {
    /// Each state's first-stage pool.
    pub pools: &'a [Vec<(Genome, f64)>],
    /// The right-hand sides' grammar (operators, size and depth limits).
    pub grammar: &'a Grammar,
    /// The mutation operators' weights.
    pub weights: &'a MutationWeights,
}

/// What the third stage breeds from.
pub(super) struct Evolution<'a> {
    /// How systems are fitted.
    pub systems: &'a Systems<'a>,
    /// How children are made.
    pub breeder: Breeder<'a>,
    /// The search's seed.
    pub seed: u64,
    /// Worker threads.
    pub threads: usize,
    /// Generations at most.
    pub generations: usize,
}

/// Orders systems by fitness, then by when they were fitted.
fn by_fitness(a: &usize, b: &usize, fitted: &[Fitted]) -> std::cmp::Ordering {
    fitness(&fitted[*a])
        .total_cmp(&fitness(&fitted[*b]))
        .then(a.cmp(b))
}

/// Puts system `new` on `island`: in a free place, else in place of the least fit member
/// when it is fitter.
fn join(island: &mut Vec<usize>, new: usize, fitted: &[Fitted]) {
    if !fitness(&fitted[new]).is_finite() {
        return;
    }
    if island.len() < POPULATION {
        island.push(new);
    } else if let Some(worst) =
        (0..island.len()).max_by(|&a, &b| by_fitness(&island[a], &island[b], fitted))
    {
        if by_fitness(&new, &island[worst], fitted).is_lt() {
            island[worst] = new;
        }
    }
}

/// A system's fitness: lower is fitter.
fn fitness(f: &Fitted) -> f64 {
    if f.train.nmse.is_finite() {
        f.train.nmse.max(1e-300).ln() + PARSIMONY * f.complexity as f64
    } else {
        f64::INFINITY
    }
}

/// Where the third stage stands: its islands (indexes into the record's systems) and the
/// generations bred so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Islands {
    /// Each island's systems.
    pub islands: Vec<Vec<usize>>,
    /// Generations bred so far.
    pub generation: usize,
}

impl Islands {
    /// The first islands: the fittest of `fitted` dealt in turn; `None` when none is fit.
    pub fn seeded(fitted: &[Fitted]) -> Option<Islands> {
        let mut order: Vec<usize> = (0..fitted.len())
            .filter(|&k| fitness(&fitted[k]).is_finite())
            .collect();
        if order.is_empty() {
            return None;
        }
        order.sort_by(|a, b| by_fitness(a, b, fitted));
        let islands = (0..ISLANDS)
            .map(|k| {
                let mine: Vec<usize> = order
                    .iter()
                    .skip(k)
                    .step_by(ISLANDS)
                    .take(POPULATION)
                    .copied()
                    .collect();
                if mine.is_empty() {
                    order.iter().take(POPULATION).copied().collect()
                } else {
                    mine
                }
            })
            .collect();
        Some(Islands {
            islands,
            generation: 0,
        })
    }
}

impl Evolution<'_> {
    /// Leaves out one term of one sum in one right-hand side of each member of the front, in
    /// every way, and fits those systems (none fitted before), twice over: a term fitted to
    /// noise or rounding buys nothing, and the smaller system joins the front at (nearly) the
    /// same loss.
    pub fn prune(
        &self,
        late: &(dyn Fn() -> bool + Sync),
        cancel: Option<&Arc<AtomicBool>>,
        record: &mut Record,
        progress: &dyn Fn(&str),
    ) {
        for pass in 0..2 {
            if late() {
                return;
            }
            let mut children = Vec::new();
            let mut keys = BTreeSet::new();
            for k in front_indexes(&record.fitted) {
                let parent = &record.fitted[k];
                let genomes: Vec<Genome> =
                    parent.equations.iter().map(|e| e.genome.clone()).collect();
                for (i, g) in genomes.iter().enumerate() {
                    for v in prune::variants(g, &self.breeder.grammar.ops) {
                        let mut child = genomes.clone();
                        child[i] = v;
                        let key = system_key(&child);
                        if !record.seen.contains(&key) && keys.insert(key) {
                            children.push(child);
                        }
                    }
                }
            }
            if children.is_empty() {
                return;
            }
            progress(&format!(
                "pruning the front: {} systems with a term left out (pass {})",
                children.len(),
                pass + 1
            ));
            let results = self.systems.fit_all(&children, self.threads, late, cancel);
            record.add(&children, results);
        }
    }

    /// Breeds from `state` until `late()` or this run's generations are spent, adding every
    /// system fitted to `record`; `after` sees the record and the islands after each
    /// generation.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        state: Islands,
        late: &(dyn Fn() -> bool + Sync),
        cancel: Option<&Arc<AtomicBool>>,
        record: &mut Record,
        mut outside: Option<&mut Outsiders>,
        progress: &dyn Fn(&str),
        after: &mut dyn FnMut(&Record, &Islands),
    ) -> Islands {
        let Islands {
            mut islands,
            generation: first,
        } = state;
        let mut idle = 0;
        let mut generation = first;
        while generation < first.saturating_add(self.generations) {
            if late() {
                break;
            }
            // The outside proposer's systems join the islands in turn.
            if let Some(o) = outside.as_deref_mut() {
                for (n, new) in o
                    .poll(None, self.systems, record, late, cancel)
                    .into_iter()
                    .enumerate()
                {
                    join(
                        &mut islands[(generation + n) % ISLANDS],
                        new,
                        &record.fitted,
                    );
                }
            }
            if idle >= 3 {
                break;
            }
            let mut children = Vec::new();
            let mut home = Vec::new();
            let mut keys = BTreeSet::new();
            for (k, island) in islands.iter().enumerate() {
                for c in 0..CHILDREN {
                    let mut rng =
                        rng_for(self.seed, &[0x0DE, generation as u64, k as u64, c as u64]);
                    for _ in 0..8 {
                        let Some(child) = self.breeder.child(island, &record.fitted, &mut rng)
                        else {
                            continue;
                        };
                        let key = system_key(&child);
                        if !record.seen.contains(&key) && keys.insert(key) {
                            children.push(child);
                            home.push(k);
                            break;
                        }
                    }
                }
            }
            if children.is_empty() {
                idle += 1;
                generation += 1;
                continue;
            }
            idle = 0;
            progress(&format!(
                "evolving systems: generation {}, {} children",
                generation + 1,
                children.len()
            ));
            let results = self.systems.fit_all(&children, self.threads, late, cancel);
            let at = record.add(&children, results);
            for (k, a) in home.into_iter().zip(at) {
                if let Some(Some(new)) = a {
                    join(&mut islands[k], new, &record.fitted);
                }
            }
            if (generation + 1) % MIGRATE_EVERY == 0 && ISLANDS > 1 {
                let best: Vec<usize> = islands
                    .iter()
                    .map(|island| {
                        *island
                            .iter()
                            .min_by(|a, b| by_fitness(a, b, &record.fitted))
                            .expect("an island is never empty")
                    })
                    .collect();
                for (k, b) in best.into_iter().enumerate() {
                    let island = &mut islands[(k + 1) % ISLANDS];
                    if island.contains(&b) {
                        continue;
                    }
                    if let Some(worst) = (0..island.len())
                        .max_by(|&a, &c| by_fitness(&island[a], &island[c], &record.fitted))
                    {
                        island[worst] = b;
                    }
                }
            }
            generation += 1;
            let now = Islands {
                islands,
                generation,
            };
            after(record, &now);
            islands = now.islands;
        }
        Islands {
            islands,
            generation,
        }
    }
}

impl Breeder<'_> {
    /// A member of `island` chosen by a tournament of [`TOURNAMENT`].
    fn tournament<'f>(
        &self,
        island: &[usize],
        fitted: &'f [Fitted],
        rng: &mut SplitMix,
    ) -> &'f Fitted {
        let mut best = island[below(rng, island.len())];
        for _ in 1..TOURNAMENT {
            let other = island[below(rng, island.len())];
            if fitness(&fitted[other]) < fitness(&fitted[best]) {
                best = other;
            }
        }
        &fitted[best]
    }

    /// The state to change: drawn in proportion to its NMSE, each state at least a tenth of
    /// an even share.
    pub fn state(f: &Fitted, rng: &mut SplitMix) -> usize {
        let d = f.state_nmse.len();
        let total: f64 = f.state_nmse.iter().sum();
        if d <= 1 || !(total.is_finite() && total > 0.0) {
            return below(rng, d.max(1));
        }
        let w: Vec<f64> = f
            .state_nmse
            .iter()
            .map(|v| v / total + 0.1 / d as f64)
            .collect();
        let mut u = rng.unit() * w.iter().sum::<f64>();
        for (i, x) in w.iter().enumerate() {
            u -= x;
            if u < 0.0 {
                return i;
            }
        }
        d - 1
    }

    /// One child of a parent from `island`, or `None` when the change drawn does not apply.
    fn child(
        &self,
        island: &[usize],
        fitted: &[Fitted],
        rng: &mut SplitMix,
    ) -> Option<Vec<Genome>> {
        let a = self.tournament(island, fitted, rng);
        let d = a.equations.len();
        let mut genomes: Vec<Genome> = a.equations.iter().map(|e| e.genome.clone()).collect();
        let i = Self::state(a, rng);
        let u = rng.unit();
        genomes[i] = if u < 0.15 {
            let b = self.tournament(island, fitted, rng);
            b.equations[i].genome.clone()
        } else if u < 0.25 {
            let pool = &self.pools[i];
            pool[below(rng, pool.len())].0.clone()
        } else if u < 0.32 {
            let all = prune::variants(&genomes[i], &self.grammar.ops);
            if all.is_empty() {
                return None;
            }
            all[below(rng, all.len())].clone()
        } else if u < 0.42 && d > 1 {
            let j = (i + 1 + below(rng, d - 1)) % d;
            let other = &a.equations[j].genome;
            if chance(rng, 0.5) {
                other.clone()
            } else {
                mutate::apply(Mutation::Crossover, &genomes[i], other, self.grammar, rng)?
            }
        } else {
            let b = self.tournament(island, fitted, rng);
            let m = self.weights.draw(rng, self.grammar);
            if m == Mutation::Constants {
                return None;
            }
            mutate::apply(m, &genomes[i], &b.equations[i].genome, self.grammar, rng)?
        };
        self.grammar.admits(&genomes[i]).then_some(genomes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ode::discover::Equation;
    use crate::ode::program::System;
    use crate::ode::simulate::Score;
    use crate::search::convert::to_genome;
    use crate::search::options::Options;
    use std::collections::HashMap;

    fn genome(src: &str) -> Genome {
        let inputs = ["x".to_string(), "y".to_string()];
        to_genome(src, &inputs, &[], &HashMap::new()).expect("a program of the grammar")
    }

    fn fitted(srcs: &[&str], state_nmse: &[f64]) -> Fitted {
        let equations: Vec<Equation> = srcs
            .iter()
            .map(|s| {
                let g = genome(s);
                Equation {
                    complexity: g.size(),
                    genome: g,
                }
            })
            .collect();
        Fitted {
            complexity: equations.iter().map(|e| e.complexity).sum(),
            equations,
            system: System {
                states: vec!["x".into(), "y".into()],
                inputs: vec![],
                time: "t".into(),
                rhs: vec![],
                params: vec![],
            },
            params: vec![],
            initial: vec![],
            train: Score {
                r2: 0.9,
                nmse: state_nmse.iter().sum(),
                mse: 0.1,
            },
            state_nmse: state_nmse.to_vec(),
        }
    }

    fn grammar() -> Grammar {
        Grammar {
            ops: Options::default().op_set().expect("the default operators"),
            inputs: 2,
            count_inputs: vec![],
            max_fixed_count: 0,
            iterate: false,
            share: false,
            max_size: 20,
            max_depth: 8,
            constraints: Default::default(),
            units: None,
        }
    }

    #[test]
    fn the_state_that_fits_worse_is_changed_more_often() {
        let f = fitted(&["x", "y"], &[0.0, 1.0]);
        let mut rng = rng_for(3, &[]);
        let draws = 4000;
        let second = (0..draws)
            .filter(|_| Breeder::state(&f, &mut rng) == 1)
            .count();
        // Weights 0.05 and 1.05: about 95% of the draws change the second state, and the
        // first is still drawn.
        assert!(second > draws * 90 / 100 && second < draws, "{second}");
    }

    #[test]
    fn a_child_changes_one_state_by_swap_pool_crossing_or_mutation() {
        let fitted = vec![
            fitted(&["(* 2 x)", "(+ x y)"], &[0.5, 0.5]),
            fitted(&["(- x y)", "(sin y)"], &[0.5, 0.5]),
        ];
        let pools = vec![
            vec![(genome("(exp x)"), 0.1)],
            vec![(genome("(cos x)"), 0.1)],
        ];
        let grammar = grammar();
        let weights = MutationWeights::default();
        let breeder = Breeder {
            pools: &pools,
            grammar: &grammar,
            weights: &weights,
        };
        let island = [0, 1];
        let mut rng = rng_for(5, &[]);
        let (mut swaps, mut pooled, mut crossed, mut made) = (0, 0, 0, 0);
        for _ in 0..2000 {
            let Some(child) = breeder.child(&island, &fitted, &mut rng) else {
                continue;
            };
            made += 1;
            assert_eq!(child.len(), 2);
            assert!(child.iter().all(|g| grammar.admits(g)));
            // The child keeps all but one state of one parent.
            let parent = fitted
                .iter()
                .find(|f| {
                    (0..2)
                        .filter(|&i| f.equations[i].genome == child[i])
                        .count()
                        >= 1
                })
                .expect("a child keeps a state of a parent");
            let changed: Vec<usize> = (0..2)
                .filter(|&i| parent.equations[i].genome != child[i])
                .collect();
            assert!(changed.len() <= 1, "{child:?}");
            for &i in &changed {
                let other = &fitted.iter().find(|f| !std::ptr::eq(*f, parent)).unwrap();
                if child[i] == other.equations[i].genome {
                    swaps += 1;
                } else if child[i] == pools[i][0].0 {
                    pooled += 1;
                } else if child[i] == parent.equations[1 - i].genome {
                    crossed += 1;
                }
            }
        }
        assert!(made > 1000, "{made}");
        assert!(
            swaps > 0 && pooled > 0 && crossed > 0,
            "{swaps} {pooled} {crossed}"
        );
    }
}
