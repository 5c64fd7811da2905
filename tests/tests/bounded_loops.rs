//! Forward-only loops run in bounded memory: without a tape, a loop gives back the slots and
//! masks its iterations no longer reach, so a long loop fits a memory limit far below what its
//! trip count would otherwise take, with the same results (the runtime's `sin` and `cos` are
//! `shared_ir::vmath`'s).

use runtime_cpu::{Bindings, Error, GradSpec, Limits, Program, RunOptions, Session};
use shared_ir::vmath;

fn limited(mb: usize) -> RunOptions {
    RunOptions {
        limits: Limits {
            max_memory: mb << 20,
            max_steps: 1 << 40,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn values(src: &str, b: &Bindings, opts: &RunOptions) -> Vec<Result<f64, Error>> {
    let p = Program::parse(src).unwrap();
    let out = Session::<f64>::new().run(&p, b, opts).cloned().unwrap();
    out.values
        .into_iter()
        .map(|v| v.map(|v| v.as_number().expect("a number")))
        .collect()
}

const SCALAR_LOOP: &str = "(loop ((i 0) (acc 0.0))
  (if (< i 2000000) (recur (+ i 1) (+ acc (* 0.5 (sin i)))) acc))";

#[test]
fn a_long_scalar_loop_fits_a_small_memory_limit() {
    // 2M iterations make 8M slots: 300 MB of slots and numbers if none were given back.
    let got = values(SCALAR_LOOP, &Bindings::new(), &limited(4));
    let mut acc = 0.0f64;
    for i in 0..2_000_000 {
        acc += 0.5 * vmath::sin(i as f64);
    }
    assert_eq!(got[0].as_ref().unwrap().to_bits(), acc.to_bits());
}

#[test]
fn a_taped_loop_still_keeps_its_slots() {
    // With a gradient every iteration's slots feed the reverse pass: the limit is reached.
    let src = "(loop ((i 0) (acc a))
      (if (< i 2000000) (recur (+ i 1) (+ acc (* a (sin i)))) acc))";
    let b = Bindings::new().scalar("a", 0.5);
    let mut opts = limited(4);
    opts.grad = GradSpec::All;
    let got = values(src, &b, &opts);
    assert!(matches!(got[0], Err(Error::MemoryLimit { .. })), "{got:?}");
}

#[test]
fn lanes_that_leave_at_different_iterations_keep_their_values() {
    // Each lane runs its own trip count, so the loop's test splits the lanes: the values of
    // lanes that left, the active lanes' mask and booleans carried in the loop survive.
    let src = "(loop ((i 0) (acc 0.0) (v (vec x 1)) (odd #f))
      (if (< i (* 20000 x))
          (recur (+ i 1) (+ acc (* x (sin i))) (* 0.5 (+ v (vec 1 i))) (not odd))
          (if odd (+ acc (ref v 0)) (- acc (ref v 1)))))";
    let xs: Vec<f64> = (1..=16).map(|k| k as f64).collect();
    let b = Bindings::new().lanes("x", xs.clone()).unwrap();
    let got = values(src, &b, &limited(8));
    for (lane, &x) in xs.iter().enumerate() {
        let (mut acc, mut v, mut odd) = (0.0f64, [x, 1.0], false);
        let mut i = 0.0f64;
        while i < 20000.0 * x {
            acc += x * vmath::sin(i);
            v = [0.5 * (v[0] + 1.0), 0.5 * (v[1] + i)];
            odd = !odd;
            i += 1.0;
        }
        let want = if odd { acc + v[0] } else { acc - v[1] };
        let g = *got[lane].as_ref().unwrap();
        assert_eq!(
            g.to_bits(),
            want.to_bits(),
            "lane {lane}: {g} against {want}"
        );
    }
}

#[test]
fn nested_loops_give_back_their_own_iterations() {
    let src = "(loop ((i 0) (total 0.0))
      (if (< i 300)
          (recur (+ i 1)
                 (+ total (loop ((j 0) (s 0.0))
                            (if (< j 3000) (recur (+ j 1) (+ s (* (cos j) i))) s))))
          total))";
    let got = values(src, &Bindings::new(), &limited(4));
    let mut total = 0.0f64;
    for i in 0..300 {
        let mut s = 0.0f64;
        for j in 0..3000 {
            s += vmath::cos(j as f64) * i as f64;
        }
        total += s;
    }
    assert_eq!(got[0].as_ref().unwrap().to_bits(), total.to_bits());
}

#[test]
fn a_loop_that_builds_a_list_keeps_what_the_list_holds() {
    // A pair made in an iteration may hold that iteration's numbers: nothing is given back.
    let src = "(define (sum xs) (if (null? xs) 0 (+ (car xs) (sum (cdr xs)))))
      (sum (loop ((i 0) (xs '()))
             (if (< i 20000) (recur (+ i 1) (cons (* 2 (sin i)) xs)) xs)))";
    let got = values(src, &Bindings::new(), &limited(64));
    // (sum xs) adds from the head, the newest element, so the oldest is added first.
    let mut want = 0.0f64;
    for i in 0..20000 {
        want += 2.0 * vmath::sin(i as f64);
    }
    assert_eq!(got[0].as_ref().unwrap().to_bits(), want.to_bits());
}
