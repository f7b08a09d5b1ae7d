//! A read-only mapping of a session's private snapshot (`platform::snapshot`), so that its
//! large plain string values (base64 images above all) can become JS strings whose bytes
//! stay in the page cache until something reads them (see `docs/performance.md`, "Images
//! stay on disk").
//!
//! Mapped on Unix only. Where no snapshot can be made (Windows among others) the bytes are
//! read into memory once instead (`Mapping::in_memory`) and served the same way.
//!
//! Only a snapshot is mapped, never a file another process can name: nothing can truncate
//! or rewrite the bytes under a string, so no read of a mapping can fault (no SIGBUS
//! handler: signals reach Node's handlers, or the default action, as without us).
//!
//! Pages a string's reader faulted in stay mapped, and so count in the process's RSS, until
//! unmapped: a thread drops them from every mapping (`MADV_DONTNEED`: the page cache keeps
//! them, and the next read maps them again with a minor fault). It looks every `TRIM_EVERY`
//! at the process's page-fault count (one `getrusage`) and sweeps the mappings only when
//! enough pages were faulted in since its last sweep: sending a context of 25 images to the
//! model costs the process their bytes for the moment it reads them, and a process whose
//! strings are idle costs one cheap system call per tick. The thread sleeps while no
//! mapping is live.

use std::fs::File;

/// A read-only shared mapping of a file's first `len` bytes, unmapped on drop; or the same
/// bytes read into memory (`in_memory`: where no snapshot could be made).
#[derive(Debug)]
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
    /// True when the bytes are in memory rather than mapped: `ptr..ptr + len` is then a
    /// leaked `Box<[u8]>`, freed on drop.
    heap: bool,
    /// The mapped snapshot's descriptor and what is still needed of it (`hold`, `let_go`).
    space: Option<Space>,
}

/// What of a mapped snapshot is still needed: once the session lets go of it (`let_go`),
/// every byte that no JS string holds is given back to the file system (a hole punched),
/// so a session replaced or deleted under a live string keeps only that string's bytes.
#[derive(Debug)]
#[cfg_attr(not(unix), allow(dead_code))] // only snapshots are mapped, on Unix
struct Space {
    file: File,
    state: std::sync::Mutex<SpaceState>,
}

#[derive(Debug, Default)]
struct SpaceState {
    /// `(offset, length)` of the bytes JS strings hold, with how many strings hold each.
    held: std::collections::BTreeMap<(usize, usize), u32>,
    /// The session no longer reads the snapshot: only held bytes are kept.
    let_go: bool,
}

// SAFETY: the mapping is read-only and owned by this value; sharing its address between
// threads is sound (no interior mutability).
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `file` (a private snapshot: nothing else may change its bytes),
    /// or `None` where mapping is not used (Windows, a zero length, a failed `mmap`, for
    /// example under `RLIMIT_AS`: traced once, or `PI_SESSION_NATIVE_COPY_STRINGS=1`).
    pub fn new(file: &File, len: u64) -> Option<Mapping> {
        let len = usize::try_from(len).ok().filter(|&l| l > 0)?;
        if std::env::var_os("PI_SESSION_NATIVE_COPY_STRINGS").is_some_and(|v| v == "1") {
            return None;
        }
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: a fresh read-only shared mapping of an open descriptor; the kernel
            // picks the address. Checked for MAP_FAILED below.
            let ptr = unsafe {
                libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0)
            };
            if ptr == libc::MAP_FAILED {
                let e = std::io::Error::last_os_error();
                super::trace_once("mmap", &|| format!("mmap failed ({e}): large strings are copied"));
                return None;
            }
            start_trimmer();
            let mut live = trim::LIVE.lock().unwrap_or_else(|e| e.into_inner());
            live.push((ptr as usize, len));
            trim::WAKE.notify_one();
            let space = file.try_clone().ok().map(|file| Space { file, state: Default::default() });
            Some(Mapping { ptr: ptr.cast(), len, heap: false, space })
        }
        #[cfg(not(unix))]
        {
            let _ = (file, len);
            None
        }
    }

    /// Bytes read into memory, served as a mapping's are (nothing to unmap or trim).
    pub fn in_memory(bytes: Vec<u8>) -> Mapping {
        let len = bytes.len();
        let ptr = Box::into_raw(bytes.into_boxed_slice()).cast::<u8>();
        Mapping { ptr, len, heap: true, space: None }
    }

    /// A JS string holds `off..off + len` (until `unhold`); false once the session let go
    /// (those bytes may be gone).
    pub fn hold(&self, off: usize, len: usize) -> bool {
        let Some(space) = &self.space else { return true };
        let mut state = space.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.let_go {
            return false;
        }
        *state.held.entry((off, len)).or_insert(0) += 1;
        true
    }

    /// A string that held `off..off + len` is gone; once the session let go, its bytes
    /// that no other string holds are given back.
    pub fn unhold(&self, off: usize, len: usize) {
        let Some(space) = &self.space else { return };
        let mut state = space.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = state.held.get_mut(&(off, len)) {
            *count -= 1;
            if *count == 0 {
                state.held.remove(&(off, len));
            }
        }
        if state.let_go {
            space.give_back(&state.held, off, off + len);
        }
    }

    /// The session reads the snapshot no more: every byte no string holds is given back.
    pub fn let_go(&self) {
        let Some(space) = &self.space else { return };
        let mut state = space.state.lock().unwrap_or_else(|e| e.into_inner());
        if !state.let_go {
            state.let_go = true;
            space.give_back(&state.held, 0, self.len);
        }
    }

    /// The bytes of the snapshot that take space on disk (or in RAM, on tmpfs).
    pub fn allocated(&self) -> Option<u64> {
        let file = &self.space.as_ref()?.file;
        #[cfg(unix)]
        return {
            use std::os::unix::fs::MetadataExt;
            file.metadata().ok().map(|m| m.blocks() * 512)
        };
        #[cfg(not(unix))]
        return {
            let _ = file;
            None
        };
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
        // and is read-only, of a snapshot no one else can change (see the module docs).
        Some(unsafe { std::slice::from_raw_parts(ptr, len) })
    }

    /// Drops the whole pages of `from..to` from the process (they stay in the page cache).
    pub fn release(&self, from: usize, to: usize) {
        #[cfg(unix)]
        if let Some((start, len)) = self.pages(from, to).filter(|_| !self.heap) {
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
        (off.checked_add(len)? <= self.len).then(|| self.ptr.wrapping_add(off).cast_const())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if self.heap {
            // SAFETY: `in_memory` leaked this box of `len` bytes; nothing reads it any more.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr, self.len)) });
        } else {
            #[cfg(unix)]
            self.unmap();
        }
    }
}

