//! A candidate program and its fit: the rows the search fits on as lanes, the candidate's free
//! parameters shared by every row, fitted by Levenberg-Marquardt (or L-BFGS, or the paper's
//! Adam) from its own starting values and a few more restarts, all restarts lane groups of one
//! walk. A candidate whose fit fails carries the reason instead of a loss.

use super::emit::{self, Names};
use super::expr::Genome;
use crate::calibrate::adam::AdamSettings;
use crate::calibrate::lbfgs::LbfgsSettings;
use crate::calibrate::lm::LmSettings;
use crate::calibrate::{self, Loss, Optimizer, Problem, RowKind, RowLoss, Settings};
use crate::rng::SplitMix;
use runtime_cpu::{Bindings, Limits, Program, Session};
use serde::{Deserialize, Serialize};

/// Where a candidate came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Origin {
    /// The built-in proposer's island `i`.
    Island(u16),
    /// The outside proposer (`--proposer`).
    Proposer,
    /// `--seed-programs`.
    Seed,
}

/// A program to fit.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Where it came from.
    pub origin: Origin,
    /// Its genome, when it is one of the built-in grammar's programs.
    pub genome: Option<Genome>,
    /// The program text: its free variables are the inputs and the parameters.
    pub src: String,
    /// The parameters, in order.
    pub params: Vec<String>,
    /// Where the fit starts.
    pub init: Vec<f64>,
    /// Node count.
    pub complexity: usize,
    /// Made by perturbing a parent's constants: fitted again from these starting values even
    /// when its skeleton was fitted before.
    pub perturbed: bool,
    /// The proposer's `id`, echoed in the answer.
    pub id: Option<serde_json::Value>,
    /// The score of its (better) parent on its island, when it has one: it must beat it, or
    /// pass the annealing draw, to take a place there.
    pub parent_score: Option<f64>,
}

impl Candidate {
    /// A genome as a candidate: its constants are its parameters and their starting values.
    pub fn from_genome(
        genome: Genome,
        names: &Names,
        origin: Origin,
        perturbed: bool,
    ) -> Candidate {
        let init = genome.constants();
        Candidate {
            origin,
            src: emit::source(&genome, names),
            params: (0..init.len()).map(|k| names.param(k)).collect(),
            init,
            complexity: genome.size(),
            genome: Some(genome),
            perturbed,
            id: None,
            parent_score: None,
        }
    }
}

/// The fitting method.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Method {
    /// Levenberg-Marquardt on the per-row Jacobian.
    Lm,
    /// L-BFGS on the mean squared error.
    Lbfgs,
    /// Adam on the mean squared error (the paper's co-search protocol).
    Adam,
}

/// How each candidate is fitted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitSettings {
    /// The method.
    pub method: Method,
    /// Iterations (each one walk over every restart; Adam and L-BFGS: steps).
    pub iterations: usize,
    /// Restarts: the candidate's own starting values, then draws around them.
    pub restarts: usize,
    /// Restarts of a candidate with a loop (an `iterate`): an iterated map's constants are
    /// harder to fit from one start.
    pub loop_restarts: usize,
    /// Adam's learning rate.
    pub lr: f64,
    /// Node visits allowed per walk (a runaway candidate fails at this budget).
    pub max_steps: u64,
    /// Payload memory allowed per walk, in MB.
    pub max_memory_mb: usize,
}

impl FitSettings {
    fn settings(&self, k: usize) -> Settings {
        Settings {
            optimizer: match self.method {
                Method::Lm => Optimizer::Lm(LmSettings::default()),
                Method::Lbfgs => Optimizer::Lbfgs(LbfgsSettings::default()),
                Method::Adam => Optimizer::Adam(AdamSettings {
                    lr: self.lr,
                    ..Default::default()
                }),
            },
            steps: self.iterations,
            clamps: vec![None; k],
            limits: self.limits(),
            final_loss: true,
            lane_block: runtime_cpu::DEFAULT_LANE_BLOCK,
        }
    }

