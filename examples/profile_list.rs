//! Times the core's SessionInfo scan of a folder: `cargo run --release --example profile_list -- DIR`.
use std::sync::atomic::AtomicBool;
use std::time::Instant;

fn main() {
    let dir = std::env::args().nth(1).expect("usage: profile_list DIR");
    let names = pi_session_native::listing::jsonl_files(std::path::Path::new(&dir)).unwrap();
    let paths: Vec<String> = names.iter().map(|n| format!("{dir}/{n}")).collect();
    for _ in 0..3 {
        let t = Instant::now();
        let r = pi_session_native::listing::scan_many(&paths, &AtomicBool::new(false));
        let scan = t.elapsed();
        let t2 = Instant::now();
        let json = pi_session_native::listing::to_json(&r);
        println!("scan {:?} to_json {:?} json bytes {}", scan, t2.elapsed(), json.len());
    }
}
