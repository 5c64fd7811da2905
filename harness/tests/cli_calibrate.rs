//! `ndvm calibrate` end to end: the Kalman likelihood, a regression with a held-out split, and
//! input errors.

use std::path::PathBuf;
use std::process::Command;

fn ndvm(args: &[&str]) -> std::process::Output {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    Command::new(env!("CARGO_BIN_EXE_ndvm"))
        .current_dir(repo)
        .args(args)
        .output()
        .expect("ndvm runs")
}

/// The JSON a successful run printed (its error output in the failure message otherwise).
fn json_of(out: std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn kalman_likelihood_fit_matches_the_paper() {
    let out = ndvm(&[
        "calibrate",
        "examples/kalman2d_T80.scm",
        "--bind",
        "obs=@examples/kalman2d_obs.csv",
        "--params",
        "q,r",
        "--init",
        "q=0.3,r=0.3",
        "--lr",
        "0.08",
        "--steps",
        "30",
        "--clamp",
        "q=1e-4:",
        "--clamp",
        "r=1e-4:",
        "--format",
        "json",
    ]);
    let j = json_of(out);
    assert_eq!(j["params"]["q"], 1e-4);
    assert!((j["params"]["r"].as_f64().unwrap() - 1.0732).abs() < 1e-3);
    assert!((j["last_step_loss"].as_f64().unwrap() - 164.945).abs() < 1e-3);
}

#[test]
fn regression_with_holdout_reports_r2() {
    let model = std::env::temp_dir().join(format!("ndvm-calibrate-{}.scm", std::process::id()));
    std::fs::write(&model, "(* a (* (exp (- 0.0 (* b x))) (cos (* c x))))").unwrap();
    let out = ndvm(&[
        "calibrate",
        model.to_str().unwrap(),
        "--data",
        "data/cosearch/damped_oscillator.csv",
        "--target",
        "y",
        "--init",
        "a=1,b=0.1,c=1.8",
        "--steps",
        "200",
        "--restarts",
        "4",
        "--format",
        "json",
    ]);
    let j = json_of(out);
    assert!(j["holdout_r2"].as_f64().unwrap() > 0.99, "{j}");
    assert!(
        (j["params"]["b"].as_f64().unwrap() - 0.3).abs() < 0.05,
        "{j}"
    );
    assert_eq!(j["restarts"].as_array().unwrap().len(), 4);
}

#[test]
fn a_parameter_that_is_not_an_input_is_a_usage_error() {
    let out = ndvm(&[
        "calibrate",
        "examples/kalman2d_T80.scm",
        "--bind",
        "obs=@examples/kalman2d_obs.csv",
        "--params",
        "q,zz",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`zz` is not an input"));
}

#[test]
fn any_thread_count_gives_the_same_fit() {
    // log(b x) fails (a non-finite loss) for the restarts drawn with b < 0: failed and fitted
    // restarts side by side, in jobs of whole restarts spread over the workers.
    let model = std::env::temp_dir().join(format!("ndvm-threads-{}.scm", std::process::id()));
    std::fs::write(&model, "(* a (log (* b (+ x 1.0))))").unwrap();
    let run = |optimizer: &str, threads: &str| -> serde_json::Value {
        let out = ndvm(&[
            "calibrate",
            model.to_str().unwrap(),
            "--optimizer",
            optimizer,
            "--data",
            "data/cosearch/damped_oscillator.csv",
            "--target",
            "y",
            "--init",
            "a=0.5,b=0.1",
            "--steps",
            "20",
            "--restarts",
            "40",
            "--threads",
            threads,
            "--format",
            "json",
        ]);
        let mut j = json_of(out);
        j.as_object_mut().unwrap().remove("seconds");
        j
    };
    for optimizer in ["adam", "lbfgs"] {
        let one = run(optimizer, "1");
        let restarts = one["restarts"].as_array().unwrap();
        assert_eq!(restarts.len(), 40);
        let failed = restarts.iter().filter(|r| !r["error"].is_null()).count();
        assert!(failed > 0 && failed < 40, "{failed} of 40 failed: {one}");
        for threads in ["2", "3", "8"] {
            assert_eq!(
                run(optimizer, threads),
                one,
                "{optimizer}, --threads {threads}"
            );
        }
    }
}

#[test]
fn data_with_every_row_held_out_is_a_usage_error() {
    let dir = std::env::temp_dir();
    let csv = dir.join(format!("ndvm-allheld-{}.csv", std::process::id()));
    std::fs::write(&csv, "x,y,split\n0,1,holdout\n1,2,holdout\n").unwrap();
    let model = dir.join(format!("ndvm-allheld-{}.scm", std::process::id()));
    std::fs::write(&model, "(* a x)").unwrap();
    let out = ndvm(&[
        "calibrate",
        model.to_str().unwrap(),
        "--data",
        csv.to_str().unwrap(),
        "--target",
        "y",
        "--restarts",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("every data row is held out"), "{err}");
}

#[test]
fn levenberg_marquardt_fits_in_fewer_steps_than_adam() {
    let model = std::env::temp_dir().join(format!("ndvm-lm-{}.scm", std::process::id()));
    std::fs::write(&model, "(* a (* (exp (- 0.0 (* b x))) (cos (* c x))))").unwrap();
    let fit = |optimizer: &str, steps: &str| {
        json_of(ndvm(&[
            "calibrate",
            model.to_str().unwrap(),
            "--optimizer",
            optimizer,
            "--data",
            "data/cosearch/damped_oscillator.csv",
            "--target",
            "y",
            "--init",
            "a=1,b=0.1,c=1.8",
            "--steps",
            steps,
            "--format",
            "json",
        ]))
    };
    let lm = fit("lm", "20");
    let adam = fit("adam", "200");
    let loss = |j: &serde_json::Value| {
        j["final_loss"]
            .as_f64()
            .or(j["last_step_loss"].as_f64())
            .unwrap()
    };
    assert!(loss(&lm) <= loss(&adam) * 1.0001, "{lm} {adam}");
    assert!(lm["holdout_r2"].as_f64().unwrap() > 0.99, "{lm}");
    // Without a target there is no least-squares loss to fit.
    let out = ndvm(&[
        "calibrate",
        "examples/kalman2d_T80.scm",
        "--bind",
        "obs=@examples/kalman2d_obs.csv",
        "--params",
        "q,r",
        "--optimizer",
        "lm",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--optimizer lm fits a least-squares loss")
    );
}
