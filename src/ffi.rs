//! What every binding file shares: the one error mapping (`guard`), and the conversions
//! that napi-rs's defaults make slower than they need to be (strings in, typed arrays and
//! strings out).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use pi_session_core::Error as CoreError;

/// Marker that tells the facade an error is a system-call failure to rebuild Node-style.
const IO_MARK: &str = "\u{0}io:";

pub fn to_napi(e: CoreError) -> napi::Error {
    match e {
        CoreError::Io { errno, syscall, path, message } => {
            let p = path.map(|p| format!("{p:?}")).unwrap_or_else(|| "null".into());
            napi::Error::from_reason(format!(
                "{IO_MARK}{{\"errno\":{errno},\"syscall\":\"{syscall}\",\"path\":{p},\"message\":{message:?}}}"
            ))
        }
        other => napi::Error::from_reason(other.to_string()),
    }
}

pub fn guard<T>(f: impl FnOnce() -> std::result::Result<T, CoreError>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(to_napi),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(napi::Error::from_reason(format!("pi-session-native internal error: {msg}")))
        }
    }
}

/// A JS string read as UTF-8: its UTF-16 units copied out (a plain copy in V8), then
/// encoded by `text::utf16_to_utf8`, several times faster than V8's `WriteUtf8` behind
/// napi-rs's `String` (which also measures the UTF-8 length first, a full extra pass).
///
/// Both buffers are reused from one call to the next (appends cross one line per call):
/// fresh ones cost an `mmap`, page faults and an `munmap` for every line of a few hundred
/// KiB (measured: 800 `munmap`s in 2,000 appends, ~9 us an append beyond `writeSync`).
pub struct Text(Vec<u8>);

/// Buffers larger than this are not kept for the next call.
const KEEP_BYTES: usize = 4 << 20;

thread_local! {
    static SPARE_UTF16: std::cell::RefCell<Vec<u16>> = const { std::cell::RefCell::new(Vec::new()) };
    static SPARE_UTF8: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Text {
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text with a newline after it.
    pub fn line(&mut self) -> &[u8] {
        self.0.push(b'\n');
        &self.0
    }
}

impl Drop for Text {
    fn drop(&mut self) {
        if self.0.capacity() <= KEEP_BYTES {
            let mut buf = std::mem::take(&mut self.0);
            buf.clear();
            SPARE_UTF8.with(|s| *s.borrow_mut() = buf);
        }
    }
}

impl TypeName for Text {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ValidateNapiValue for Text {}

impl FromNapiValue for Text {
    unsafe fn from_napi_value(env: napi::sys::napi_env, value: napi::sys::napi_value) -> Result<Self> {
        let expected = || napi::Error::new(napi::Status::StringExpected, "expected a string");
        let mut units = 0usize;
        // SAFETY: a null buffer asks only for the length (in UTF-16 units), per Node-API.
        let status = unsafe { napi::sys::napi_get_value_string_utf16(env, value, std::ptr::null_mut(), 0, &mut units) };
        if status != napi::sys::Status::napi_ok {
            return Err(expected());
        }
        let mut utf16 = SPARE_UTF16.with(|s| std::mem::take(&mut *s.borrow_mut()));
        utf16.clear();
        utf16.reserve(units + 1);
        let mut copied = 0usize;
        // SAFETY: `utf16` has room for `units + 1` units; Node writes the string and a NUL
        // and reports how many units (without the NUL) in `copied`.
        let status =
            unsafe { napi::sys::napi_get_value_string_utf16(env, value, utf16.as_mut_ptr(), units + 1, &mut copied) };
        if status != napi::sys::Status::napi_ok {
            return Err(expected());
        }
        // SAFETY: the first `copied` units were initialised by the call above.
        unsafe { utf16.set_len(copied.min(units)) };
        let mut buf = SPARE_UTF8.with(|s| std::mem::take(&mut *s.borrow_mut()));
        pi_session_core::text::utf16_to_utf8(&utf16, &mut buf);
        if utf16.capacity() * 2 <= KEEP_BYTES {
            SPARE_UTF16.with(|s| *s.borrow_mut() = utf16);
        }
        Ok(Text(buf))
    }
}

/// A typed array whose storage V8 allocates, the values copied in. napi-rs's typed arrays
/// wrap Rust memory as an external buffer with a finalizer, which costs the GC work for
/// every array: the index returns one per call (`getBranch`, context plans).
pub struct Copied<T>(pub Vec<T>);

macro_rules! copied_typed_array {
    ($t:ty, $kind:expr) => {
        impl ToNapiValue for Copied<$t> {
            unsafe fn to_napi_value(env: napi::sys::napi_env, val: Self) -> Result<napi::sys::napi_value> {
                use napi::sys;
                let len = val.0.len();
                let bytes = std::mem::size_of_val(val.0.as_slice());
                let mut data = std::ptr::null_mut();
                let mut buffer = std::ptr::null_mut();
                // SAFETY: plain Node-API calls on the current env; `data` points to `bytes`
                // writable bytes of the new ArrayBuffer when the call succeeds.
                unsafe {
                    if sys::napi_create_arraybuffer(env, bytes, &mut data, &mut buffer) != sys::Status::napi_ok {
                        return Err(napi::Error::from_reason("failed to allocate an ArrayBuffer"));
                    }
                    if bytes > 0 {
                        std::ptr::copy_nonoverlapping(val.0.as_ptr().cast::<u8>(), data.cast::<u8>(), bytes);
                    }
                    let mut out = std::ptr::null_mut();
                    if sys::napi_create_typedarray(env, $kind, len, buffer, 0, &mut out) != sys::Status::napi_ok {
                        return Err(napi::Error::from_reason("failed to create a typed array"));
                    }
                    Ok(out)
                }
            }
        }
    };
}

copied_typed_array!(u32, napi::sys::TypedarrayType::uint32_array);
copied_typed_array!(i32, napi::sys::TypedarrayType::int32_array);
copied_typed_array!(f64, napi::sys::TypedarrayType::float64_array);

pub fn pos_or_minus(p: Option<u32>) -> i32 {
    p.map_or(-1, |p| p as i32)
}

/// `Ok` when a Node-API call succeeded, else an error saying what failed.
pub fn napi_ok(status: napi::sys::napi_status, what: &str) -> Result<()> {
    if status == napi::sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_reason(format!("failed to {what}")))
    }
}