    /// The limits of one walk.
    pub fn limits(&self) -> Limits {
        Limits {
            max_steps: self.max_steps,
            max_depth: 10_000,
            max_memory: self.max_memory_mb << 20,
        }
    }
}

/// A loss written in the object language (`--loss "(square (- (log f) (log y)))"`): a
/// program over `f` (the candidate's value on a row), `y` (the row's target) and constants of
/// its own, fitted with the candidate's; the loss is its mean over the rows (weighted by
/// `--weights`). Its names are renamed apart from the candidate's (`loss_f`, `loss_y`,
/// `loss_NAME`).
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramLoss {
    /// The program as given.
    pub shown: String,
    /// The program with its names renamed apart.
    text: String,
    /// Its constants, renamed.
    pub constants: Vec<String>,
}

/// `text` with every symbol `from` replaced by `to`.
fn rename(text: &str, names: &[(String, String)]) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut String| {
        match names.iter().find(|(from, _)| from == token) {
            Some((_, to)) => out.push_str(to),
            None => out.push_str(token),
        }
        token.clear();
    };
    for ch in text.chars() {
        if ch == '(' || ch == ')' || ch.is_whitespace() {
            flush(&mut token, &mut out);
            out.push(ch);
        } else {
            token.push(ch);
        }
    }
    flush(&mut token, &mut out);
    out
}

/// An S-expression, as far as [`spelled_out`] reads one.
enum Sx {
    Atom(String),
    List(Vec<Sx>),
}

/// `text` with the search's operators that the language spells otherwise written out:
/// `(square e)` and `(cube e)` as products of a `let*`-bound `e`. `None` when the
/// parentheses do not balance.
fn spelled_out(text: &str) -> Option<String> {
    fn read(tokens: &mut std::iter::Peekable<std::vec::IntoIter<String>>) -> Option<Sx> {
        let t = tokens.next()?;
        if t == "(" {
            let mut items = Vec::new();
            while tokens.peek()? != ")" {
                items.push(read(tokens)?);
            }
            tokens.next();
            Some(Sx::List(items))
        } else if t == ")" {
            None
        } else {
            Some(Sx::Atom(t))
        }
    }
    fn write(e: &Sx, out: &mut String) {
        match e {
            Sx::Atom(a) => out.push_str(a),
            Sx::List(items) => {
                let power = match items.as_slice() {
                    [Sx::Atom(op), _] if op == "square" => Some(2),
                    [Sx::Atom(op), _] if op == "cube" => Some(3),
                    _ => None,
                };
                if let Some(n) = power {
                    out.push_str("(let* ((loss_power ");
                    write(&items[1], out);
                    out.push_str(")) (*");
                    for _ in 0..n {
                        out.push_str(" loss_power");
                    }
                    out.push_str("))");
                    return;
                }
                out.push('(');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    write(x, out);
                }
                out.push(')');
            }
        }
    }
    let spaced = text.replace('(', " ( ").replace(')', " ) ");
    let tokens: Vec<String> = spaced.split_whitespace().map(String::from).collect();
    let mut it = tokens.into_iter().peekable();
    let e = read(&mut it)?;
    if it.next().is_some() {
        return None;
    }
    let mut out = String::new();
    write(&e, &mut out);
    Some(out)
}

impl ProgramLoss {
    /// Reads the loss program; `inputs` are the search's inputs (none may be named as the
    /// renamed loss's names are).
    pub fn parse(text: &str, inputs: &[String]) -> Result<ProgramLoss, String> {
        let spelled = spelled_out(text).ok_or_else(|| {
            format!(
                "--loss {text}: the loss program does not parse: its parentheses do not balance"
            )
        })?;
        let program = Program::parse(&spelled)
            .map_err(|e| format!("--loss {text}: the loss program does not parse: {e}"))?;
        let free: Vec<String> = program.inputs().map(String::from).collect();
        if !free.iter().any(|n| n == "f") {
            return Err(format!(
                "--loss {text}: the loss program never reads `f`, the model's value"
            ));
        }
        let names: Vec<(String, String)> = free
            .iter()
            .filter(|n| *n != "loss_power")
            .map(|n| (n.clone(), format!("loss_{n}")))
            .collect();
        if let Some((_, clash)) = names.iter().find(|(_, to)| inputs.contains(to)) {
            return Err(format!(
                "--loss: an input is named `{clash}`, a name the loss program takes; rename the column"
            ));
        }
        let constants = names
            .iter()
            .filter(|(n, _)| n != "f" && n != "y")
            .map(|(_, to)| to.clone())
            .collect();
        Ok(ProgramLoss {
            shown: text.to_string(),
            text: rename(&spelled, &names),
            constants,
        })
    }
}

