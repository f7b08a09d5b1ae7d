//! Times `linesAsciiPieces` without Node: the thread that reads the lines, takes long
//! strings out and decodes them, and escapes the rest to ASCII, in 1 MiB pieces.
//! `cargo run --release -p pi-session-core --example profile_pieces -- FILE [ROUNDS]`.
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: profile_pieces FILE [ROUNDS]");
    let rounds: usize = args.next().map_or(15, |r| r.parse().expect("ROUNDS is a number"));
    let loaded = pi_session_core::store::load(std::path::Path::new(&path)).expect("load");
    let pi_session_core::store::Loaded::Session { skeletons, store, .. } = loaded else { panic!("not a session") };
    let all: Vec<u32> = (0..skeletons.len() as u32).collect();
    let mut times = Vec::new();
    let (mut text, mut strings) = (0, 0);
    for _ in 0..rounds {
        let t = Instant::now();
        let pieces = store.ascii_pieces(&all, 1 << 20).expect("pieces");
        while let Some(piece) = pieces.next_piece().expect("read") {
            text = piece.text.len();
            strings = piece.ex.latin1.len() + 2 * piece.ex.utf16.len();
            pieces.recycle(piece);
        }
        times.push(t.elapsed());
    }
    times.sort();
    println!(
        "pieces: median {:?} min {:?} (last piece: {text} B text, {strings} B strings)",
        times[rounds / 2],
        times[0]
    );
}