/// `null`.
///
/// # Safety
/// `env` is the current Node-API environment.
pub unsafe fn js_null(env: napi::sys::napi_env) -> Result<napi::sys::napi_value> {
    let mut out = std::ptr::null_mut();
    // SAFETY: per this function's contract.
    napi_ok(unsafe { napi::sys::napi_get_null(env, &mut out) }, "get null")?;
    Ok(out)
}

/// A JS array of `values`.
///
/// # Safety
/// `env` is the current Node-API environment; `values` are live handles in it.
pub unsafe fn js_array(env: napi::sys::napi_env, values: &[napi::sys::napi_value]) -> Result<napi::sys::napi_value> {
    let mut array = std::ptr::null_mut();
    // SAFETY: per this function's contract.
    unsafe {
        napi_ok(napi::sys::napi_create_array_with_length(env, values.len(), &mut array), "create an array")?;
        for (i, &v) in values.iter().enumerate() {
            napi_ok(napi::sys::napi_set_element(env, array, i as u32, v), "fill an array")?;
        }
    }
    Ok(array)
}

/// `node_api_create_external_string_latin1` / `_utf16` (Node-API 10; exported, as
/// experimental, since Node 18.18 and 20.4), with the string's code unit type.
type CreateExternal<T> = unsafe extern "C" fn(
    env: napi::sys::napi_env,
    units: *const T,
    length: isize,
    finalize: Option<unsafe extern "C" fn(napi::sys::napi_env, *mut std::ffi::c_void, *mut std::ffi::c_void)>,
    hint: *mut std::ffi::c_void,
    result: *mut napi::sys::napi_value,
    copied: *mut bool,
) -> napi::sys::napi_status;

