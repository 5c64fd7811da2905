//! One island's share of a search: its population, its own hall of fame, skeleton cache and
//! counters, and its generation. Islands share nothing between migrations, so a search's
//! islands can run in one process (the engine steps them together and fits their candidates
//! over one pool of threads) or apart (one island per process or machine, `ndvm.ray.search`),
//! with the same result: every random choice of an island is drawn from a generator seeded by
//! (seed, island, generation), and what migrates is a function of the islands' states alone.

use super::cache::{Cache, Saved};
use super::engine::Counters;
use super::expr::Genome;
use super::front::HallOfFame;
use super::population::Island;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// A running island.
#[derive(Debug, Default)]
pub struct Shard {
    /// Its number among the search's islands.
    pub index: usize,
    /// Generations it has run.
    pub generation: u64,
    /// Its population.
    pub island: Island,
    /// The best program it has fitted at each complexity.
    pub hall: HallOfFame,
    /// What it has done.
    pub counters: Counters,
    pub(super) cache: Cache,
    /// Hashes of every skeleton it has fitted (the cache forgets; this counts distinct ones).
    pub(super) seen: HashSet<u64>,
}

/// An island as a checkpoint keeps it, or as it is sent to the driver of a search spread over
/// processes (without its cache: what migration and the final front need).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardState {
    /// Its number.
    pub index: usize,
    /// Generations it has run.
    pub generation: u64,
    /// Its population.
    pub island: Island,
    /// Its hall of fame.
    pub hall: HallOfFame,
    /// Its counters.
    pub counters: Counters,
    /// Its skeleton cache (empty when sent for migration only).
    pub cache: Vec<Saved>,
    /// Hashes of the skeletons it has fitted, sorted (empty when sent for migration only).
    pub seen: Vec<u64>,
}

/// A program arriving on an island at a migration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Arrival {
    /// The genome, its constants fitted.
    pub genome: Genome,
    /// Its loss.
    pub loss: f64,
    /// Its program text.
    pub src: String,
}

impl Shard {
    /// A new island `index` whose cache holds at most `capacity` skeletons.
    pub fn new(index: usize, capacity: usize) -> Shard {
        Shard {
            index,
            cache: Cache::new(capacity),
            ..Shard::default()
        }
    }

    /// Its state; with `cache`, everything to continue from (a checkpoint).
    pub fn state(&self, cache: bool) -> ShardState {
        let mut seen: Vec<u64> = Vec::new();
        if cache {
            seen = self.seen.iter().copied().collect();
            seen.sort_unstable();
        }
        ShardState {
            index: self.index,
            generation: self.generation,
            island: self.island.clone(),
            hall: self.hall.clone(),
            counters: self.counters.clone(),
            cache: if cache { self.cache.save() } else { Vec::new() },
            seen,
        }
    }

    /// The island of `state`, its cache holding at most `capacity` skeletons.
    pub fn from_state(state: ShardState, capacity: usize) -> Shard {
        let mut cache = Cache::new(capacity);
        cache.load(state.cache);
        Shard {
            index: state.index,
            generation: state.generation,
            island: state.island,
            hall: state.hall,
            counters: state.counters,
            cache,
            seen: state.seen.into_iter().collect(),
        }
    }

    /// Takes in the arrivals of a migration.
    pub fn admit(&mut self, arrivals: Vec<Arrival>, capacity: usize) {
        for a in arrivals {
            self.island.admit(a.genome, a.loss, &a.src, capacity);
        }
    }
}

/// Island `index`'s share of `total` evaluations over `islands` islands: the total split
/// evenly, the first `total % islands` islands taking one more.
pub fn share(total: u64, islands: usize, index: usize) -> u64 {
    let k = islands.max(1) as u64;
    total / k + u64::from((index as u64) < total % k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_total() {
        for total in [0u64, 1, 7, 100, 1001] {
            for k in 1..6 {
                let sum: u64 = (0..k).map(|i| share(total, k, i)).sum();
                assert_eq!(sum, total, "{total} over {k}");
            }
        }
        assert_eq!(share(10, 4, 0), 3);
        assert_eq!(share(10, 4, 3), 2);
    }
}
