fn main() {
    // On `*-windows-gnu`, napi-build links `-lnode` against a `libnode.dll` on LIBNODE_PATH. Our
    // mingw build (scripts/win32.mjs) points it at an empty stub DLL: napi's `dyn-symbols`
    // (Cargo.toml) looks every N-API function up in the host `node.exe` at load time, as an
    // MSVC build does, so nothing is imported from it.
    println!("cargo::rerun-if-env-changed=LIBNODE_PATH");
    napi_build::setup();
}