/// The code units of a JS string: Latin-1 bytes or UTF-16.
pub trait JsUnit: Copy + Send + 'static {
    /// The running Node's external-string function for this unit, if it has one.
    fn create_external() -> Option<CreateExternal<Self>>;
    /// Creates a JS string from a copy of the units.
    ///
    /// # Safety
    /// `env` is current; `units` is live.
    unsafe fn create_copy(env: napi::sys::napi_env, units: &[Self], out: *mut napi::sys::napi_value) -> bool;
}

/// A Node-API function looked up at run time (not linked), so the addon still loads, and
/// copies instead, on hosts without it. `PI_SESSION_NATIVE_COPY_STRINGS=1` makes it copy
/// everywhere (a way out should a host mishandle external strings; tests use it too).
fn lookup<T>(name: &std::ffi::CStr) -> Option<CreateExternal<T>> {
    if std::env::var_os("PI_SESSION_NATIVE_COPY_STRINGS").is_some_and(|v| v == "1") {
        return None;
    }
    #[cfg(unix)]
    {
        // SAFETY: dlsym with a NUL-terminated name; the symbol, when the host exports it,
        // is the Node-API function with the signature of `CreateExternal` (the Latin-1
        // one takes `const char*`, passed the same way as `*const u8`).
        unsafe {
            let f = libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr());
            (!f.is_null()).then(|| std::mem::transmute_copy::<*mut libc::c_void, CreateExternal<T>>(&f))
        }
    }
    #[cfg(windows)]
    {
        use std::ffi::c_void;
        #[link(name = "kernel32")]
        unsafe extern "system" {
            fn GetModuleHandleW(name: *const u16) -> *mut c_void;
            fn GetProcAddress(module: *mut c_void, name: *const std::ffi::c_char) -> *mut c_void;
        }
        // SAFETY: GetModuleHandleW(NULL) is the host executable (node.exe, which exports
        // Node-API, as napi's dyn-symbols relies on); the name is NUL-terminated; the symbol,
        // when exported, has the signature of `CreateExternal`, as above.
        unsafe {
            let f = GetProcAddress(GetModuleHandleW(std::ptr::null()), name.as_ptr());
            (!f.is_null()).then(|| std::mem::transmute_copy::<*mut c_void, CreateExternal<T>>(&f))
        }
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = name;
        None
    }
}

impl JsUnit for u8 {
    fn create_external() -> Option<CreateExternal<u8>> {
        static FOUND: std::sync::OnceLock<Option<CreateExternal<u8>>> = std::sync::OnceLock::new();
        *FOUND.get_or_init(|| lookup(c"node_api_create_external_string_latin1"))
    }
    unsafe fn create_copy(env: napi::sys::napi_env, units: &[u8], out: *mut napi::sys::napi_value) -> bool {
        // SAFETY: per the trait; V8 copies the bytes before returning.
        let status =
            unsafe { napi::sys::napi_create_string_latin1(env, units.as_ptr().cast(), units.len() as isize, out) };
        status == napi::sys::Status::napi_ok
    }
}

impl JsUnit for u16 {
    fn create_external() -> Option<CreateExternal<u16>> {
        static FOUND: std::sync::OnceLock<Option<CreateExternal<u16>>> = std::sync::OnceLock::new();
        *FOUND.get_or_init(|| lookup(c"node_api_create_external_string_utf16"))
    }
    unsafe fn create_copy(env: napi::sys::napi_env, units: &[u16], out: *mut napi::sys::napi_value) -> bool {
        // SAFETY: per the trait; V8 copies the units before returning.
        let status = unsafe { napi::sys::napi_create_string_utf16(env, units.as_ptr(), units.len() as isize, out) };
        status == napi::sys::Status::napi_ok
    }
}

/// Bytes of external strings not yet finalized (a diagnostic: see `externalStringBytes`).
static EXTERNAL_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Frees (or releases, for a shared block) the units of an external string once V8 no
/// longer needs them (`hint` is the `Box<O>`). `env` may be null (the environment is
/// shutting down): unused.
unsafe extern "C" fn free_external<T, O: AsRef<[T]>>(
    _env: napi::sys::napi_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    // SAFETY: `hint` is the box `external_string` leaked for this string; Node calls this once.
    let units = unsafe { Box::from_raw(hint.cast::<O>()) };
    EXTERNAL_BYTES.fetch_sub(std::mem::size_of_val(units.as_ref().as_ref()), Ordering::Relaxed);
}

