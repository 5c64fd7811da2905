//! The `ndvm` subcommands.

pub mod bench_cmd;
pub mod calibrate;
pub mod cosearch;
pub mod devices;
pub mod export;
pub mod fuzz;
pub mod inputs;
pub mod ode;
pub mod output;
pub mod report;
pub mod run;
pub mod search;
pub mod table;
mod targets;
pub mod vm;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A thread that sets a flag at an instant, unless dropped first.
pub struct Alarm {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Alarm {
    /// Sets `flag` at `until`.
    pub fn at(until: Instant, flag: Arc<AtomicBool>) -> Alarm {
        let done = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&done);
        let thread = std::thread::spawn(move || {
            while !seen.load(Ordering::Relaxed) {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    flag.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::sleep(left.min(Duration::from_millis(20)));
            }
        });
        Alarm {
            done,
            thread: Some(thread),
        }
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sets `flag` at the first Ctrl-C or SIGTERM (`timeout`, batch schedulers and
/// `docker stop` send it); a second one ends the process at once. `also` are set too (they do
/// not decide what a second signal does).
pub fn stop_on_signals(flag: &Arc<AtomicBool>, also: &[&Arc<AtomicBool>]) {
    for (signal, code) in [
        (signal_hook::consts::SIGINT, 130),
        (signal_hook::consts::SIGTERM, 143),
    ] {
        let _ = signal_hook::flag::register_conditional_shutdown(signal, code, Arc::clone(flag));
        let _ = signal_hook::flag::register(signal, Arc::clone(flag));
        for f in also {
            let _ = signal_hook::flag::register(signal, Arc::clone(f));
        }
    }
}
