//! The outside proposer as the search loop sees it: what it sends, what it is answered.

use super::candidate::Candidate;
use super::engine::Engine;
use super::front::Member;
use std::time::Instant;

/// One test set's NMSE and R^2, or why a program has none there.
pub type TestScore = (String, Result<(f64, f64), String>);

/// A candidate line from the outside proposer, or why it is not one.
#[derive(Clone, Debug)]
pub enum Incoming {
    /// A candidate (its program not yet decoded).
    Program(Candidate),
    /// A line that is no candidate: its answer's `id`, `src` and error.
    Bad {
        /// The line's `id`, if it had one.
        id: Option<serde_json::Value>,
        /// The line's `src`, if it had one.
        src: Option<String>,
        /// Why it is not a candidate.
        error: String,
    },
}

/// The answer to one of the outside proposer's candidates.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The candidate's `id`.
    pub id: Option<serde_json::Value>,
    /// Its program.
    pub src: Option<String>,
    /// Fitted parameters by name.
    pub params: Vec<(String, f64)>,
    /// MSE on the fit rows.
    pub train_loss: Option<f64>,
    /// Node count.
    pub complexity: Option<usize>,
    /// NMSE and R^2 per test set.
    pub tests: Vec<TestScore>,
    /// Why it failed.
    pub error: Option<String>,
}

/// The outside proposer, as the loop sees it.
pub trait Feed {
    /// The lines that came since the last call; with `wait`, blocks until at least one comes,
    /// the proposer is found gone or silent, or that instant.
    fn take(&mut self, wait: Option<Instant>) -> Vec<Incoming>;
    /// Sends the answer to a candidate.
    fn answer(&mut self, a: &Answer);
    /// Sends the front after a batch.
    fn front(&mut self, front: &[&Member], engine: &Engine);
    /// False once the proposer has exited, closed its output or gone silent.
    fn alive(&self) -> bool;
    /// True when the front is to be sent after every generation, not only after a batch of
    /// this proposer's candidates (a proposer in the same process, called each generation).
    fn every_generation(&self) -> bool {
        false
    }
}

/// No outside proposer.
pub struct NoFeed;

impl Feed for NoFeed {
    fn take(&mut self, _: Option<Instant>) -> Vec<Incoming> {
        Vec::new()
    }
    fn answer(&mut self, _: &Answer) {}
    fn front(&mut self, _: &[&Member], _: &Engine) {}
    fn alive(&self) -> bool {
        false
    }
}
