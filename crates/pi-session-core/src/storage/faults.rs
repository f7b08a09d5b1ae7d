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

#[cfg(all(test, feature = "failpoints"))]
use armed::{arm, disarm};

#[cfg(all(test, feature = "failpoints"))]
mod matrix;

#[cfg(feature = "failpoints")]
mod armed {
    use std::cell::RefCell;
    use std::io;
    use std::sync::{Mutex, OnceLock};

    #[derive(Default)]
    struct Armed {
        /// The point armed, and how many of its calls pass before one fails.
        point: Option<(String, u32)>,
        /// Whether it has failed a call since it was armed.
        #[cfg(test)]
        fired: bool,
    }

    thread_local! {
        static ARMED: RefCell<Armed> = RefCell::new(Armed::default());
    }

    /// The point armed for the whole process by `PI_SESSION_NATIVE_FAILPOINT=name[:skip]` (a
    /// command line run by a test): fails once, on whichever thread reaches it.
    fn from_env() -> &'static Mutex<Option<(String, u32)>> {
        static ENV: OnceLock<Mutex<Option<(String, u32)>>> = OnceLock::new();
        ENV.get_or_init(|| {
            Mutex::new(std::env::var("PI_SESSION_NATIVE_FAILPOINT").ok().map(|v| match v.split_once(':') {
                Some((n, skip)) => (n.to_string(), skip.parse().unwrap_or(0)),
                None => (v, 0),
            }))
        })
    }

    /// Arms `name` on this thread (the matrix test): the call after `skip` passing ones fails, once.
    #[cfg(test)]
    pub fn arm(name: &str, skip: u32) {
        ARMED.with(|a| {
            let mut a = a.borrow_mut();
            a.point = Some((name.to_string(), skip));
            a.fired = false;
        });
    }

    /// Disarms this thread's point; whether it fired.
    #[cfg(test)]
    pub fn disarm() -> bool {
        ARMED.with(|a| {
            let mut a = a.borrow_mut();
            a.point = None;
            std::mem::take(&mut a.fired)
        })
    }

    /// Counts a call at `name` against an armed point; true when this call is the one to fail.
    fn take(point: &mut Option<(String, u32)>, name: &str) -> bool {
        match point {
            Some((p, skip)) if p == name => {
                if *skip > 0 {
                    *skip -= 1;
                    false
                } else {
                    *point = None;
                    true
                }
            }
            _ => false,
        }
    }

    pub fn check(name: &'static str) -> io::Result<()> {
        let here = ARMED.with(|a| {
            let mut a = a.borrow_mut();
            let fail = take(&mut a.point, name);
            #[cfg(test)]
            {
                a.fired |= fail;
            }
            fail
        });
        let from_env = !here && take(&mut from_env().lock().unwrap_or_else(|e| e.into_inner()), name);
        if from_env {
            // The test that armed the process reads this to know the point was reached.
            eprintln!("pi-session-native: failpoint {name} fired");
        }
        if here || from_env { Err(io::Error::from_raw_os_error(crate::storage::platform::RAW_EIO)) } else { Ok(()) }
    }
}
