//! The skeleton cache: a program text seen before (its constants are named parameters, so the
//! text is its skeleton) reuses its fitted constants instead of being fitted again, and, while
//! it is among the most recent, its decode. The fits are a few numbers a skeleton; the decodes,
//! a few kilobytes each, are kept for the last [`DECODES`] skeletons only, so that a search of
//! hours holds steady memory.

use runtime_cpu::Program;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Decoded programs kept (emptied when full): a perturbed child of a recent skeleton is
/// fitted on its decode.
pub const DECODES: usize = 2048;

/// What the cache knows of one skeleton.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The starting values of the fit below.
    pub start: Vec<f64>,
    /// The best fitted values so far.
    pub values: Vec<f64>,
    /// Their loss, or why the fit failed.
    pub loss: Result<f64, String>,
}

/// A skeleton's fit as a checkpoint keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    /// The program text.
    pub src: String,
    /// The starting values of the fit (empty in checkpoints written before they were kept).
    #[serde(default)]
    pub start: Vec<f64>,
    /// Fitted values.
    pub values: Vec<f64>,
    /// The loss, or the failure.
    pub loss: Result<f64, String>,
}

/// Skeletons by text; emptied when it outgrows its capacity (so a long search keeps bounded
/// memory, the same way on every run).
#[derive(Debug, Default)]
pub struct Cache {
    map: HashMap<String, Entry>,
    capacity: usize,
    /// The decodes of the most recent skeletons.
    decoded: HashMap<String, Program>,
}

impl Cache {
    /// An empty cache of at most `capacity` skeletons.
    pub fn new(capacity: usize) -> Cache {
        Cache {
            map: HashMap::new(),
            capacity: capacity.max(1),
            decoded: HashMap::new(),
        }
    }

    /// The decode of `src`, if it is one of the recent skeletons.
    pub fn decoded(&self, src: &str) -> Option<&Program> {
        self.decoded.get(src)
    }

    /// The entry for `src`.
    pub fn get(&self, src: &str) -> Option<&Entry> {
        self.map.get(src)
    }

    /// Records a fit of `src` from `start`: a new skeleton, or a better fit of a known one.
    /// True when the skeleton was new.
    pub fn record(
        &mut self,
        src: &str,
        program: &Program,
        start: &[f64],
        values: &[f64],
        loss: &Result<f64, String>,
    ) -> bool {
        if !self.decoded.contains_key(src) {
            if self.decoded.len() >= DECODES {
                self.decoded.clear();
            }
            self.decoded.insert(src.to_string(), program.clone());
        }
        if let Some(e) = self.map.get_mut(src) {
            let better = match (&e.loss, loss) {
                (Ok(old), Ok(new)) => new < old,
                (Err(_), Ok(_)) => true,
                _ => false,
            };
            if better {
                e.start = start.to_vec();
                e.values = values.to_vec();
                e.loss = loss.clone();
            }
            return false;
        }
        if self.map.len() >= self.capacity {
            self.map.clear();
        }
        self.map.insert(
            src.to_string(),
            Entry {
                start: start.to_vec(),
                values: values.to_vec(),
                loss: loss.clone(),
            },
        );
        true
    }

    /// Every entry, in a fixed order, for a checkpoint.
    pub fn save(&self) -> Vec<Saved> {
        let mut all: Vec<Saved> = self
            .map
            .iter()
            .map(|(src, e)| Saved {
                src: src.clone(),
                start: e.start.clone(),
                values: e.values.clone(),
                loss: e.loss.clone(),
            })
            .collect();
        all.sort_by(|a, b| a.src.cmp(&b.src));
        all
    }

    /// Entries from a checkpoint (one that no longer decodes is skipped).
    pub fn load(&mut self, saved: Vec<Saved>) {
        for s in saved {
            if Program::parse(&s.src).is_ok() {
                self.map.insert(
                    s.src,
                    Entry {
                        start: s.start,
                        values: s.values,
                        loss: s.loss,
                    },
                );
            }
        }
    }
}
