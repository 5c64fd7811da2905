//! The suite's four small programs written by hand in Rust, forward only: the "compiled code"
//! baseline of `ndvm bench decompose` (the Kalman program's is `ceiling::kalman_nll`). Each
//! takes its inputs by name from the suite's scalar bindings, so the benchmark feeds it exactly
//! what the interpreters get.

/// A hand-written program: its inputs in a fixed order, and the function of them.
#[derive(Copy, Clone, Debug)]
pub struct Handwritten {
    /// Input names, in the order `f` takes them.
    pub inputs: &'static [&'static str],
    /// The program's value.
    pub f: fn(&[f64]) -> f64,
}

/// The hand-written version of suite program `name`, if there is one.
pub fn handwritten(name: &str) -> Option<Handwritten> {
    let h = match name {
        // (+ (* alpha x) beta)
        "scalar_mul_add" => Handwritten {
            inputs: &["alpha", "x", "beta"],
            f: |v| v[0] * v[1] + v[2],
        },
        // (/ (* Vmax S) (+ Km S))
        "michaelis_menten" => Handwritten {
            inputs: &["Vmax", "S", "Km"],
            f: |v| (v[0] * v[1]) / (v[2] + v[1]),
        },
        // (* A (* (exp (- 0 (* b t))) (cos (* omega t))))
        "damped_oscillator" => Handwritten {
            inputs: &["A", "b", "t", "omega"],
            f: |v| v[0] * ((0.0 - v[1] * v[2]).exp() * (v[3] * v[2]).cos()),
        },
        // (loop ((x x0) (k 0)) (if (= k 16) x (recur (* r (* x (- 1.0 x))) (+ k 1))))
        "logistic_map_loop" => Handwritten {
            inputs: &["x0", "r"],
            f: |v| {
                let (mut x, r) = (v[0], v[1]);
                for _ in 0..16 {
                    x = r * (x * (1.0 - x));
                }
                x
            },
        },
        _ => return None,
    };
    Some(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::suite;

    #[test]
    fn hand_written_programs_match_the_suite_references() {
        let mut seen = 0;
        for p in suite() {
            let Some(h) = handwritten(&p.name) else {
                continue;
            };
            let args: Vec<f64> = h
                .inputs
                .iter()
                .map(|n| p.scalars.iter().find(|s| s.0 == *n).expect("bound").1)
                .collect();
            let want = p.value.expect("a reference");
            let got = (h.f)(&args);
            assert!(
                (got - want).abs() <= 1e-6 * (1.0 + want.abs()),
                "{}",
                p.name
            );
            seen += 1;
        }
        assert_eq!(seen, 4);
    }
}
