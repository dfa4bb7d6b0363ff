//! Host replay throughput, two tables.
//!
//! 1. Each side alone: events per second for each algorithm, the fixed-point crate against the
//!    f64 reference, over the shipped fixtures, through sim-host's public API (trace reader,
//!    parameter builders, references) exactly as `sim-host replay` feeds them; each side replays
//!    the whole pre-parsed event list, so parsing and I/O are excluded.
//! 2. End to end on one core: `sim-host replay KIND FILE` as the command line runs it (open,
//!    read, parse, both sides, statistics, the judged summary; no `--out` or `--plot`), per kind
//!    over its shipped CSV fixtures, and over large generated traces: the NIC-like TIMELY trace
//!    of 5 M events (`--example timely_nic_trace 5000000 100e9 7`) and an HPCC trace of 302 k
//!    ACKs recorded by the simulator (`hpcc_long_short` run for 27.5 ms), both written to a
//!    temporary directory first; free mode, and forced mode on the large traces.
//!
//! `cargo bench -p sim-host --bench replay` (best of 5 passes) or
//! `cargo bench -p sim-host --bench replay -- --quick` (a few events, one pass, small stand-ins
//! for the large traces). `cargo test` runs it too (`test = true` in sim-host's Cargo.toml), in
//! the quick mode, since it then gets no `--bench` argument: that is how CI checks that it builds
//! and runs, in the test build it already has; it never fails on a number. Prints
//! markdown tables. Plain `Instant` timing (no bench framework); `black_box` keeps results
//! alive.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cats_conductor::{Conductor, Decision, Descriptor};
use cc_replay::cats::reference::{RefConductor, RefDecision};
use cc_replay::cats::{Event as CatsEvent, Row as CatsRow};
use cc_replay::kinds::Kind;
use cc_replay::opts::{Mode, ReplayOpts};
use cc_trace::{TraceReader, merged_params};
use timely_cc::{Completion, State};

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(kind);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "csv"));
    v.sort();
    v
}

/// Best (shortest) of `passes` runs of `f`, which returns the number of events it handled.
fn time(passes: usize, mut f: impl FnMut() -> u64) -> (u64, Duration) {
    let mut best = Duration::MAX;
    let mut n = 0;
    for _ in 0..passes {
        let t = Instant::now();
        n = f();
        best = best.min(t.elapsed());
    }
    (n, best)
}

fn row(kind: &str, side: &str, n: u64, d: Duration) {
    let eps = n as f64 / d.as_secs_f64().max(1e-9);
    println!(
        "| {kind} | {side} | {n} | {:.2} | {:.1} |",
        d.as_secs_f64() * 1e3,
        eps / 1e6
    );
}

fn timely(limit: usize, passes: usize) {
    type Sides = (timely_cc::Config, cc_replay::timely::reference::RefParams);
    let mut traces: Vec<(Sides, Vec<cc_replay::timely::Row>)> = Vec::new();
    for p in fixtures("timely") {
        let mut r = TraceReader::open(&p).expect("open");
        r.expect_header(cc_replay::timely::HEADER).expect("header");
        let both =
            cc_replay::timely::params::build(&p, &merged_params(r.params(), &[])).expect("params");
        let mut rows = Vec::new();
        while let Some(x) = r.next_row::<cc_replay::timely::Row>() {
            rows.push(x.expect("row").1);
            if rows.len() >= limit {
                break;
            }
        }
        traces.push(((both.cfg, both.reference), rows));
    }
    let (n, d) = time(passes, || {
        let mut n = 0;
        for ((cfg, _), rows) in &traces {
            let mut st = State::new(cfg);
            for r in rows {
                black_box(
                    st.on_completion(cfg, &Completion::new(r.t_send_ns, r.t_complete_ns, r.bytes)),
                );
                n += 1;
            }
        }
        n
    });
    row("TIMELY", "fixed (timely-cc)", n, d);
    let (n, d) = time(passes, || {
        let mut n = 0;
        for ((_, p), rows) in &traces {
            let mut st = cc_replay::timely::reference::RefState::new(p);
            for r in rows {
                black_box(st.on_completion(p, r.t_send_ns, r.t_complete_ns, r.bytes, None));
                n += 1;
            }
        }
        n
    });
    row("TIMELY", "f64 reference", n, d);
}

