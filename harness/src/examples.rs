//! Example programs and data shipped with the project, embedded so that benchmarks and tests
//! never depend on the working directory.

/// The 80-step 2x2 Kalman negative log-likelihood (`examples/kalman2d_T80.scm`).
pub const KALMAN_SRC: &str = include_str!("../../examples/kalman2d_T80.scm");

/// The D-dimensional Kalman likelihood of the GPU ceiling experiment (`examples/kalman_nd.scm`).
pub const KALMAN_ND: &str = include_str!("../../examples/kalman_nd.scm");

/// Its observations (`examples/kalman2d_obs.csv`, 80 rows of 2, no header).
pub const KALMAN_OBS_CSV: &str = include_str!("../../examples/kalman2d_obs.csv");

/// The observations as rows.
pub fn kalman_obs() -> Vec<[f64; 2]> {
    KALMAN_OBS_CSV
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut it = l
                .split(',')
                .map(|x| x.trim().parse::<f64>().expect("numeric observation"));
            [
                it.next().expect("two columns"),
                it.next().expect("two columns"),
            ]
        })
        .collect()
}

/// The suite programs written for the bytecode VM (`examples/vm/`), by suite name. The Kalman
/// program is not among them: the VM has no matrices.
pub const VM_SUITE_PROGRAMS: &[(&str, &str)] = &[
    (
        "scalar_mul_add",
        include_str!("../../examples/vm/scalar_mul_add.asm"),
    ),
    (
        "michaelis_menten",
        include_str!("../../examples/vm/michaelis_menten.asm"),
    ),
    (
        "damped_oscillator",
        include_str!("../../examples/vm/damped_oscillator.asm"),
    ),
    (
        "logistic_map_loop",
        include_str!("../../examples/vm/logistic_map_loop.asm"),
    ),
];
