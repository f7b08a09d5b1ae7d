//! Times the core's file load (no Node): `cargo run --release -p pi-session-core --example profile_load -- FILE`.
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: profile_load FILE");
    for _ in 0..3 {
        let t = Instant::now();
        let loaded = pi_session_core::store::load(std::path::Path::new(&path)).unwrap();
        let load = t.elapsed();
        let pi_session_core::store::Loaded::Session { skeletons, .. } = loaded else { panic!("not a session") };
        let t2 = Instant::now();
        let mut tree = pi_session_core::tree::Tree::new();
        for sk in skeletons {
            tree.push(sk);
        }
        println!("load {:?} index {:?} entries {}", load, t2.elapsed(), tree.len());
    }
}
