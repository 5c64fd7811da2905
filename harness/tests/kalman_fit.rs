//! The paper's Kalman maximum-likelihood calibration: Adam (lr 0.08, 30 steps) from q = r = 0.3
//! with both clamped to at least 1e-4 reaches NLL 164.945 at q = 1e-4, r = 1.0732.

use harness::calibrate::{adam::AdamSettings, fit, Loss, Optimizer, Problem, Settings};
use harness::examples::{kalman_obs, KALMAN_SRC};
use runtime_cpu::{Bindings, Limits, Program, Session, Tensor};

fn problem() -> Problem {
    let obs = kalman_obs();
    let flat: Vec<f64> = obs.iter().flat_map(|r| r.iter().copied()).collect();
    Problem {
        program: Program::parse(KALMAN_SRC).unwrap(),
        fixed: Bindings::new().uniform("obs", Tensor::matrix(obs.len(), 2, flat).unwrap()),
        data: Vec::new(),
        params: vec!["q".into(), "r".into()],
        loss: Loss::Value,
    }
}

#[test]
fn kalman_fit_reproduces_the_paper() {
    let settings = Settings {
        optimizer: Optimizer::Adam(AdamSettings {
            lr: 0.08,
            ..Default::default()
        }),
        steps: 30,
        clamps: vec![Some((1e-4, f64::INFINITY)); 2],
        limits: Limits::default(),
        final_loss: true,
        lane_block: runtime_cpu::DEFAULT_LANE_BLOCK,
    };
    let r = fit(
        &mut Session::<f64>::new(),
        &problem(),
        &[vec![0.3, 0.3]],
        &settings,
    );
    let best = &r.restarts[r.best.expect("the fit succeeds")];
    assert!(
        (best.params[0] - 1e-4).abs() <= 1e-3 * 1e-4,
        "q = {}",
        best.params[0]
    );
    assert!(
        (best.params[1] - 1.0732).abs() <= 1e-3 * 1.0732,
        "r = {}",
        best.params[1]
    );
    // The paper reports the loss of the last Adam step (at the parameters before the update).
    assert!(
        (best.last_step_loss - 164.945).abs() <= 1e-5 * 164.945,
        "NLL = {}",
        best.last_step_loss
    );
    assert!(
        (best.final_loss.unwrap() - 164.945).abs() <= 1e-3 * 164.945,
        "NLL = {:?}",
        best.final_loss
    );
}

#[test]
fn lbfgs_converges_below_the_adam_fit() {
    let settings = Settings {
        optimizer: Optimizer::Lbfgs(Default::default()),
        steps: 100,
        clamps: vec![Some((1e-4, f64::INFINITY)); 2],
        limits: Limits::default(),
        final_loss: true,
        lane_block: runtime_cpu::DEFAULT_LANE_BLOCK,
    };
    let r = fit(
        &mut Session::<f64>::new(),
        &problem(),
        &[vec![0.3, 0.3]],
        &settings,
    );
    let best = &r.restarts[r.best.expect("the fit succeeds")];
    assert_eq!(best.params[0], 1e-4, "q is held at its bound");
    let nll = best.final_loss.unwrap();
    assert!(nll < 164.4, "NLL {nll}");
    // A stationary point in r: the gradient of the likelihood there is zero.
    let h = 1e-5;
    let at = |r: f64| {
        let one = Settings {
            steps: 0,
            ..settings.clone()
        };
        fit(
            &mut Session::<f64>::new(),
            &problem(),
            &[vec![1e-4, r]],
            &one,
        )
        .restarts[0]
            .final_loss
            .unwrap()
    };
    let slope = (at(best.params[1] + h) - at(best.params[1] - h)) / (2.0 * h);
    assert!(slope.abs() < 1e-3, "slope {slope}");
}
