//! The ndvm harness: the command-line program's commands, experiment drivers, and the
//! hand-written baselines the interpreter is measured against.
//!
//! | module | what |
//! | --- | --- |
//! | `ceiling` | the 80-step Kalman likelihood and its gradient written by hand (the compiled ceiling) |
//! | `data` | the reference data in `data/`, embedded |
//! | `device` | `--device cpu|gpu|auto`: the GPU region device for a session |
//! | `examples` | the example programs in `examples/`, embedded |
//! | `handwritten` | the suite's small programs written by hand (the compiled baseline) |
//! | `cli` | the `ndvm` subcommands |
//! | `bench` | `ndvm bench` experiments |
//! | `calibrate` | fitting parameters to data: Adam, L-BFGS, Levenberg-Marquardt, restarts as lane groups |
//! | `cosearch` | co-search replay of a candidate stream with the paper's protocol |
//! | `rng` | a small seeded generator for reproducible draws |
//! | `search` | `ndvm search`: programs and constants discovered from data |
//! | `ode` | `ndvm search --time`: systems of ODEs discovered from trajectories |
//! | `export` | `ndvm export`: a program as NumPy, JAX, PyTorch or sympy code, or LaTeX |
#![forbid(unsafe_code)]

pub mod bench;
pub mod calibrate;
pub mod ceiling;
pub mod cli;
pub mod cosearch;
pub mod data;
pub mod device;
pub mod examples;
pub mod export;
pub mod handwritten;
pub mod ode;
pub mod rng;
pub mod search;
pub use runtime_cpu::schedule;