/// Rows to fit or score on, as the calibration binds them.
#[derive(Clone, Debug)]
pub struct Rows {
    /// Input names and columns.
    pub columns: Vec<(String, Vec<f64>)>,
    /// The target.
    pub y: Vec<f64>,
    /// Each row's weight (every row 1 when `None`).
    pub weights: Option<Vec<f64>>,
    /// How a row is scored.
    pub kind: RowKind,
    /// A loss written in the object language, which takes the place of `kind`.
    pub program_loss: Option<std::sync::Arc<ProgramLoss>>,
}

impl Rows {
    /// The rows of a dataset (weighted by its weights), scored by mean squared error.
    pub fn of(d: &super::dataset::Dataset, inputs: &[String]) -> Rows {
        Rows {
            columns: inputs
                .iter()
                .enumerate()
                .map(|(j, n)| (n.clone(), d.column(j).to_vec()))
                .collect(),
            y: d.y.to_vec(),
            weights: d.w.as_ref().map(|w| w.to_vec()),
            kind: RowKind::L2,
            program_loss: None,
        }
    }

    /// These rows scored by a loss program (or by `kind` when `None`).
    pub fn with_program_loss(self, program_loss: Option<std::sync::Arc<ProgramLoss>>) -> Rows {
        Rows {
            program_loss,
            ..self
        }
    }

