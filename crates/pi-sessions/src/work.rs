//! Parallel work over files: a rayon pool of `--jobs` threads, results handed to the caller
//! in input order batch by batch (so output streams, memory stays bounded and the caller can
//! stop early), and an indicatif progress bar on stderr once the work takes over 200 ms,
//! only when stderr is a terminal.

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

/// Items per batch and thread: a batch is computed in parallel, then handed over in order.
const BATCH_PER_THREAD: usize = 4;

/// A progress bar that stays hidden for the first 200 ms and whenever stderr is no terminal.
struct Progress {
    bar: ProgressBar,
    start: Instant,
    shown: OnceLock<()>,
    on: bool,
}

impl Progress {
    fn new(label: &str, n: usize) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{msg} {pos}/{len} files…") {
            bar.set_style(style);
        }
        bar.set_message(label.to_string());
        let on = !label.is_empty() && std::io::stderr().is_terminal();
        Progress { bar, start: Instant::now(), shown: OnceLock::new(), on }
    }

    fn step(&self) {
        self.bar.inc(1);
        if self.on && self.shown.get().is_none() && self.start.elapsed() > Duration::from_millis(200) {
            self.shown.get_or_init(|| self.bar.set_draw_target(ProgressDrawTarget::stderr()));
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Runs `f` over `items` on `threads` threads and calls `sink(index, result)` on the calling
/// thread in input order. `sink` returns false to stop early (later items are skipped).
pub fn run_ordered<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    label: &str,
    f: impl Fn(&T) -> R + Sync,
    mut sink: impl FnMut(usize, R) -> bool,
) {
    if items.is_empty() {
        return;
    }
    let threads = threads.clamp(1, items.len());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a thread pool");
    let progress = Progress::new(label, items.len());
    let batch = threads * BATCH_PER_THREAD;
    let mut index = 0;
    for chunk in items.chunks(batch) {
        let results: Vec<R> = pool.install(|| {
            chunk
                .par_iter()
                .map(|item| {
                    let r = f(item);
                    progress.step();
                    r
                })
                .collect()
        });
        for r in results {
            if !sink(index, r) {
                return;
            }
            index += 1;
        }
    }
}

/// `f` over all `items` at once on `threads` threads (rayon's work stealing keeps them busy
/// when item costs differ widely, where `run_ordered`'s batches wait for their slowest item);
/// the results in input order, at the end.
pub fn map_all<T: Sync, R: Send>(items: &[T], threads: usize, label: &str, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if items.is_empty() {
        return Vec::new();
    }
    let threads = threads.clamp(1, items.len());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a thread pool");
    let progress = Progress::new(label, items.len());
    pool.install(|| {
        items
            .par_iter()
            .with_max_len(1)
            .map(|item| {
                let r = f(item);
                progress.step();
                r
            })
            .collect()
    })
}

/// `run_ordered` collecting every result.
pub fn map<T: Sync, R: Send>(items: &[T], threads: usize, label: &str, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let mut out = Vec::with_capacity(items.len());
    run_ordered(items, threads, label, f, |_, r| {
        out.push(r);
        true
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn ordered_and_stoppable() {
        let items: Vec<u32> = (0..200).collect();
        let squares = map(&items, 3, "", |x| x * x);
        assert_eq!(squares, items.iter().map(|x| x * x).collect::<Vec<_>>());
        let mut seen = Vec::new();
        let computed = AtomicUsize::new(0);
        run_ordered(
            &items,
            2,
            "",
            |x| {
                computed.fetch_add(1, Ordering::Relaxed);
                *x
            },
            |i, r| {
                assert_eq!(i as u32, r);
                seen.push(r);
                seen.len() < 10
            },
        );
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        assert!(computed.load(Ordering::Relaxed) < items.len(), "stopping skips the later batches");
    }
}
