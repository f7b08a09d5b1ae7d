//! pi's path rules (`paths`) for the facade, on the answers Node gave it.

use napi::bindgen_prelude::Utf16String;
use napi_derive::napi;
use pi_session_core::paths;

/// `getDefaultSessionDir`'s folder name for a cwd `path.resolve` gave (see
/// `paths::session_folder_name`); UTF-16 both ways, so a lone surrogate stays one.
#[napi]
pub fn session_folder_name(resolved_cwd: Utf16String) -> Utf16String {
    Utf16String::from(paths::session_folder_name_utf16(&resolved_cwd))
}