impl Mapping {
    /// Unmaps a mapping made by `new`.
    #[cfg(unix)]
    fn unmap(&mut self) {
        // Under the trimmer's lock: it never advises an address that is being unmapped
        // (and may be mapped again by someone else).
        let mut live = trim::LIVE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = live.iter().position(|&(start, _)| start == self.ptr as usize) {
            live.swap_remove(k);
        }
        // SAFETY: our own mapping of `len` bytes, no longer listed for the trimmer;
        // nothing reads it any more (every string over it is gone: they hold this value).
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

#[cfg_attr(not(unix), allow(dead_code))]
impl Space {
    /// Punches a hole over every byte of `from..to` outside the `held` ranges.
    fn give_back(&self, held: &std::collections::BTreeMap<(usize, usize), u32>, from: usize, to: usize) {
        let mut at = from;
        let mut gaps = Vec::new();
        for &(off, len) in held.keys() {
            let end = off + len;
            if end <= at || off >= to {
                continue;
            }
            if off > at {
                gaps.push((at, off));
            }
            at = at.max(end);
        }
        if at < to {
            gaps.push((at, to));
        }
        for (a, b) in gaps {
            super::punch_hole(&self.file, a as u64, (b - a) as u64);
        }
    }
}

/// How often the trimmer looks at the page-fault count (see the module docs).
#[cfg(unix)]
const TRIM_EVERY: std::time::Duration = std::time::Duration::from_millis(20);
/// Pages faulted in since the last sweep that make the next one (4 MiB of 4 KiB pages).
#[cfg(unix)]
const TRIM_AFTER_FAULTS: i64 = 1024;

/// The process's page faults so far (minor and major, every thread).
#[cfg(unix)]
#[allow(clippy::useless_conversion)] // `c_long` is not `i64` everywhere
fn faults() -> i64 {
    // SAFETY: getrusage fills the zeroed struct it is given.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        i64::from(usage.ru_minflt) + i64::from(usage.ru_majflt)
    }
}

/// Starts the thread that drops read pages from the live mappings (once).
#[cfg(unix)]
fn start_trimmer() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new().name("pi-session-trim".into()).spawn(|| {
            let mut swept_at = faults();
            loop {
                // Asleep while no mapping is live (no wake-ups in a process that has none).
                let mut live = trim::LIVE.lock().unwrap_or_else(|e| e.into_inner());
                while live.is_empty() {
                    live = trim::WAKE.wait(live).unwrap_or_else(|e| e.into_inner());
                }
                drop(live);
                std::thread::sleep(TRIM_EVERY);
                let now = faults();
                if now - swept_at < TRIM_AFTER_FAULTS {
                    continue;
                }
                let live = trim::LIVE.lock().unwrap_or_else(|e| e.into_inner());
                for &(start, len) in live.iter() {
                    // SAFETY: a live mapping of ours (listed, and not unmapped while the
                    // lock is held); MADV_DONTNEED on a shared read-only file mapping only
                    // unmaps pages, which the next read maps again from the file.
                    unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
                }
                drop(live);
                swept_at = faults();
            }
        });
    });
}

/// The live mappings, for the trimmer.
#[cfg(unix)]
mod trim {
    /// Every live mapping, `(start, len)`: held while one is added or removed and unmapped,
    /// and while the trimmer advises them.
    pub static LIVE: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());
    /// Wakes the trimmer when a mapping is added.
    pub static WAKE: std::sync::Condvar = std::sync::Condvar::new();
}
