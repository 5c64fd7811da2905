//! The inputs of one evaluation: the problem's fixed inputs, its data per lane and the
//! parameters of the restarts. A fit evaluates the same layout at every step with new
//! parameters, so each thread keeps its last evaluation's bindings and run options and
//! rewrites their numbers in place when the layout matches (no allocation per step); any
//! other layout is bound afresh. Every number is rewritten each time, so a kept binding never
//! carries a stale value.

use super::Problem;
use runtime_cpu::{Binding, Bindings, GradSpec, Limits, RunOptions, Shape};
use std::cell::RefCell;
use std::ops::Range;

thread_local! {
    /// This thread's last evaluation's bindings and options.
    static LAST: RefCell<Option<(Bindings, RunOptions)>> = const { RefCell::new(None) };
    /// Where [`refill`] last found each name (fixed inputs, data, parameters, in that order).
    static PLACES: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// How an evaluation binds and runs: its lanes (lane `r * N + i` is data row `i` of restart
/// `r`), whether the parameters are bound once (`uniform`, one restart), and the run's limits.
pub(crate) struct Layout {
    pub lanes: Range<usize>,
    pub uniform: bool,
    pub limits: Limits,
    pub lane_block: usize,
    pub with_grad: bool,
}

impl Layout {
    /// The layout of an evaluation of `lanes` of the restarts `p` (their parameters bound
    /// once when there is one restart).
    pub fn new(
        p: &[Vec<f64>],
        lanes: Range<usize>,
        limits: Limits,
        lane_block: usize,
        with_grad: bool,
    ) -> Self {
        Layout {
            lanes,
            uniform: p.len() == 1,
            limits,
            lane_block,
            with_grad,
        }
    }
}

/// Calls `f` with the bindings and options of `layout` for the restarts `p`.
pub(crate) fn with_run<T>(
    problem: &Problem,
    p: &[Vec<f64>],
    layout: &Layout,
    f: impl FnOnce(&Bindings, &RunOptions) -> T,
) -> T {
    let mut last = LAST.with(|c| c.borrow_mut().take());
    let mut places = PLACES.with(|c| std::mem::take(&mut *c.borrow_mut()));
    let kept = match &mut last {
        Some((b, _)) => refill(problem, p, layout, b, &mut places),
        None => false,
    };
    PLACES.with(|c| *c.borrow_mut() = places);
    let (b, o) = match last {
        Some((b, mut o)) if kept => {
            if !same_grad(&o.grad, problem, layout.with_grad) {
                o.grad = grad_spec(problem, layout.with_grad);
            }
            (o.limits, o.lane_block, o.seed) = (layout.limits, layout.lane_block, None);
            (b, o)
        }
        _ => (
            lane_bindings(problem, p, layout.lanes.clone(), layout.uniform),
            options(problem, layout.limits, layout.lane_block, layout.with_grad),
        ),
    };
    let r = f(&b, &o);
    LAST.with(|c| *c.borrow_mut() = Some((b, o)));
    r
}

/// Binds lanes `lanes` of the restarts `p` (lane `r * N + i` is data row `i` of restart `r`):
/// the data per lane, the parameters per lane or (`uniform`, one restart) once.
pub(crate) fn lane_bindings(
    problem: &Problem,
    p: &[Vec<f64>],
    lanes: Range<usize>,
    uniform: bool,
) -> Bindings {
    let n = problem.rows().max(1);
    let per_lane = |f: &dyn Fn(usize) -> f64| Binding::Lanes {
        shape: Shape::Scalar,
        data: lanes.clone().map(f).collect(),
    };
    let mut b = problem.fixed.clone();
    for (name, col) in &problem.data {
        b = b
            .set(name, per_lane(&|l| col[l % n]))
            .expect("equal lane counts");
    }
    for (k, name) in problem.params.iter().enumerate() {
        b = if uniform {
            b.scalar(name, p[0][k])
        } else {
            b.set(name, per_lane(&|l| p[l / n][k]))
                .expect("equal lane counts")
        };
    }
    b
}

/// The run options of an evaluation.
pub(crate) fn options(
    problem: &Problem,
    limits: Limits,
    lane_block: usize,
    with_grad: bool,
) -> RunOptions {
    RunOptions {
        grad: grad_spec(problem, with_grad),
        limits,
        lane_block,
        ..Default::default()
    }
}

fn grad_spec(problem: &Problem, with_grad: bool) -> GradSpec {
    if with_grad {
        GradSpec::Some(problem.params.clone())
    } else {
        GradSpec::None
    }
}

fn same_grad(g: &GradSpec, problem: &Problem, with_grad: bool) -> bool {
    match g {
        GradSpec::Some(names) => with_grad && *names == problem.params,
        GradSpec::None => !with_grad,
        GradSpec::All => false,
    }
}

/// Rewrites `b` to hold what [`lane_bindings`] would bind, when `b` has that layout: the same
/// names, each bound the same way with the same shape and lane count. False (with `b` partly
/// rewritten) when it has another layout.
///
/// `places` holds where each name was found the last time (fixed inputs, data, parameters, in
/// that order), looked at first, and is updated.
fn refill(
    problem: &Problem,
    p: &[Vec<f64>],
    layout: &Layout,
    b: &mut Bindings,
    places: &mut Vec<usize>,
) -> bool {
    let count = problem.fixed.len() + problem.data.len() + problem.params.len();
    // A name bound twice, or more names than the mark holds, is bound afresh.
    if b.len() != count || count > 64 {
        return false;
    }
    places.resize(count, usize::MAX);
    let mut places = places.iter_mut();
    let lanes = layout.lanes.clone();
    let n = problem.rows().max(1);
    // Each name must land on its own binding: with `count` distinct hits among `count`
    // bindings, `b` holds exactly these names.
    let mut seen = 0u64;
    let mut mark = |i: usize| {
        let bit = 1u64 << i;
        let fresh = seen & bit == 0;
        seen |= bit;
        fresh
    };
    for (name, binding) in problem.fixed.iter() {
        let Some((i, per_lane, shape, xs)) = near(b, places.next(), name) else {
            return false;
        };
        let (want_lanes, want_shape, data) = match binding {
            Binding::Uniform(t) => (false, t.shape, &t.data),
            Binding::Lanes { shape, data } => (true, *shape, data),
        };
        if per_lane != want_lanes || shape != want_shape || xs.len() != data.len() || !mark(i) {
            return false;
        }
        xs.copy_from_slice(data);
    }
    for (name, col) in &problem.data {
        match near(b, places.next(), name) {
            Some((i, true, Shape::Scalar, xs)) if xs.len() == lanes.len() && mark(i) => {
                // Lane `l` is row `l % n`: whole runs of rows at a time.
                let mut row = lanes.start % n;
                let mut rest = xs;
                while !rest.is_empty() {
                    let take = (n - row).min(rest.len());
                    let (now, later) = rest.split_at_mut(take);
                    now.copy_from_slice(&col[row..row + take]);
                    (rest, row) = (later, 0);
                }
            }
            _ => return false,
        }
    }
    for (k, name) in problem.params.iter().enumerate() {
        match near(b, places.next(), name) {
            Some((i, false, Shape::Scalar, xs)) if layout.uniform && mark(i) => xs[0] = p[0][k],
            Some((i, true, Shape::Scalar, xs))
                if !layout.uniform && xs.len() == lanes.len() && mark(i) =>
            {
                // Lane `l` is restart `l / n`: a run of lanes at a time.
                let mut l = lanes.start;
                let mut rest = xs;
                while !rest.is_empty() {
                    let take = (n - l % n).min(rest.len());
                    let (now, later) = rest.split_at_mut(take);
                    now.fill(p[l / n][k]);
                    (rest, l) = (later, l + take);
                }
            }
            _ => return false,
        }
    }
    let per_lane = !problem.data.is_empty() || !layout.uniform;
    let want = if per_lane {
        lanes.len()
    } else {
        problem.fixed.lane_count()
    };
    b.lane_count() == want
}

/// [`Bindings::numbers_mut_near`] from `place`, where `name` was found the last time (none: not
/// found), which becomes where it is now.
fn near<'b>(
    b: &'b mut Bindings,
    place: Option<&mut usize>,
    name: &str,
) -> Option<(usize, bool, Shape, &'b mut [f64])> {
    let place = place?;
    let found = b.numbers_mut_near(*place, name)?;
    *place = found.0;
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::Loss;
    use runtime_cpu::Program;

    fn problem(fixed: Bindings, params: &[&str]) -> Problem {
        Problem {
            program: Program::parse("(* a x)").unwrap(),
            fixed,
            data: vec![("x".into(), vec![1.0, 2.0, 3.0])],
            params: params.iter().map(|s| s.to_string()).collect(),
            loss: Loss::Value,
        }
    }

    fn layout(lanes: Range<usize>, uniform: bool) -> Layout {
        Layout {
            lanes,
            uniform,
            limits: Limits::default(),
            lane_block: 256,
            with_grad: true,
        }
    }

    #[test]
    fn a_refilled_binding_is_the_fresh_one() {
        let fixed = Bindings::new().scalar("k", 2.5);
        let pr = problem(fixed, &["a", "b"]);
        let p1 = vec![vec![0.5, 1.5], vec![-1.0, 4.0]];
        let p2 = vec![vec![7.0, 8.0], vec![9.0, 10.0]];
        for (lanes, uniform) in [(0..6, false), (2..5, false)] {
            // Places found before, and places that are wrong (another binding, none): the
            // names are found wherever they are.
            for mut places in [Vec::new(), vec![1, 2, 0, 3], vec![9, 9, 9, 9]] {
                let mut b = lane_bindings(&pr, &p1, lanes.clone(), uniform);
                assert!(refill(
                    &pr,
                    &p2,
                    &layout(lanes.clone(), uniform),
                    &mut b,
                    &mut places
                ));
                assert_eq!(b, lane_bindings(&pr, &p2, lanes.clone(), uniform));
                let mut again = lane_bindings(&pr, &p1, lanes.clone(), uniform);
                assert!(refill(
                    &pr,
                    &p2,
                    &layout(lanes.clone(), uniform),
                    &mut again,
                    &mut places
                ));
                assert_eq!(again, b);
            }
        }
        let mut b = lane_bindings(&pr, &p1[..1], 0..3, true);
        assert!(refill(
            &pr,
            &p2[..1],
            &layout(0..3, true),
            &mut b,
            &mut Vec::new()
        ));
        assert_eq!(b, lane_bindings(&pr, &p2[..1], 0..3, true));
    }

    #[test]
    fn another_layout_is_not_refilled() {
        let pr = problem(Bindings::new(), &["a"]);
        let p = vec![vec![1.0]];
        let b = lane_bindings(&pr, &p, 0..3, true);
        // Other lanes, parameters per lane, another parameter, a name bound twice.
        let refills = |pr: &Problem, layout: &Layout, b: &Bindings| {
            refill(pr, &p, layout, &mut b.clone(), &mut Vec::new())
        };
        assert!(!refills(&pr, &layout(0..2, true), &b));
        assert!(!refills(&pr, &layout(0..3, false), &b));
        assert!(!refills(
            &problem(Bindings::new(), &["c"]),
            &layout(0..3, true),
            &b
        ));
        let twice = problem(Bindings::new().scalar("a", 1.0), &["a"]);
        let b2 = lane_bindings(&twice, &p, 0..3, true);
        assert!(!refills(&twice, &layout(0..3, true), &b2));
    }

    #[test]
    fn evaluations_through_the_kept_bindings_follow_the_parameters() {
        let pr = problem(Bindings::new(), &["a"]);
        let l = layout(0..3, true);
        let mut s = runtime_cpu::Session::<f64>::new();
        for a in [1.0, 2.0, -3.0] {
            let sum = with_run(&pr, &[vec![a]], &l, |b, o| {
                let out = s.run(&pr.program, b, o).unwrap();
                out.grad("a").unwrap().sum[0]
            });
            assert_eq!(sum, 6.0);
            let v = with_run(&pr, &[vec![a]], &l, |b, o| {
                s.run(&pr.program, b, o).unwrap().values[2].clone().unwrap()
            });
            assert_eq!(v.as_number(), Some(3.0 * a));
        }
    }
}
