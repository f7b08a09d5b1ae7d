//! Times the core's SessionInfo scan of a folder: `cargo run --release -p pi-session-core --example profile_list -- DIR`.
use std::sync::atomic::AtomicBool;
use std::time::Instant;

fn main() {
    let dir = std::env::args().nth(1).expect("usage: profile_list DIR");
    let mut paths: Vec<String> = std::fs::read_dir(&dir)
        .expect("read the directory")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".jsonl"))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    paths.sort();
    for _ in 0..3 {
        let t = Instant::now();
        let r = pi_session_core::listing::scan_many(&paths, &AtomicBool::new(false));
        let scan = t.elapsed();
        let t2 = Instant::now();
        let rows: Vec<_> = r.iter().map(pi_session_core::listing::Row::new).collect();
        println!("scan {:?} rows {:?} ({} files)", scan, t2.elapsed(), rows.len());
    }
}
