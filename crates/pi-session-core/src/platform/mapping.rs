//! A read-only mapping of a loaded session file, so that its large plain string values
//! (base64 images above all) can become JS strings whose bytes stay in the page cache
//! until something reads them (see `docs/performance.md`, "Images stay on disk").
//!
//! Unix only. Windows keeps copying: a mapped file there can be neither replaced nor
//! deleted, which would break every rewrite of the session while a string is alive.
//!
//! The hazard of any file mapping is another process truncating the file: a read past the
//! new end raises SIGBUS. A process-wide handler (installed with the first mapping) turns
//! such a fault inside one of our mappings into zero pages, so the string reads NUL
//! characters from there on instead of killing Node; faults anywhere else go to the handler
//! that was there before (or the default action). Rewrites by this library never touch
//! the mapped bytes: they go to a temp file renamed over the session, and the mapping keeps
//! the old inode. An in-place rewrite by another program shows through (documented).
//!
//! Pages a string's reader faulted in stay mapped, and so count in the process's RSS, until
//! unmapped: a thread drops them from every mapping every `TRIM_EVERY` (`MADV_DONTNEED`:
//! the page cache keeps them, and the next read maps them again with a minor fault). So
//! sending a context of 25 images to the model costs the process their bytes for the
//! moment it reads them, not for the rest of its life. The thread sleeps while no mapping
//! is live.

use std::fs::File;

/// A read-only shared mapping of a file's first `len` bytes; unmapped on drop.
#[derive(Debug)]
pub struct Mapping {
    #[cfg(unix)]
    ptr: *mut u8,
    len: usize,
    #[cfg(unix)]
    slot: usize,
}

// SAFETY: the mapping is read-only and owned by this value; sharing its address between
// threads is sound (no interior mutability: the zero-page repair replaces pages atomically).
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `file`, or `None` where mapping is not used (Windows, a zero
    /// length, a failed `mmap`, `PI_SESSION_NATIVE_COPY_STRINGS=1`, or too many live
    /// mappings for the fault handler's table).
    pub fn new(file: &File, len: u64) -> Option<Mapping> {
        let len = usize::try_from(len).ok().filter(|&l| l > 0)?;
        if std::env::var_os("PI_SESSION_NATIVE_COPY_STRINGS").is_some_and(|v| v == "1") {
            return None;
        }
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            sigbus::install()?;
            // SAFETY: a fresh read-only shared mapping of an open descriptor; the kernel
            // picks the address. Checked for MAP_FAILED below.
            let ptr = unsafe {
                libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0)
            };
            if ptr == libc::MAP_FAILED {
                return None;
            }
            start_trimmer();
            let mut live = sigbus::LIVE.lock().unwrap_or_else(|e| e.into_inner());
            let Some(slot) = sigbus::register(ptr as usize, len) else {
                // SAFETY: the mapping just made, not shared with anything yet.
                unsafe { libc::munmap(ptr, len) };
                return None;
            };
            *live += 1;
            sigbus::WAKE.notify_one();
            Some(Mapping { ptr: ptr.cast(), len, slot })
        }
        #[cfg(not(unix))]
        {
            let _ = (file, len);
            None
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes `off..off + len`, if mapped.
    pub fn bytes(&self, off: usize, len: usize) -> Option<&[u8]> {
        let ptr = self.at(off as u64, len)?;
        // SAFETY: `at` checked the range lies in the mapping, which lives as long as `self`
        // and is read-only (a foreign truncation turns pages into zeros, see the module docs).
        Some(unsafe { std::slice::from_raw_parts(ptr, len) })
    }

    /// Drops the whole pages of `from..to` from the process (they stay in the page cache).
    pub fn release(&self, from: usize, to: usize) {
        #[cfg(unix)]
        if let Some((start, len)) = self.pages(from, to) {
            // SAFETY: whole pages of our own live read-only shared mapping: MADV_DONTNEED
            // only unmaps them; the next read maps them again from the file.
            unsafe { libc::madvise(start, len, libc::MADV_DONTNEED) };
        }
        let _ = (from, to);
    }

    /// The whole pages of `from..to` (the last page of the mapping counts as whole).
    #[cfg(unix)]
    fn pages(&self, from: usize, to: usize) -> Option<(*mut libc::c_void, usize)> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok().filter(|&p| p > 0)?;
        let to = to.min(self.len);
        let (a, b) = (from.div_ceil(page) * page, if to == self.len { to } else { to / page * page });
        (b > a).then(|| (self.ptr.wrapping_add(a).cast(), b - a))
    }

    /// The address of byte `off`, or `None` if `off..off + len` is not mapped. The bytes
    /// stay valid while this mapping lives.
    pub fn at(&self, off: u64, len: usize) -> Option<*const u8> {
        let off = usize::try_from(off).ok()?;
        (off.checked_add(len)? <= self.len).then(|| {
            #[cfg(unix)]
            {
                self.ptr.wrapping_add(off).cast_const()
            }
            #[cfg(not(unix))]
            {
                std::ptr::null()
            }
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            // Under the trimmer's lock: it never advises an address that is being unmapped
            // (and may be mapped again by someone else).
            let mut live = sigbus::LIVE.lock().unwrap_or_else(|e| e.into_inner());
            sigbus::unregister(self.slot);
            // SAFETY: our own mapping of `len` bytes, no longer in the fault table; nothing
            // reads it any more (every string over it is gone: they hold this value).
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
            *live -= 1;
        }
    }
}

