//! ODE discovery (`ndvm search --time`): systems `d state / dt = f(states, inputs, t)` found
//! from measured trajectories, every candidate integrated inside a program of the object
//! language and fitted through the integrator with the runtime's exact gradients.
//!
//! | file | what |
//! | --- | --- |
//! | `checkpoint.rs` | the checkpoint `--resume` continues |
//! | `data.rs` | trajectories from a CSV, with clear errors |
//! | `discover.rs` | the search: right-hand sides proposed per state, systems fitted by integration |
//! | `evolve.rs` | the third stage: systems bred as systems (islands, per-state changes) |
//! | `grid.rs` | the Runge-Kutta steps across the observed times |
//! | `library.rs` | sparse polynomial right-hand sides by thresholded least squares |
//! | `normal.rs` | the shooting fit's normal equations by their band and border |
//! | `outside.rs` | systems from an outside proposer (the search's JSON-lines protocol) |
//! | `program.rs` | a system as programs that integrate it (a `loop` of RK4 steps) |
//! | `report.rs` | the front as a table and JSON; a plot per trajectory |
//! | `shoot.rs` | multiple shooting: constants and starting states by Levenberg-Marquardt |
//! | `simulate.rs` | a fitted system integrated across trajectories, and its R^2 |
//! | `smooth.rs` | smoothed states and slopes (local cubics, widths by cross-validation) |

pub mod checkpoint;
pub mod data;
pub mod discover;
pub mod evolve;
pub mod grid;
pub mod library;
pub mod normal;
pub mod outside;
pub mod program;
pub mod report;
pub mod shoot;
pub mod simulate;
pub mod smooth;