/// A shared block's units as an external string's owner (see `listing::rows::Block`): the
/// string keeps the block alive, not a copy of it.
pub struct SharedUnits<T>(pub std::sync::Arc<Vec<T>>);

impl<T> AsRef<[T]> for SharedUnits<T> {
    fn as_ref(&self) -> &[T] {
        &self.0
    }
}

/// Units that stay in a mapped session snapshot (`limits::MAPPED_MIN` in the core): the string holds the
/// mapping, which is unmapped when the last such string is collected, and its bytes
/// (`Mapping::hold`), which the snapshot keeps after the session lets go of it.
pub struct MappedUnits {
    /// Held, not read: it keeps `ptr` mapped.
    map: std::sync::Arc<pi_session_core::platform::Mapping>,
    ptr: *const u8,
    off: usize,
    len: usize,
}

impl MappedUnits {
    /// `len` bytes at `off` of `map`, if mapped (and still there).
    pub fn new(map: &std::sync::Arc<pi_session_core::platform::Mapping>, off: u64, len: usize) -> Option<MappedUnits> {
        let ptr = map.at(off, len)?;
        let off = usize::try_from(off).ok()?;
        map.hold(off, len).then(|| MappedUnits { ptr, map: map.clone(), off, len })
    }
}

impl Drop for MappedUnits {
    fn drop(&mut self) {
        self.map.unhold(self.off, self.len);
    }
}

impl AsRef<[u8]> for MappedUnits {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr..ptr + len` lies in `map` (checked by `Mapping::at`), which this
        // value keeps mapped and whose bytes it holds (no hole is punched over them); the
        // mapping is read-only.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// Bytes held by the strings handed to V8 without a copy (`linesAsciiPieces`, `InfoScanner.take`)
/// that V8 has not collected yet (for tests: they must all be freed once collected). V8
/// accounts for them itself, as external memory (`process.memoryUsage().external`).
#[napi]
pub fn external_string_bytes() -> f64 {
    EXTERNAL_BYTES.load(Ordering::Relaxed) as f64
}

/// A JS string of `units`. V8 reads them where they are when the host allows (an
/// external string: a large text costs V8 no copy, and no fresh pages to copy it to),
/// and copies them otherwise.
///
/// # Safety
/// `env` is the current Node-API environment.
pub unsafe fn external_string<T: JsUnit, O: AsRef<[T]>>(
    env: napi::sys::napi_env,
    units: O,
) -> Result<napi::sys::napi_value> {
    let mut out = std::ptr::null_mut();
    let failed = || Err(napi::Error::from_reason("failed to create a string"));
    let Some(create) = T::create_external().filter(|_| !units.as_ref().is_empty()) else {
        // SAFETY: per this function's contract.
        return if unsafe { T::create_copy(env, units.as_ref(), &mut out) } { Ok(out) } else { failed() };
    };
    let slice = units.as_ref();
    let (ptr, len, bytes) = (slice.as_ptr(), slice.len(), std::mem::size_of_val(slice));
    // Counted before: the finalizer runs at once if Node copies the units instead.
    EXTERNAL_BYTES.fetch_add(bytes, Ordering::Relaxed);
    let hint = Box::into_raw(Box::new(units));
    let mut copied = false;
    // SAFETY: `ptr..ptr + len` stays allocated (owned by `hint`) until the finalizer runs,
    // which Node calls exactly once on success, at once if it copied instead.
    let status =
        unsafe { create(env, ptr, len as isize, Some(free_external::<T, O>), hint.cast(), &mut out, &mut copied) };
    if status != napi::sys::Status::napi_ok {
        // No finalizer will run: the units are still ours.
        // SAFETY: `hint` came from `Box::into_raw` above and was not handed over.
        drop(unsafe { Box::from_raw(hint) });
        EXTERNAL_BYTES.fetch_sub(bytes, Ordering::Relaxed);
        return failed();
    }
    Ok(out)
}
