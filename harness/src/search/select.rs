//! Which front member a search hands back as its model (`--select`, as PySR's
//! `model_selection`), and the loss at which a search may end before its budget
//! (`--early-stop`).

use serde::{Deserialize, Serialize};

/// How the model is chosen from the front.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Select {
    /// The highest score among the members whose loss is at most 1.5 times the lowest.
    #[default]
    Best,
    /// The lowest loss.
    Accuracy,
    /// The highest score.
    Score,
}

impl Select {
    /// The criterion named `name`.
    pub fn parse(name: &str) -> Option<Select> {
        [Select::Best, Select::Accuracy, Select::Score]
            .into_iter()
            .find(|s| s.name() == name)
    }

    /// Its name, as `--select` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Select::Best => "best",
            Select::Accuracy => "accuracy",
            Select::Score => "score",
        }
    }
}

/// The smallest loss the score's logarithm takes (a member that fits exactly scores as one
/// at this loss).
const FLOOR: f64 = 1e-300;

/// Each member's score on a front of `(complexity, loss)` sorted by complexity: the drop of
/// `ln(loss)` per unit of complexity from the next simpler member (0 for the simplest, and
/// for a member no more complex than the one before it).
pub fn scores(front: &[(usize, f64)]) -> Vec<f64> {
    let mut out = Vec::with_capacity(front.len());
    for (i, &(c, l)) in front.iter().enumerate() {
        let score = match i.checked_sub(1).map(|j| front[j]) {
            Some((pc, pl)) if c > pc => {
                let drop = pl.max(FLOOR).ln() - l.max(FLOOR).ln();
                drop / (c - pc) as f64
            }
            _ => 0.0,
        };
        out.push(if score.is_finite() { score } else { 0.0 });
    }
    out
}

/// The chosen member's index on a front of `(complexity, loss)` sorted by complexity (the
/// simplest of equals); `None` on an empty front.
pub fn select(front: &[(usize, f64)], how: Select) -> Option<usize> {
    let lowest = front.iter().map(|m| m.1).min_by(f64::total_cmp)?;
    let score = scores(front);
    let most_score = |keep: &dyn Fn(usize) -> bool| {
        (0..front.len())
            .filter(|&i| keep(i))
            .fold(None, |best: Option<usize>, i| match best {
                Some(b) if score[b] >= score[i] => Some(b),
                _ => Some(i),
            })
    };
    match how {
        Select::Accuracy => front.iter().position(|m| m.1 == lowest),
        Select::Score => most_score(&|_| true),
        Select::Best => most_score(&|i| front[i].1 <= 1.5 * lowest),
    }
}

/// `--early-stop LOSS[@COMPLEXITY]`: the search ends once a member at most that complex (any
/// complexity without `@`) reaches that loss on the rows it fits on.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct EarlyStop {
    /// The loss to reach.
    pub loss: f64,
    /// The most complex a member reaching it may be.
    pub complexity: Option<usize>,
}

impl EarlyStop {
    /// Reads `LOSS` or `LOSS@COMPLEXITY`.
    pub fn parse(text: &str) -> Result<EarlyStop, String> {
        let (loss, complexity) = match text.split_once('@') {
            Some((l, c)) => (l, Some(c)),
            None => (text, None),
        };
        let bad = || {
            format!(
                "--early-stop {text}: expected LOSS or LOSS@COMPLEXITY (a loss of 0 or more, \
                 a whole number of nodes), e.g. 1e-10@20"
            )
        };
        let loss: f64 = loss.trim().parse().map_err(|_| bad())?;
        if !(loss.is_finite() && loss >= 0.0) {
            return Err(bad());
        }
        let complexity = match complexity {
            Some(c) => Some(c.trim().parse::<usize>().map_err(|_| bad())?),
            None => None,
        };
        Ok(EarlyStop { loss, complexity })
    }

    /// Whether a member of `complexity` and `loss` reaches it.
    pub fn reached(&self, complexity: usize, loss: f64) -> bool {
        loss <= self.loss && self.complexity.is_none_or(|c| complexity <= c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_criteria_choose_as_pysr_does() {
        // The loss drops by e^2 from 1 to 3 nodes (score 1), by e^6 from 3 to 5 (score 3),
        // and by a little more (1.2 of 1.5 times) from 5 to 9.
        let front = [
            (1, 1.0),
            (3, (-2.0f64).exp()),
            (5, (-8.0f64).exp()),
            (9, (-8.0f64).exp() / 1.2),
        ];
        let s = scores(&front);
        assert_eq!(s[0], 0.0);
        assert!(
            (s[1] - 1.0).abs() < 1e-12 && (s[2] - 3.0).abs() < 1e-12,
            "{s:?}"
        );
        assert_eq!(select(&front, Select::Accuracy), Some(3));
        assert_eq!(select(&front, Select::Score), Some(2));
        assert_eq!(select(&front, Select::Best), Some(2));
        // A member 1.5 times the lowest or more is not a candidate of `best`.
        let front = [(1, 1.0), (3, 1e-3), (4, 1e-9)];
        assert_eq!(select(&front, Select::Score), Some(2));
        let front = [(1, 1.0), (3, 1e-6), (40, 1e-9)];
        assert_eq!(select(&front, Select::Score), Some(1));
        assert_eq!(select(&front, Select::Best), Some(2));
        assert_eq!(select(&[], Select::Best), None);
        assert_eq!(Select::parse("score"), Some(Select::Score));
        assert_eq!(Select::parse("lowest"), None);
        // An exact fit scores as a finite one.
        let front = [(1, 1.0), (3, 0.0)];
        assert_eq!(select(&front, Select::Best), Some(1));
        assert!(scores(&front)[1].is_finite());
    }

    #[test]
    fn early_stop_reads_a_loss_and_a_complexity() {
        let e = EarlyStop::parse("1e-10@20").unwrap();
        assert_eq!(
            e,
            EarlyStop {
                loss: 1e-10,
                complexity: Some(20)
            }
        );
        assert!(e.reached(20, 1e-11) && !e.reached(21, 0.0) && !e.reached(5, 1e-9));
        assert!(EarlyStop::parse("0.5").unwrap().reached(100, 0.5));
        for bad in ["", "x", "-1", "nan", "1e-3@", "1e-3@2.5", "inf"] {
            let e = EarlyStop::parse(bad).unwrap_err();
            assert!(e.contains("--early-stop"), "{bad}: {e}");
        }
    }
}