/// How often the pages read through the mappings are dropped from the process (see the
/// module docs).
#[cfg(unix)]
const TRIM_EVERY: std::time::Duration = std::time::Duration::from_millis(20);

/// Starts the thread that drops read pages from the live mappings (once).
#[cfg(unix)]
fn start_trimmer() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new().name("pi-session-trim".into()).spawn(|| {
            loop {
                // Asleep while no mapping is live (no wake-ups in a process that has none).
                let mut live = sigbus::LIVE.lock().unwrap_or_else(|e| e.into_inner());
                while *live == 0 {
                    live = sigbus::WAKE.wait(live).unwrap_or_else(|e| e.into_inner());
                }
                drop(live);
                std::thread::sleep(TRIM_EVERY);
                let _held = sigbus::LIVE.lock().unwrap_or_else(|e| e.into_inner());
                for (start, len) in sigbus::live() {
                    // SAFETY: a live mapping of ours (registered, and not unmapped while
                    // the lock is held); MADV_DONTNEED on a shared read-only file mapping
                    // only unmaps pages, which the next read maps again from the file.
                    unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
                }
            }
        });
    });
}

/// The SIGBUS safety net: a fixed table of live mappings (read by the handler without
/// locks) and the handler that repairs faults inside them with zero pages.
#[cfg(unix)]
mod sigbus {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Live mappings at most (each loaded session file holds one while its strings live).
    const SLOTS: usize = 4096;
    /// The number of live mappings, held while a mapping is registered or unregistered and
    /// unmapped, and while the trimmer advises them (the fault handler reads the table
    /// without it).
    pub static LIVE: std::sync::Mutex<usize> = std::sync::Mutex::new(0);
    /// Wakes the trimmer when a mapping is registered.
    pub static WAKE: std::sync::Condvar = std::sync::Condvar::new();
    static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
    static LENS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
    /// The disposition before ours, for faults that are not ours.
    static PREVIOUS: OnceLock<Option<libc::sigaction>> = OnceLock::new();

    /// Installs the handler once; `None` if that failed (then nothing is mapped).
    pub fn install() -> Option<()> {
        let previous = PREVIOUS.get_or_init(|| {
            // SAFETY: sigaction with a zeroed struct filled as POSIX asks; `previous`
            // receives the old disposition.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = handler as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
                libc::sigemptyset(&mut action.sa_mask);
                let mut previous: libc::sigaction = std::mem::zeroed();
                (libc::sigaction(libc::SIGBUS, &action, &mut previous) == 0).then_some(previous)
            }
        });
        previous.map(|_| ())
    }

    /// Records a live mapping; `None` when the table is full.
    pub fn register(start: usize, len: usize) -> Option<usize> {
        for slot in 0..SLOTS {
            if STARTS[slot].compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                LENS[slot].store(len, Ordering::Release);
                STARTS[slot].store(start, Ordering::Release);
                return Some(slot);
            }
        }
        None
    }

    pub fn unregister(slot: usize) {
        LENS[slot].store(0, Ordering::Release);
        STARTS[slot].store(0, Ordering::Release);
    }

    /// Every registered mapping: `(start, len)`.
    pub fn live() -> impl Iterator<Item = (usize, usize)> {
        (0..SLOTS).filter_map(|slot| {
            let start = STARTS[slot].load(Ordering::Acquire);
            (start != 0 && start != usize::MAX).then(|| (start, LENS[slot].load(Ordering::Acquire)))
        })
    }

    /// The mapping that holds `addr`: `(start, len)`.
    fn find(addr: usize) -> Option<(usize, usize)> {
        (0..SLOTS).find_map(|slot| {
            let start = STARTS[slot].load(Ordering::Acquire);
            let len = LENS[slot].load(Ordering::Acquire);
            (start != 0 && start != usize::MAX && addr >= start && addr - start < len).then_some((start, len))
        })
    }

    extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
        let addr = unsafe { (*info).si_addr() } as usize;
        if let Some((start, len)) = find(addr) {
            // SAFETY: sysconf is async-signal-safe.
            let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
            let from = addr & !(page - 1);
            let end = start + len;
            // SAFETY: replaces the rest of our own read-only mapping (past the file's new
            // end) with zero pages; `mmap` is a plain system call. The faulting read then
            // succeeds and reads zeros.
            let done = unsafe {
                libc::mmap(
                    from as *mut libc::c_void,
                    end - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if done != libc::MAP_FAILED {
                return;
            }
        }
        // Not ours: whatever was there before.
        match PREVIOUS.get().copied().flatten() {
            Some(previous) if previous.sa_sigaction != libc::SIG_DFL && previous.sa_sigaction != libc::SIG_IGN => {
                if previous.sa_flags & libc::SA_SIGINFO != 0 {
                    // SAFETY: the previous handler was installed with SA_SIGINFO, so it has
                    // this signature.
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        unsafe { std::mem::transmute(previous.sa_sigaction) };
                    f(sig, info, context);
                } else {
                    // SAFETY: a plain handler, installed without SA_SIGINFO.
                    let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(previous.sa_sigaction) };
                    f(sig);
                }
            }
            _ => {
                // The default action: put it back and return, so the fault repeats and
                // ends the process as it would have without us.
                // SAFETY: sigaction and signal are async-signal-safe.
                unsafe {
                    libc::signal(libc::SIGBUS, libc::SIG_DFL);
                }
            }
        }
    }
}
