//! The one error type of `runtime-gpu`.
//!
//! Every failure here is a host error (no adapter, a lost device, a buffer over a limit, a
//! driver or validation error): nothing in this crate reports an error in a user's program.

use thiserror::Error;

/// What went wrong on the GPU side. Device errors become values of this type, never panics.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GpuError {
    /// No adapter was found for the enabled backends.
    #[error("no GPU adapter found (backends: {backends}{}); install a Vulkan driver (for example Mesa's `mesa-vulkan-drivers` for the software adapter lavapipe) or run on the CPU", wanted.as_ref().map(|w| format!("; asked for a name containing `{w}`")).unwrap_or_default())]
    NoAdapter {
        /// The backends that were searched.
        backends: String,
        /// The substring of a name that was asked for, if any.
        wanted: Option<String>,
    },
    /// `NDVM_ADAPTER` (or the requested name) matched none of the adapters found.
    #[error("no GPU adapter name contains `{wanted}` (found: {found})")]
    AdapterNotFound {
        /// The substring that was asked for.
        wanted: String,
        /// The names of the adapters that were found, comma-separated.
        found: String,
    },
    /// The adapter refused to create a device.
    #[error("adapter `{adapter}` could not create a device: {message}")]
    RequestDevice {
        /// The adapter's name.
        adapter: String,
        /// The driver's message.
        message: String,
    },
    /// The device was lost (driver reset, removal, or destroyed); the context is unusable.
    #[error("GPU device lost ({reason}): {message}")]
    DeviceLost {
        /// Why, as wgpu reports it.
        reason: String,
        /// The driver's message, if any.
        message: String,
    },
    /// A buffer would exceed what the device allows in one buffer or one binding.
    #[error("buffer `{label}` needs {bytes} bytes but the device allows {limit} ({which})")]
    BufferTooLarge {
        /// The buffer's label.
        label: String,
        /// The size that was needed.
        bytes: u64,
        /// The limit it exceeds.
        limit: u64,
        /// Which limit: `max_buffer_size` or `max_storage_buffer_binding_size`.
        which: &'static str,
    },
    /// The device reported a validation error (a bug in this crate, or a limit not checked).
    #[error("GPU validation error in {during}: {message}")]
    Validation {
        /// The operation that was running.
        during: String,
        /// wgpu's message.
        message: String,
    },
    /// The device ran out of memory.
    #[error("GPU out of memory in {during}")]
    OutOfMemory {
        /// The operation that was running.
        during: String,
    },
    /// An internal driver or wgpu error.
    #[error("GPU internal error in {during}: {message}")]
    Internal {
        /// The operation that was running.
        during: String,
        /// wgpu's message.
        message: String,
    },
    /// Mapping a buffer for reading failed.
    #[error("could not map buffer `{label}` for reading: {message}")]
    Map {
        /// The buffer's label.
        label: String,
        /// Why.
        message: String,
    },
    /// Waiting for the device failed or took longer than the context allows.
    #[error("waiting for the GPU failed in {during}: {message}")]
    Wait {
        /// The operation that was running.
        during: String,
        /// wgpu's message (a timeout, or a lost device).
        message: String,
    },
    /// A request this crate cannot serve (for example a dimension over the kernel's capacity).
    #[error("unsupported request: {0}")]
    Unsupported(String),
}

impl GpuError {
    /// Converts an error caught by an error scope.
    pub(crate) fn from_scope(during: &str, e: wgpu::Error) -> Self {
        match e {
            wgpu::Error::OutOfMemory { .. } => GpuError::OutOfMemory {
                during: during.to_string(),
            },
            wgpu::Error::Validation { description, .. } => GpuError::Validation {
                during: during.to_string(),
                message: description,
            },
            wgpu::Error::Internal { description, .. } => GpuError::Internal {
                during: during.to_string(),
                message: description,
            },
        }
    }

    /// True for the errors after which falling back to the CPU is the right answer: no adapter,
    /// no device, or a lost device.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            GpuError::NoAdapter { .. }
                | GpuError::AdapterNotFound { .. }
                | GpuError::RequestDevice { .. }
                | GpuError::DeviceLost { .. }
        )
    }
}