    /// The program a candidate of text `src` is fitted as on these rows: itself, or within
    /// the loss program.
    pub fn program(&self, src: &str) -> Result<Program, String> {
        match &self.program_loss {
            None => Program::parse(src).map_err(|e| e.to_string()),
            Some(l) => {
                let loss = match self.weights {
                    Some(_) => format!("(/ (* loss_weight {}) loss_mean_weight)", l.text),
                    None => l.text.clone(),
                };
                Program::parse(&format!("(let* ((loss_f {src})) {loss})"))
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// These rows scored by `kind`.
    pub fn scored_by(self, kind: RowKind) -> Rows {
        Rows { kind, ..self }
    }

    /// The loss of a fit on these rows: the mean squared error when the rows are neither
    /// weighted nor scored otherwise.
    pub fn loss(&self) -> Loss {
        if self.weights.is_none() && self.kind == RowKind::L2 {
            Loss::Mse(self.y.clone())
        } else {
            Loss::Rows(RowLoss {
                target: self.y.clone(),
                weights: self.weights.clone(),
                kind: self.kind,
            })
        }
    }

    /// The calibration problem of `program` on these rows: only the columns it reads are bound
    /// (the first one when it reads none, so there is a lane per row).
    pub fn problem(&self, program: &Program, params: &[String]) -> Problem {
        match &self.program_loss {
            Some(l) => self.loss_problem(program, params, l),
            None => self.problem_with(program, params, self.loss()),
        }
    }

    /// The input columns `program` reads.
    fn read_by(&self, program: &Program) -> Vec<(String, Vec<f64>)> {
        let reads: Vec<&str> = program.inputs().collect();
        self.columns
            .iter()
            .filter(|(n, _)| reads.contains(&n.as_str()))
            .cloned()
            .collect()
    }

    /// The problem of `program` on these rows with `loss`.
    fn problem_with(&self, program: &Program, params: &[String], loss: Loss) -> Problem {
        let mut data = self.read_by(program);
        if data.is_empty() {
            data.push(self.columns[0].clone());
        }
        Problem {
            program: program.clone(),
            fixed: Bindings::new(),
            data,
            params: params.to_vec(),
            loss,
        }
    }

    /// The problem of a candidate within the loss program `l` ([`Rows::program`]): the loss
    /// is the mean of its value, its constants fitted after the candidate's parameters.
    fn loss_problem(&self, program: &Program, params: &[String], l: &ProgramLoss) -> Problem {
        let mut data = self.read_by(program);
        data.push(("loss_y".into(), self.y.clone()));
        let mut fixed = Bindings::new();
        if let Some(w) = &self.weights {
            data.push(("loss_weight".into(), w.clone()));
            let mean = w.iter().sum::<f64>() / w.len().max(1) as f64;
            fixed = fixed.scalar("loss_mean_weight", mean);
        }
        let mut all = params.to_vec();
        all.extend(l.constants.iter().cloned());
        Problem {
            program: program.clone(),
            fixed,
            data,
            params: all,
            loss: Loss::Value,
        }
    }

    /// The population variance of the target.
    pub fn variance(&self) -> f64 {
        super::dataset::variance(&self.y)
    }
}

/// A fit's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Fitted {
    /// The fitted parameters (the starting values when the fit failed).
    pub params: Vec<f64>,
    /// The loss on the fit rows (the mean squared error unless `--loss` or `--weights` say
    /// otherwise), or why there is none.
    pub loss: Result<f64, String>,
    /// Walks made.
    pub walks: usize,
    /// Lanes walked over all of them (rows times restarts per walk).
    pub lanes: usize,
}

/// The starting points: `init`, then `restarts - 1` draws around it seeded by `seed`.
pub fn starts(init: &[f64], restarts: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = SplitMix(seed);
    let mut all = vec![init.to_vec()];
    for _ in 1..restarts.max(1) {
        all.push(
            init.iter()
                .map(|&v| {
                    if v == 0.0 || rng.unit() < 0.25 {
                        rng.normal()
                    } else {
                        let sign = if rng.unit() < 0.2 { -1.0 } else { 1.0 };
                        sign * v * rng.normal().exp()
                    }
                })
                .collect(),
        );
    }
    all
}

/// Fits `program`'s `params` on `rows` from `init` (restarts drawn with `seed`).
pub fn fit(
    session: &mut Session<f64>,
    program: &Program,
    params: &[String],
    init: &[f64],
    rows: &Rows,
    fit: &FitSettings,
    seed: u64,
) -> Fitted {
    let problem = rows.problem(program, params);
    // A loss program's constants are fitted with the candidate's, from 1.
    let extra = problem.params.len() - params.len();
    let init: Vec<f64> = init.iter().copied().chain(vec![1.0; extra]).collect();
    let init = &init[..];
    if problem.params.is_empty() {
        return Fitted {
            params: Vec::new(),
            loss: score(session, &problem, &[], fit.limits()),
            walks: 1,
            lanes: rows.y.len(),
        };
    }
    let mut settings = fit.settings(problem.params.len());
    if !problem.loss.least_squares() && fit.method == Method::Lm {
        // Not a sum of squares: L-BFGS on the loss and its exact gradient.
        settings.optimizer = Optimizer::Lbfgs(LbfgsSettings::default());
    }
    let result = calibrate::fit(
        session,
        &problem,
        &starts(init, fit.restarts, seed),
        &settings,
    );
    match result.best {
        Some(b) => {
            let r = &result.restarts[b];
            Fitted {
                params: r.params[..params.len()].to_vec(),
                loss: Ok(r.final_loss.unwrap_or(r.last_step_loss)),
                walks: result.evaluations,
                lanes: result.lanes,
            }
        }
        None => Fitted {
            params: init[..params.len()].to_vec(),
            loss: Err(result.restarts[0]
                .failure
                .clone()
                .unwrap_or_else(|| "the fit failed".into())),
            walks: result.evaluations,
            lanes: result.lanes,
        },
    }
}

/// The mean squared error of `problem` at `values`.
pub fn score(
    session: &mut Session<f64>,
    problem: &Problem,
    values: &[f64],
    limits: Limits,
) -> Result<f64, String> {
    let lane_block = runtime_cpu::DEFAULT_LANE_BLOCK;
    calibrate::evaluate(
        session,
        problem,
        &[values.to_vec()],
        limits,
        lane_block,
        false,
    )
    .remove(0)
    .map(|(mse, _)| mse)
}

/// NMSE (MSE over the target's population variance, every row counted once) and R^2 of
/// `program` at `values` on `rows`.
pub fn test_scores(
    session: &mut Session<f64>,
    program: &Program,
    params: &[String],
    values: &[f64],
    rows: &Rows,
    limits: Limits,
) -> Result<(f64, f64), String> {
    // The plain mean squared error: every row once, whatever the weights and loss.
    let problem = rows.problem_with(program, params, Loss::Mse(rows.y.clone()));
    let mse = score(session, &problem, values, limits)?;
    let nmse = mse / rows.variance();
    Ok((nmse, 1.0 - nmse))
}

impl Candidate {
    /// A program given as text (a seed, an outside proposer's line): every free variable that
    /// is not an input is a parameter, starting at its `init` value or 1.0.
    pub fn from_source(
        src: &str,
        init: &std::collections::HashMap<String, f64>,
        inputs: &[String],
        origin: Origin,
        id: Option<serde_json::Value>,
    ) -> Result<Candidate, String> {
        let program = Program::parse(src).map_err(|e| format!("does not parse: {e}"))?;
        let params: Vec<String> = program
            .inputs()
            .filter(|n| !inputs.iter().any(|i| i == n))
            .map(String::from)
            .collect();
        let values = params
            .iter()
            .map(|p| init.get(p).copied().unwrap_or(1.0))
            .collect();
        Ok(Candidate {
            origin,
            genome: None,
            src: src.to_string(),
            params,
            init: values,
            complexity: super::convert::complexity(src)?,
            perturbed: false,
            id,
            parent_score: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Rows {
        let x: Vec<f64> = (0..50).map(|i| f64::from(i) * 0.1).collect();
        let v: Vec<f64> = (0..50).map(|i| f64::from(i % 7)).collect();
        let y = x
            .iter()
            .zip(&v)
            .map(|(x, v)| 2.5 * x.sin() + 0.3 * v)
            .collect();
        Rows {
            columns: vec![("x".into(), x), ("v".into(), v)],
            y,
            weights: None,
            kind: RowKind::L2,
            program_loss: None,
        }
    }

    fn settings() -> FitSettings {
        FitSettings {
            method: Method::Lm,
            iterations: 30,
            restarts: 3,
            loop_restarts: 3,
            lr: 0.05,
            max_steps: 100_000,
            max_memory_mb: 256,
        }
    }

    #[test]
    fn fits_a_known_formula_exactly() {
        let p = Program::parse("(+ (* a (sin (* w x))) (* b v))").unwrap();
        let params: Vec<String> = ["a", "w", "b"].iter().map(|s| s.to_string()).collect();
        let mut s = Session::new();
        let f = fit(
            &mut s,
            &p,
            &params,
            &[1.0, 1.1, 1.0],
            &rows(),
            &settings(),
            7,
        );
        assert!(f.loss.clone().unwrap() < 1e-20, "{f:?}");
        let (nmse, r2) =
            test_scores(&mut s, &p, &params, &f.params, &rows(), settings().limits()).unwrap();
        assert!(nmse < 1e-20 && (r2 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn failures_carry_their_reason() {
        let mut s = Session::new();
        let cases = [
            ("(if (> x 1) #t #f)", "not a number"),
            ("(loop ((i 0)) (recur (+ i a)))", "step"),
            ("(log (- 0 (* a a) 1))", "non-finite"),
        ];
        for (src, want) in cases {
            let p = Program::parse(src).unwrap();
            let params: Vec<String> = p.inputs().filter(|n| *n == "a").map(String::from).collect();
            let f = fit(
                &mut s,
                &p,
                &params,
                &vec![1.0; params.len()],
                &rows(),
                &settings(),
                1,
            );
            let e = f.loss.unwrap_err();
            assert!(e.contains(want), "{src}: {e}");
        }
    }

    /// `y = 2 x + 1` on 40 rows, the rows `bad` moved by `shift`.
    fn line(bad: &[usize], shift: f64) -> Rows {
        let x: Vec<f64> = (0..40).map(|i| f64::from(i) * 0.25 - 3.0).collect();
        let y = x
            .iter()
            .enumerate()
            .map(|(i, x)| 2.0 * x + 1.0 + if bad.contains(&i) { shift } else { 0.0 })
            .collect();
        Rows {
            columns: vec![("x".into(), x)],
            y,
            weights: None,
            kind: RowKind::L2,
            program_loss: None,
        }
    }

    fn fit_line(rows: &Rows) -> Vec<f64> {
        let p = Program::parse("(+ (* a x) b)").unwrap();
        let params: Vec<String> = vec!["a".into(), "b".into()];
        let one = FitSettings {
            iterations: 200,
            restarts: 1,
            ..settings()
        };
        let f = fit(&mut Session::new(), &p, &params, &[0.5, 0.0], rows, &one, 1);
        assert!(f.loss.is_ok(), "{f:?}");
        f.params
    }

    #[test]
    fn weights_choose_the_rows_a_fit_follows() {
        // Half the rows follow another line: weighted out, the fit is the first line exactly.
        let bad: Vec<usize> = (20..40).collect();
        let plain = line(&bad, 5.0);
        let weighted = Rows {
            weights: Some((0..40).map(|i| if i < 20 { 1.0 } else { 0.0 }).collect()),
            ..plain.clone()
        };
        let (p, w) = (fit_line(&plain), fit_line(&weighted));
        assert!(
            (w[0] - 2.0).abs() < 1e-9 && (w[1] - 1.0).abs() < 1e-9,
            "{w:?}"
        );
        assert!((p[1] - 1.0).abs() > 0.5, "{p:?}");
        // Weights of 3 on every row: the same fit as none (a weighted mean).
        let threes = Rows {
            weights: Some(vec![3.0; 40]),
            ..plain.clone()
        };
        let t = fit_line(&threes);
        assert!((t[0] - p[0]).abs() < 1e-9 && (t[1] - p[1]).abs() < 1e-9);
    }

    #[test]
    fn robust_losses_ignore_gross_outliers_and_l2_does_not() {
        let rows = line(&[3, 11, 17, 29, 35], 40.0);
        let l2 = fit_line(&rows);
        assert!((l2[1] - 1.0).abs() > 1.0, "{l2:?}");
        // L1 fits the 35 rows on the line exactly; Huber and log-cosh let each outlier pull
        // with a bounded force (0.5 and 1 here, against 35 rows' squares): near the line.
        for (kind, within) in [
            (RowKind::L1, 1e-3),
            (RowKind::Huber(0.5), 0.1),
            (RowKind::LogCosh, 0.2),
        ] {
            let f = fit_line(&rows.clone().scored_by(kind));
            assert!(
                (f[0] - 2.0).abs() < within && (f[1] - 1.0).abs() < within,
                "{kind:?}: {f:?}"
            );
        }
    }

    #[test]
    fn every_loss_s_gradient_matches_finite_differences() {
        let p = Program::parse("(+ (* a (exp (* 0.3 x))) b)").unwrap();
        let params: Vec<String> = vec!["a".into(), "b".into()];
        let base = line(&[4, 9], 3.0);
        let w: Vec<f64> = (0..40).map(|i| 0.5 + f64::from(i % 3)).collect();
        let at = [1.3, -0.4];
        for kind in [
            RowKind::L2,
            RowKind::L1,
            RowKind::Huber(1.0),
            RowKind::LogCosh,
            RowKind::Relative,
            RowKind::Poisson,
        ] {
            let rows = Rows {
                weights: Some(w.clone()),
                ..base.clone()
            }
            .scored_by(kind);
            let problem = rows.problem(&p, &params);
            let mut s = Session::new();
            let eval = |s: &mut Session<f64>, x: &[f64]| {
                calibrate::evaluate(s, &problem, &[x.to_vec()], settings().limits(), 64, true)
                    .remove(0)
                    .unwrap()
            };
            let (_, g) = eval(&mut s, &at);
            for k in 0..2 {
                let h = 1e-6;
                let (mut hi, mut lo) = (at.to_vec(), at.to_vec());
                hi[k] += h;
                lo[k] -= h;
                let fd = (eval(&mut s, &hi).0 - eval(&mut s, &lo).0) / (2.0 * h);
                assert!(
                    (g[k] - fd).abs() <= 1e-6 * fd.abs().max(1.0),
                    "{kind:?} d/d{}: {} against {fd}",
                    params[k],
                    g[k]
                );
            }
        }
    }

    #[test]
    fn a_loss_program_is_fitted_with_its_exact_gradient() {
        let rows = line(&[3, 11, 17, 29, 35], 40.0);
        let inputs = vec!["x".to_string()];
        let with = |text: &str| {
            let l = ProgramLoss::parse(text, &inputs).unwrap();
            rows.clone().with_program_loss(Some(std::sync::Arc::new(l)))
        };
        let fit_with = |r: &Rows| {
            let p = r.program("(+ (* a x) b)").unwrap();
            let params: Vec<String> = vec!["a".into(), "b".into()];
            let one = FitSettings {
                method: Method::Lbfgs,
                iterations: 300,
                restarts: 1,
                ..settings()
            };
            fit(&mut Session::new(), &p, &params, &[0.5, 0.0], r, &one, 1)
        };
        // Squared error written out: the least-squares line.
        let l2 = fit_line(&rows);
        let f = fit_with(&with("(square (- f y))"));
        assert!((f.params[0] - l2[0]).abs() < 1e-5 && (f.params[1] - l2[1]).abs() < 1e-5);
        // A Gaussian likelihood with a fitted log scale `s`: the same line, its own constant
        // fitted beside it (and not among the candidate's parameters).
        let nll = with("(+ s (/ (square (- f y)) (* 2 (exp (* 2 s)))))");
        assert_eq!(nll.program_loss.as_ref().unwrap().constants, vec!["loss_s"]);
        let f = fit_with(&nll);
        assert_eq!(f.params.len(), 2);
        assert!(
            (f.params[0] - l2[0]).abs() < 1e-4 && (f.params[1] - l2[1]).abs() < 1e-4,
            "{f:?}"
        );
        // Absolute error written out: the robust line.
        let f = fit_with(&with("(abs (- f y))"));
        assert!(
            (f.params[0] - 2.0).abs() < 1e-3 && (f.params[1] - 1.0).abs() < 1e-3,
            "{f:?}"
        );
        for (bad, want) in [
            ("(square y)", "never reads `f`"),
            ("(+ f", "does not parse"),
        ] {
            let e = ProgramLoss::parse(bad, &inputs).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
        let e = ProgramLoss::parse("(square (- f y))", &["loss_y".to_string()]).unwrap_err();
        assert!(e.contains("`loss_y`"), "{e}");
    }

    #[test]
    fn poisson_fits_the_log_of_the_rate() {
        // Rates e^(0.5 + 0.8 x): the deviance is 0 at the truth.
        let x: Vec<f64> = (0..30).map(|i| f64::from(i) * 0.1).collect();
        let y = x.iter().map(|x| (0.5 + 0.8 * x).exp()).collect();
        let rows = Rows {
            columns: vec![("x".into(), x)],
            y,
            weights: None,
            kind: RowKind::Poisson,
            program_loss: None,
        };
        let f = fit_line(&rows);
        assert!(
            (f[0] - 0.8).abs() < 1e-5 && (f[1] - 0.5).abs() < 1e-5,
            "{f:?}"
        );
    }
}
