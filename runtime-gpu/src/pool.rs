//! Pooled buffers: a buffer handed back is kept, by kind and size class, for the next request.
//!
//! Sizes are rounded up to a power of two (at least 256 bytes) so that requests of nearby sizes
//! share buffers; a request whose rounded size would exceed the device's `max_buffer_size` gets
//! its exact size, and one over the limit is a clear [`GpuError::BufferTooLarge`].

use crate::context::GpuContext;
use crate::error::GpuError;
use std::collections::HashMap;
use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Buffers kept per (kind, size class).
const KEEP_PER_CLASS: usize = 4;

/// What a pooled buffer is for; each kind has fixed usages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum BufferKind {
    /// Read or written by kernels; filled by `write_buffer`; copied out.
    Storage,
    /// Kernel parameters.
    Uniform,
    /// Host-visible staging for reads back.
    Readback,
}

impl BufferKind {
    fn usage(self) -> wgpu::BufferUsages {
        use wgpu::BufferUsages as U;
        match self {
            BufferKind::Storage => U::STORAGE | U::COPY_DST | U::COPY_SRC,
            BufferKind::Uniform => U::UNIFORM | U::COPY_DST,
            BufferKind::Readback => U::MAP_READ | U::COPY_DST,
        }
    }

    fn name(self) -> &'static str {
        match self {
            BufferKind::Storage => "storage",
            BufferKind::Uniform => "uniform",
            BufferKind::Readback => "readback",
        }
    }
}

/// Counters of the pool, for tests and `ndvm devices`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Buffers created.
    pub created: usize,
    /// Requests served by a buffer handed back earlier.
    pub reused: usize,
}

/// The free buffers of a context.
#[derive(Default)]
pub(crate) struct BufferPool {
    free: Mutex<HashMap<(BufferKind, u64), Vec<wgpu::Buffer>>>,
    created: AtomicUsize,
    reused: AtomicUsize,
}

/// A buffer on loan from the pool; it goes back when dropped (unless discarded).
pub(crate) struct Pooled<'a> {
    pool: &'a BufferPool,
    kind: BufferKind,
    size: u64,
    label: String,
    buffer: Option<wgpu::Buffer>,
}

impl BufferPool {
    pub(crate) fn stats(&self) -> PoolStats {
        PoolStats {
            created: self.created.load(Ordering::Relaxed),
            reused: self.reused.load(Ordering::Relaxed),
        }
    }

    /// A buffer of `kind` holding at least `bytes` bytes.
    pub(crate) fn take<'a>(
        &'a self,
        ctx: &GpuContext,
        kind: BufferKind,
        bytes: u64,
    ) -> Result<Pooled<'a>, GpuError> {
        let limit = ctx.limits().max_buffer_size;
        let label = format!("ndvm.pool.{}", kind.name());
        if bytes > limit {
            return Err(GpuError::BufferTooLarge {
                label,
                bytes,
                limit,
                which: "max_buffer_size",
            });
        }
        let rounded = bytes.max(256).next_power_of_two();
        let size = if rounded <= limit {
            rounded
        } else {
            bytes.div_ceil(256) * 256
        }
        .min(limit);
        let label = format!("{label}.{size}");
        let recycled = self
            .free
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(&(kind, size))
            .and_then(Vec::pop);
        let buffer = match recycled {
            Some(b) => {
                self.reused.fetch_add(1, Ordering::Relaxed);
                b
            }
            None => {
                let b = ctx.scoped("creating a buffer", || {
                    ctx.device().create_buffer(&wgpu::BufferDescriptor {
                        label: Some(&label),
                        size,
                        usage: kind.usage(),
                        mapped_at_creation: false,
                    })
                })?;
                self.created.fetch_add(1, Ordering::Relaxed);
                b
            }
        };
        Ok(Pooled {
            pool: self,
            kind,
            size,
            label,
            buffer: Some(buffer),
        })
    }
}

impl Pooled<'_> {
    /// The label the buffer was created with.
    pub(crate) fn label(&self) -> &str {
        &self.label
    }

    /// Drops the buffer instead of returning it (after a failed map, its state is unknown).
    pub(crate) fn discard(mut self) {
        self.buffer = None;
    }
}

impl Deref for Pooled<'_> {
    type Target = wgpu::Buffer;
    fn deref(&self) -> &wgpu::Buffer {
        self.buffer
            .as_ref()
            .expect("a pooled buffer is present until dropped")
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(buffer) = self.buffer.take() {
            let mut free = self.pool.free.lock().unwrap_or_else(|p| p.into_inner());
            let class = free.entry((self.kind, self.size)).or_default();
            if class.len() < KEEP_PER_CLASS {
                class.push(buffer);
            }
        }
    }
}
