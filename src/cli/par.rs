//! Parallel work over files with `std::thread::scope`, results in input order, and a
//! progress line on stderr when the work takes more than 200 ms and stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Runs `f` over `items` on `threads` threads (largest-first order is the caller's choice).
pub fn map<T: Sync, R: Send>(items: &[T], threads: usize, label: &str, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let n = items.len();
    let threads = threads.clamp(1, n.max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let alive = AtomicUsize::new(threads);
    let slots: Mutex<Vec<Option<R>>> = Mutex::new((0..n).map(|_| None).collect());
    let show = std::io::stderr().is_terminal() && !label.is_empty();
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                // Counts this worker out even if `f` panics, so the progress loop ends.
                struct Alive<'a>(&'a AtomicUsize);
                impl Drop for Alive<'_> {
                    fn drop(&mut self) {
                        self.0.fetch_sub(1, Ordering::Relaxed);
                    }
                }
                let _alive = Alive(&alive);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = f(&items[i]);
                    slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                    done.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        let mut shown = false;
        while done.load(Ordering::Relaxed) < n && alive.load(Ordering::Relaxed) > 0 {
            std::thread::sleep(Duration::from_millis(25));
            if show && start.elapsed() > Duration::from_millis(200) {
                let d = done.load(Ordering::Relaxed);
                let _ = write!(std::io::stderr(), "\r{label} {d}/{n} files…");
                shown = true;
            }
        }
        if shown {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    });
    slots.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().map(|r| r.expect("every item is processed")).collect()
}
