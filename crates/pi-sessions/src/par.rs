//! Parallel work over files with `std::thread::scope`. Results reach the caller in input
//! order as soon as they are ready (so output streams and memory stays bounded), and a
//! progress line goes to stderr when the work takes over 200 ms and stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

struct Shared<R> {
    slots: Vec<Option<R>>,
    done: usize,
    alive: usize,
}

/// Runs `f` over `items` on `threads` threads and calls `sink(index, result)` on the calling
/// thread in input order. `sink` returns false to stop early (remaining items are skipped).
pub fn run_ordered<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    label: &str,
    f: impl Fn(&T) -> R + Sync,
    mut sink: impl FnMut(usize, R) -> bool,
) {
    let n = items.len();
    if n == 0 {
        return;
    }
    let threads = threads.clamp(1, n);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let shared = Mutex::new(Shared { slots: (0..n).map(|_| None).collect(), done: 0, alive: threads });
    let ready = Condvar::new();
    let show = std::io::stderr().is_terminal() && !label.is_empty();
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                // Counts this worker out even if `f` panics, so the caller stops waiting.
                struct Alive<'a, R>(&'a Mutex<Shared<R>>, &'a Condvar);
                impl<R> Drop for Alive<'_, R> {
                    fn drop(&mut self) {
                        self.0.lock().unwrap_or_else(|e| e.into_inner()).alive -= 1;
                        self.1.notify_all();
                    }
                }
                let _alive = Alive(&shared, &ready);
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = f(&items[i]);
                    let mut g = shared.lock().unwrap_or_else(|e| e.into_inner());
                    g.slots[i] = Some(r);
                    g.done += 1;
                    drop(g);
                    ready.notify_all();
                }
            });
        }
        let mut emitted = 0;
        let mut shown = false;
        let mut g = shared.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            // Hand over the finished prefix, without holding the lock during `sink`.
            let mut batch = Vec::new();
            while emitted < n {
                match g.slots[emitted].take() {
                    Some(r) => {
                        batch.push((emitted, r));
                        emitted += 1;
                    }
                    None => break,
                }
            }
            if !batch.is_empty() {
                drop(g);
                for (i, r) in batch {
                    if !stop.load(Ordering::Relaxed) && !sink(i, r) {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
                g = shared.lock().unwrap_or_else(|e| e.into_inner());
                continue;
            }
            if emitted == n || stop.load(Ordering::Relaxed) || g.alive == 0 {
                break;
            }
            let (guard, _) = ready.wait_timeout(g, Duration::from_millis(100)).unwrap_or_else(|e| e.into_inner());
            g = guard;
            if show && start.elapsed() > Duration::from_millis(200) {
                let _ = write!(std::io::stderr(), "\r{label} {}/{n} files…", g.done);
                shown = true;
            }
        }
        drop(g);
        if shown {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    });
}

/// `run_ordered` collecting every result.
pub fn map<T: Sync, R: Send>(items: &[T], threads: usize, label: &str, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let mut out = Vec::with_capacity(items.len());
    run_ordered(items, threads, label, f, |_, r| {
        out.push(r);
        true
    });
    assert_eq!(out.len(), items.len(), "a worker thread failed");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_and_stoppable() {
        let items: Vec<u32> = (0..200).collect();
        let squares = map(&items, 3, "", |x| x * x);
        assert_eq!(squares, items.iter().map(|x| x * x).collect::<Vec<_>>());
        let mut seen = Vec::new();
        run_ordered(
            &items,
            2,
            "",
            |x| *x,
            |i, r| {
                assert_eq!(i as u32, r);
                seen.push(r);
                seen.len() < 10
            },
        );
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
    }
}
