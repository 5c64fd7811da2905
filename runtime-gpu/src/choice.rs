//! Where work runs: the user's choice (`auto`, `gpu`, `cpu`) resolved against what the machine
//! has. `auto` falls back to the CPU, with the reason kept, when no GPU context can be made.

use crate::context::GpuContext;
use crate::error::GpuError;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// The device the user asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The GPU when one is usable, else the CPU.
    #[default]
    Auto,
    /// The GPU; no adapter is an error.
    Gpu,
    /// The CPU only; no GPU is touched.
    Cpu,
}

impl FromStr for DeviceChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(DeviceChoice::Auto),
            "gpu" => Ok(DeviceChoice::Gpu),
            "cpu" => Ok(DeviceChoice::Cpu),
            _ => Err(format!("unknown device `{s}` (use auto, gpu or cpu)")),
        }
    }
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceChoice::Auto => "auto",
            DeviceChoice::Gpu => "gpu",
            DeviceChoice::Cpu => "cpu",
        })
    }
}

/// Where the work will run.
#[derive(Clone, Debug)]
pub enum Executor {
    /// On this GPU context.
    Gpu(Arc<GpuContext>),
    /// On the CPU; `fallback` is why, when the user asked for `auto` and the GPU was unusable.
    Cpu {
        /// The error that made `auto` choose the CPU.
        fallback: Option<GpuError>,
    },
}

impl Executor {
    /// The GPU context, if the work runs on one.
    pub fn gpu(&self) -> Option<&Arc<GpuContext>> {
        match self {
            Executor::Gpu(ctx) => Some(ctx),
            Executor::Cpu { .. } => None,
        }
    }
}

/// Resolves `choice` with `context` as the source of a GPU context (called at most once, and
/// not at all for [`DeviceChoice::Cpu`]).
pub fn resolve(
    choice: DeviceChoice,
    context: impl FnOnce() -> Result<Arc<GpuContext>, GpuError>,
) -> Result<Executor, GpuError> {
    match choice {
        DeviceChoice::Cpu => Ok(Executor::Cpu { fallback: None }),
        DeviceChoice::Gpu => context().map(Executor::Gpu),
        DeviceChoice::Auto => match context() {
            Ok(ctx) => Ok(Executor::Gpu(ctx)),
            Err(e) => {
                log::warn!("ndvm GPU: {e}; running on the CPU");
                Ok(Executor::Cpu { fallback: Some(e) })
            }
        },
    }
}

/// Resolves `choice` against the process-wide context ([`GpuContext::shared`]).
pub fn select(choice: DeviceChoice) -> Result<Executor, GpuError> {
    resolve(choice, GpuContext::shared)
}