fn hpcc(limit: usize, passes: usize) {
    use cc_replay::hpcc::{Setup, reference::RefState};
    // One event is one ACK with its INT block, already decoded from hex (as on the wire).
    // (ack_seq, snd_nxt, INT bytes) per ACK.
    type Acks = Vec<(u32, u32, Vec<u8>)>;
    let mut traces: Vec<(Setup, Acks)> = Vec::new();
    for p in fixtures("hpcc") {
        let mut r = TraceReader::open(&p).expect("open");
        r.expect_header(cc_replay::hpcc::HEADER).expect("header");
        let su = Setup::from_params(&merged_params(r.params(), &[])).expect("params");
        let mut acks = Vec::new();
        while let Some(x) = r.next_row::<cc_replay::hpcc::Row>() {
            let (line, x) = x.expect("row");
            let int = x.int_bytes(&p, line).expect("hex");
            acks.push((x.ack_seq, x.snd_nxt, int));
            if acks.len() >= limit {
                break;
            }
        }
        traces.push((su, acks));
    }
    let (n, d) = time(passes, || {
        let mut n = 0;
        for (su, acks) in &traces {
            let mut st: hpcc_cc::State = hpcc_cc::State::new(&su.cfg);
            for (a, s, int) in acks {
                black_box(st.on_ack(&su.cfg, *a, *s, int));
                n += 1;
            }
        }
        n
    });
    row("HPCC", "fixed (hpcc-cc)", n, d);
    let (n, d) = time(passes, || {
        let mut n = 0;
        for (su, acks) in &traces {
            let mut st = RefState::new(su.refp);
            for (a, s, int) in acks {
                black_box(st.on_ack(u64::from(*a), u64::from(*s), int));
                n += 1;
            }
        }
        n
    });
    row("HPCC", "f64 reference", n, d);
}

fn cats(limit: usize, passes: usize) {
    let mut traces = Vec::new();
    for p in fixtures("cats") {
        let mut r = TraceReader::open(&p).expect("open");
        r.expect_header(cc_replay::cats::HEADER).expect("header");
        let su = cc_replay::cats::setup(&p, &merged_params(r.params(), &[])).expect("setup");
        let mut ev = Vec::new();
        while let Some(x) = r.next_row::<CatsRow>() {
            let (line, x) = x.expect("row");
            ev.push(x.event(&p, line).expect("event"));
            if ev.len() >= limit {
                break;
            }
        }
        traces.push((su, ev));
    }
    // One "event" is one trace row: the event's own effect, then the decisions the CATS event
    // rule (`Event::feed`, as sim-host replays them) triggers.
    let (n, d) = time(passes, || {
        let mut n = 0;
        for (su, ev) in &traces {
            let mut c: Box<Conductor<{ cc_replay::cats::QUEUE_CAPACITY }>> = Box::default();
            let mut space = su.snd_buf_bytes;
            let s = |space: u64| u32::try_from(space).unwrap_or(u32::MAX);
            for (h, e) in ev.iter().enumerate() {
                if let CatsEvent::Enqueue { prio, len_bytes } = *e {
                    let _ = c.enqueue(
                        prio,
                        Descriptor {
                            handle: h as u32,
                            len_bytes,
                        },
                    );
                }
                space += e.freed_bytes();
                let _ = e.feed(|| {
                    Ok::<bool, ()>(match black_box(c.next_chunk(&su.cfg, s(space))) {
                        Decision::Send { chunk, .. } => {
                            space -= u64::from(chunk.len_bytes);
                            true
                        }
                        _ => false,
                    })
                });
                n += 1;
            }
        }
        n
    });
    row("CATS", "fixed (cats-conductor)", n, d);
    let (n, d) = time(passes, || {
        let mut n = 0;
        for (su, ev) in &traces {
            let mut c = RefConductor::new(su.params.clone());
            let mut space = su.snd_buf_bytes;
            for e in ev {
                if let CatsEvent::Enqueue { prio, len_bytes } = *e {
                    c.enqueue(prio.index(), u64::from(len_bytes));
                }
                space += e.freed_bytes();
                let _ = e.feed(|| {
                    Ok::<bool, ()>(match black_box(c.next(space)) {
                        RefDecision::Send { bytes, .. } => {
                            space -= bytes;
                            true
                        }
                        _ => false,
                    })
                });
                n += 1;
            }
        }
        n
    });
    row("CATS", "f64 reference", n, d);
}

