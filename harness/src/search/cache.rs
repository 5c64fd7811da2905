//! The skeleton cache: a program text seen before (its constants are named parameters, so the
//! text is its skeleton) reuses its fitted constants instead of being fitted again, and, while
//! it is among the most recent, its decode. A skeleton is kept by a 128-bit hash of its text
//! and its fit's few numbers; the decodes, a few kilobytes each, are kept for the last
//! [`DECODES`] skeletons only: a search of hours holds steady memory.

use super::fnv::Fnv;
use runtime_cpu::Program;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Decoded programs kept (emptied when full): a perturbed child of a recent skeleton is
/// fitted on its decode.
pub const DECODES: usize = 2048;

/// A skeleton's key: the [`Fnv`] hash of its text (two texts of a search share one with a
/// chance of about 1e-29).
pub fn key(src: &str) -> u128 {
    let mut h = Fnv::default();
    h.bytes(src.as_bytes());
    h.0
}

/// What the cache knows of one skeleton.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The starting values of the fit below.
    pub start: Box<[f64]>,
    /// The best fitted values so far.
    pub values: Box<[f64]>,
    /// Their loss, or why the fit failed.
    pub loss: Result<f64, String>,
}

/// A skeleton's fit as a checkpoint keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    /// Its key ([`key`]), 32 hexadecimal digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The program text (checkpoints written before the key was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    /// The starting values of the fit (empty in checkpoints written before they were kept).
    #[serde(default)]
    pub start: Vec<f64>,
    /// Fitted values.
    pub values: Vec<f64>,
    /// The loss, or the failure.
    pub loss: Result<f64, String>,
}

/// Skeletons by key; emptied when it outgrows its capacity (so a long search keeps bounded
/// memory, the same way on every run).
#[derive(Debug, Default)]
pub struct Cache {
    map: HashMap<u128, Entry>,
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
        self.map.get(&key(src))
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
        let k = key(src);
        if let Some(e) = self.map.get_mut(&k) {
            let better = match (&e.loss, loss) {
                (Ok(old), Ok(new)) => new < old,
                (Err(_), Ok(_)) => true,
                _ => false,
            };
            if better {
                e.start = start.into();
                e.values = values.into();
                e.loss = loss.clone();
            }
            return false;
        }
        if self.map.len() >= self.capacity {
            self.map.clear();
        }
        self.map.insert(
            k,
            Entry {
                start: start.into(),
                values: values.into(),
                loss: loss.clone(),
            },
        );
        true
    }

    /// Every entry, in a fixed order, for a checkpoint.
    pub fn save(&self) -> Vec<Saved> {
        let mut all: Vec<(u128, &Entry)> = self.map.iter().map(|(k, e)| (*k, e)).collect();
        all.sort_by_key(|(k, _)| *k);
        all.into_iter()
            .map(|(k, e)| Saved {
                key: Some(format!("{k:032x}")),
                src: None,
                start: e.start.to_vec(),
                values: e.values.to_vec(),
                loss: e.loss.clone(),
            })
            .collect()
    }

    /// Entries from a checkpoint (one whose key does not read, or whose text no longer
    /// decodes, is skipped).
    pub fn load(&mut self, saved: Vec<Saved>) {
        for s in saved {
            let k = match (&s.key, &s.src) {
                (Some(hex), _) => u128::from_str_radix(hex, 16).ok(),
                (None, Some(src)) => Program::parse(src).is_ok().then(|| key(src)),
                (None, None) => None,
            };
            if let Some(k) = k {
                self.map.insert(
                    k,
                    Entry {
                        start: s.start.into(),
                        values: s.values.into(),
                        loss: s.loss,
                    },
                );
            }
        }
    }
}
