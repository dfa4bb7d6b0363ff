//! `replay all DIR` spreads the traces over a thread pool (rayon); what it prints and writes must
//! not depend on how many threads there are.

use crate::common::root;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `sim-host replay all fixtures ARGS` on `threads` threads: exit code and standard output.
fn replay_all(threads: usize, args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_sim-host"))
        .args(["replay", "all", "fixtures"])
        .args(args)
        .env("RAYON_NUM_THREADS", threads.to_string())
        .current_dir(root())
        .output()
        .expect("run sim-host");
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), String::from_utf8(o.stdout).unwrap())
}

/// Every file under `dir`, by relative path, with its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                v.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    v.sort();
    v
}

/// The text report's last line ends with the run's wall time, `(0.7 s)`: the one part that may
/// differ between two runs.
fn without_wall_time(text: &str) -> String {
    let (body, last) = text.trim_end().rsplit_once('\n').unwrap();
    let (count, time) = last.rsplit_once(" (").unwrap();
    assert!(time.ends_with(" s)"), "{last}");
    format!("{body}\n{count}")
}

/// The JSON report, the `--out` files and the text report of a parallel run are byte for byte
/// those of a serial one (one thread) on the shipped fixtures.
#[test]
fn replay_all_output_does_not_depend_on_the_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let (serial_dir, parallel_dir) = (tmp.path().join("serial"), tmp.path().join("parallel"));
    let out = |d: &Path| ["--json", "--out", d.to_str().unwrap()].map(String::from);
    let args = out(&serial_dir);
    let (code, serial_json) = replay_all(1, &args.each_ref().map(String::as_str));
    assert_eq!(code, Some(0));
    let args = out(&parallel_dir);
    let (code, parallel_json) = replay_all(4, &args.each_ref().map(String::as_str));
    assert_eq!(code, Some(0));
    assert_eq!(serial_json, parallel_json);
    let (serial, parallel) = (files(&serial_dir), files(&parallel_dir));
    assert!(serial.len() >= 30, "{} --out files", serial.len());
    assert_eq!(
        serial.iter().map(|f| &f.0).collect::<Vec<_>>(),
        parallel.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((name, a), (_, b)) in serial.iter().zip(&parallel) {
        assert!(a == b, "{} differs", name.display());
    }
    let (_, serial_text) = replay_all(1, &[]);
    let (_, parallel_text) = replay_all(4, &[]);
    assert_eq!(
        without_wall_time(&serial_text),
        without_wall_time(&parallel_text)
    );
}