/// One row of the end-to-end table: `files` replayed one after the other as `kind` in `mode`,
/// best of `passes`; events as the summaries count them, bytes as the files' sizes.
fn end_to_end(kind: &str, what: &str, files: &[PathBuf], mode: Mode, passes: usize) {
    let k = Kind::named(kind).expect("a registered kind");
    let opts = ReplayOpts {
        mode,
        ..ReplayOpts::default()
    };
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).expect("trace").len())
        .sum();
    let (events, d) = time(passes, || {
        let mut n = 0;
        for f in files {
            let sums = black_box(k.replay(f, &opts).expect("replay"));
            n += sums.iter().map(|s| s.events).sum::<u64>();
        }
        n
    });
    let secs = d.as_secs_f64().max(1e-9);
    println!(
        "| {} | {what} | {} | {events} | {:.1} | {:.0} | {:.2} | {:.0} |",
        k.title(),
        mode.name(),
        bytes as f64 / 1e6,
        secs * 1e3,
        events as f64 / secs / 1e6,
        bytes as f64 / secs / 1e6,
    );
}

/// The NIC-like TIMELY trace of `events` completions, as `--example timely_nic_trace EVENTS
/// 100e9 7` writes it.
fn nic_trace(path: &Path, events: usize) {
    use cc_replay::timely::generate::{NicKnobs, NicTrace};
    use std::io::Write as _;
    let line = 100_000_000_000;
    let k = NicKnobs::mixed(line);
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let about = format!(
        "NIC-like TIMELY trace: {events} completions at {line} b/s, seed 7 (NicKnobs::mixed)"
    );
    w.write_all(NicTrace::preamble(&k, &[&about]).as_bytes())
        .expect("write");
    for (s, c, b) in NicTrace::new(k, 7).take(events) {
        writeln!(w, "{s},{c},{b}").expect("write");
    }
    w.flush().expect("write");
}

/// The flow-0 trace `sim-host sim --record` writes for `hpcc_long_short` run for `duration_ns`.
fn recorded_hpcc(dir: &Path, duration_ns: u64) -> PathBuf {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/scenarios/hpcc_long_short.toml");
    let mut l = cc_netsim::scenario::load(&file).expect("scenario");
    l.sc.duration_ns = duration_ns;
    l.sc.output.record_flows = Some(vec![0]);
    let o = cc_netsim::SimOpts {
        record: Some(dir.to_path_buf()),
        ..Default::default()
    };
    sim_host::sim::run_loaded(&l, &o).expect("simulation");
    dir.join("hpcc_long_short_flow0.csv")
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test` does not (quick mode, as a smoke test).
    let quick =
        std::env::args().any(|a| a == "--quick") || !std::env::args().any(|a| a == "--bench");
    let (limit, passes) = if quick { (64, 1) } else { (usize::MAX, 5) };
    println!(
        "| algorithm | side | events | best time (ms) | M events/s |\n|---|---|---:|---:|---:|"
    );
    timely(limit, passes);
    hpcc(limit, passes);
    cats(limit, passes);

    // End to end. The large traces: full size, or small stand-ins with --quick.
    let (nic_events, sim_ns, big_passes) = if quick {
        (20_000, 1_000_000, 1)
    } else {
        (5_000_000, 27_500_000, 5)
    };
    let tmp = std::env::temp_dir().join(format!("sim-host-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temporary directory");
    let nic = tmp.join("nic.csv");
    nic_trace(&nic, nic_events);
    let rec = recorded_hpcc(&tmp, sim_ns);
    println!(
        "\n| kind | trace | mode | events | MB | best time (ms) | M events/s | MB/s |\n\
         |---|---|---|---:|---:|---:|---:|---:|"
    );
    for kind in ["timely", "hpcc", "cats", "pacer"] {
        end_to_end(
            kind,
            "shipped fixtures",
            &fixtures(kind),
            Mode::Free,
            passes,
        );
    }
    let nic_what = format!("NIC-like, `timely_nic_trace {nic_events} 100e9 7`");
    let rec_what = format!(
        "`sim --record`, hpcc_long_short for {} ms (CSV)",
        sim_ns as f64 / 1e6
    );
    // The capture `--record` writes beside the CSV: the same ACKs, with the data packets.
    let cap = rec.with_extension("pcapng");
    let cap_what = "the same run as a RoCEv2 capture (pcapng: ACKs and data packets)";
    for mode in [Mode::Free, Mode::Forced] {
        end_to_end(
            "timely",
            &nic_what,
            std::slice::from_ref(&nic),
            mode,
            big_passes,
        );
        end_to_end(
            "hpcc",
            &rec_what,
            std::slice::from_ref(&rec),
            mode,
            big_passes,
        );
        end_to_end(
            "hpcc",
            cap_what,
            std::slice::from_ref(&cap),
            mode,
            big_passes,
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
