//! Failpoints: named places in the write paths where a test makes one I/O call fail, one
//! call at a time, as SQLite's test suite does (TiKV's `fail` crate serves the same purpose;
//! this is the few lines of it that the core needs, with a per-thread switch so that
//! `cargo test`'s parallel tests never trip each other's).
//!
//! Without the `failpoints` feature, which release builds never have, `hit` is an empty
//! inline function. With it, a test arms one point (`arm("write.rename", 0)`) and the next
//! call at that point on the same thread fails with EIO; a process (the command line) can
//! be armed from outside with `PI_SESSION_NATIVE_FAILPOINT=name[:skip]`.

use std::io;

/// Every failpoint of the core, by the call it stands for (`syscall.place`). The matrix in
/// `faults::tests` fails each in turn.
pub const POINTS: &[&str] = &[
    "append.open",
    "append.write",
    "append.fsync",
    "append.stat",
    "append.ftruncate",
    "write.open",
    "write.write",
    "write.fsync",
    "write.rename",
    "write.link",
    "write.unlink",
];

/// Fails with EIO when `name` is armed on this thread (and its skips are used up).
#[inline]
pub fn hit(name: &'static str) -> io::Result<()> {
    #[cfg(feature = "failpoints")]
    {
        armed::check(name)
    }
    #[cfg(not(feature = "failpoints"))]
    {
        let _ = name;
        Ok(())
    }
}

#[cfg(feature = "failpoints")]
pub use armed::{arm, disarm, fired};

#[cfg(all(test, feature = "failpoints"))]
mod matrix;

#[cfg(feature = "failpoints")]
mod armed {
    use std::cell::RefCell;
    use std::io;

    #[derive(Default)]
    struct Armed {
        /// The point armed, and how many of its calls pass before one fails.
        point: Option<(String, u32)>,
        /// Whether it has failed a call since it was armed.
        fired: bool,
        /// Read from the environment once.
        from_env: bool,
    }

    thread_local! {
        static ARMED: RefCell<Armed> = RefCell::new(Armed::default());
    }

    /// Arms `name` on this thread: the call after `skip` passing ones fails, once.
    pub fn arm(name: &str, skip: u32) {
        ARMED.with(|a| {
            let mut a = a.borrow_mut();
            a.point = Some((name.to_string(), skip));
            a.fired = false;
            a.from_env = true;
        });
    }

    /// Disarms this thread's point; whether it fired.
    pub fn disarm() -> bool {
        ARMED.with(|a| {
            let mut a = a.borrow_mut();
            a.point = None;
            std::mem::take(&mut a.fired)
        })
    }

    /// Whether the armed point has failed a call.
    pub fn fired() -> bool {
        ARMED.with(|a| a.borrow().fired)
    }

    pub fn check(name: &'static str) -> io::Result<()> {
        ARMED.with(|a| {
            let mut a = a.borrow_mut();
            if !a.from_env {
                a.from_env = true;
                if let Ok(v) = std::env::var("PI_SESSION_NATIVE_FAILPOINT") {
                    let (n, skip) = v.split_once(':').map_or((v.as_str(), 0), |(n, s)| (n, s.parse().unwrap_or(0)));
                    a.point = Some((n.to_string(), skip));
                }
            }
            let Some((point, skip)) = a.point.as_mut() else { return Ok(()) };
            if point != name {
                return Ok(());
            }
            if *skip > 0 {
                *skip -= 1;
                return Ok(());
            }
            a.point = None;
            a.fired = true;
            Err(io::Error::from_raw_os_error(crate::platform::RAW_EIO))
        })
    }
}
