//! The numeric-ceiling experiment: a population of G noise candidates, each the forward
//! negative log-likelihood of a D-dimensional Kalman filter over T steps.
//!
//! | file | what |
//! | --- | --- |
//! | `problem.rs` | the filter (F, H, y_t, q_g, r_g), laid out as the kernel reads it |
//! | `plan.rs` | workgroup size, time steps per dispatch (the loop budget), candidates per batch |
//! | `gpu.rs` | recording and running the dispatches of `shaders::CEILING` |
//!
//! The CPU twin of the kernel is [`crate::cpu_twin`].

mod gpu;
mod plan;
mod problem;

pub use plan::{
    invocation_loop_visits, CeilingConfig, CeilingPlan, StepChunk, DEFAULT_LOOP_BUDGET, MAX_DIM,
    MESA_LOOP_CAP,
};
pub use problem::{
    noise, noise_population, observation, transition, CeilingProblem, PAPER_POPULATION, STEPS,
};
