//! Times the core's file load (no Node): `cargo run --release --example profile_load -- FILE`.
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: profile_load FILE");
    for _ in 0..3 {
        let t = Instant::now();
        let buf = std::fs::read(&path).unwrap();
        let read = t.elapsed();
        let t2 = Instant::now();
        let (_text, lines, _) = pi_session_native::store::parse_lines(buf);
        let parse = t2.elapsed();
        let t3 = Instant::now();
        let mut tree = pi_session_native::tree::Tree::new();
        for l in lines {
            tree.push(l.sk);
        }
        println!("read {:?} parse {:?} index {:?} entries {}", read, parse, t3.elapsed(), tree.len());
    }
}
