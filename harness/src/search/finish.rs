//! The end of a search: test scores, the final pruning and refit of the front, infix math.

use super::candidate::{self, Candidate, Fitted};
use super::emit;
use super::engine::Engine;
use super::feed::TestScore;
use super::front::Member;
use super::prune;
use crate::calibrate::workers::Evaluator;
use runtime_cpu::Program;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

impl Engine {
    /// NMSE and R^2 of `m` on every test set, or why it has none there (a value that is not
    /// finite on some row of it, say).
    pub fn test_scores(&mut self, m: &Member) -> Vec<TestScore> {
        let limits = self.options.fit.limits();
        let tests = &self.test_rows;
        let program = Program::parse(&m.src).map_err(|e| e.to_string());
        let scores = self.workers.each(1, &|_, s| {
            tests
                .iter()
                .map(|(name, rows)| {
                    let score = program.clone().and_then(|p| {
                        candidate::test_scores(s, &p, &m.params, &m.values, rows, limits)
                    });
                    (name.clone(), score)
                })
                .collect::<Vec<_>>()
        });
        scores.into_iter().next().unwrap_or_default()
    }

    /// Drops, from each front member's sums, the terms it is as good without (on the fit rows,
    /// refitted), then fits the front again on every training row (from its fitted
    /// values) and rebuilds the hall of fame from the refitted members: their loss is then the
    /// training loss. After `until`, or once `interrupt` is set, nothing more is pruned, and a
    /// member whose refit has not started is only scored on every row at its fitted values.
    pub fn polish(&mut self, until: Option<Instant>, interrupt: &AtomicBool) {
        let late =
            || interrupt.load(Ordering::Relaxed) || until.is_some_and(|d| Instant::now() >= d);
        let front: Vec<Member> = self.hall.front().into_iter().cloned().collect();
        let mut members = Vec::with_capacity(front.len());
        for m in front {
            members.push(if late() { m } else { self.pruned(m) });
        }
        let rows = super::engine::train_rows(&self.data, &self.options);
        let one = candidate::FitSettings {
            restarts: 1,
            iterations: self.options.polish_iterations,
            ..self.options.fit.clone()
        };
        let refits = self.workers.each(members.len(), &|j, s| {
            let m = &members[j];
            let program = rows.program(&m.src)?;
            let late = late();
            let settings = candidate::FitSettings {
                iterations: if late { 0 } else { one.iterations },
                ..one.clone()
            };
            Ok::<Fitted, String>(candidate::fit(
                s, &program, &m.params, &m.values, &rows, &settings, 0,
            ))
        });
        let mut out = Vec::new();
        for (mut m, r) in members.into_iter().zip(refits) {
            if let Ok(Fitted {
                params,
                loss: Ok(l),
                ..
            }) = r
            {
                if let Some(g) = &mut m.genome {
                    g.set_constants(&params);
                }
                m.values = params;
                m.loss = l;
                out.push(m);
            }
        }
        self.hall.rebuild(out);
    }

    /// `m` with terms of its sums dropped, one at a time, while it is as good without them on
    /// the fit rows.
    fn pruned(&mut self, mut m: Member) -> Member {
        let variance = self.fit_rows.variance();
        loop {
            let Some(g) = m.genome.clone() else {
                return m;
            };
            let tries = prune::variants(&g, &self.grammar.ops);
            if tries.is_empty() {
                return m;
            }
            let (rows, fit, names) = (&self.fit_rows, &self.options.fit, &self.names);
            let fits = self.workers.each(tries.len(), &|j, s| {
                let c = Candidate::from_genome(tries[j].clone(), names, m.origin, false);
                let program = rows.program(&c.src).ok()?;
                let one = candidate::FitSettings {
                    restarts: 1,
                    ..fit.clone()
                };
                let f = candidate::fit(s, &program, &c.params, &c.init, rows, &one, 0);
                Some((c, f))
            });
            let best = fits
                .into_iter()
                .flatten()
                .filter_map(|(c, f)| Some((c, f.params, f.loss.ok()?)))
                .filter(|(_, _, l)| prune::as_good(*l, m.loss, variance))
                .min_by(|a, b| a.2.total_cmp(&b.2));
            let Some((c, values, loss)) = best else {
                return m;
            };
            let mut genome = c.genome.expect("made from a genome");
            genome.set_constants(&values);
            m = Member {
                src: c.src,
                params: c.params,
                values,
                loss,
                complexity: self.grammar.complexity(&genome),
                genome: Some(genome),
                origin: m.origin,
            };
        }
    }

    /// Infix math for a member.
    pub fn infix(&self, m: &Member) -> String {
        match &m.genome {
            Some(g) => emit::infix(g, &self.names),
            None => m.src.clone(),
        }
    }
}
