//! `sim-host sim`: runs a scenario on the packet-level simulator (`cc-netsim`), then draws its
//! plots and prints its report; the simulator writes the files it is asked for (`--out`,
//! `--record`, `--ns3-out`) and prints nothing.

use cc_netsim::*;

pub mod slowdown;
pub mod sweep;

use cc_netsim::web::{WebFlow, WebReport, WebRun};
use cc_output::plot::{self, Panel, Series};
use cc_trace::{Param, parse_cli_set};
use std::path::Path;
use std::path::PathBuf;

/// Loads `file`, runs it and writes the outputs asked for, plots included.
pub fn run_file(file: &Path, o: &SimOpts) -> Result<(Report, engine::Sim), SimError> {
    let l = scenario::load(file).map_err(SimError::Scenario)?;
    run_loaded(&l, o)
}

/// Runs a loaded scenario and writes the outputs asked for, plots included (`--plot`).
pub fn run_loaded(l: &scenario::Loaded, o: &SimOpts) -> Result<(Report, engine::Sim), SimError> {
    run_with_bar(l, o, false)
}

/// [`run_loaded`], with a progress bar on standard error when `bar` is set and it is a terminal.
fn run_with_bar(
    l: &scenario::Loaded,
    o: &SimOpts,
    bar: bool,
) -> Result<(Report, engine::Sim), SimError> {
    use std::io::IsTerminal as _;
    let bar = (bar && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} simulating [{bar:30}] {pos}/{len} ns, {elapsed}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b
    });
    let run = cc_netsim::run_loaded(l, o, &mut |t, end| {
        if let Some(b) = &bar {
            b.set_length(end);
            b.set_position(t);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let cc_netsim::Run {
        mut report,
        sim,
        baseline,
    } = run?;
    if let Some(d) = &o.plot {
        let name = &l.sc.name;
        report.files.extend(write_plots(d, name, &sim, &report)?);
        let web_flow = sim.flows.first().and_then(|f| f.web.as_deref());
        if let (Some(w), Some(r)) = (web_flow, &report.web) {
            report.files.push(
                web_plot(d, name, &report.controller, r, w, baseline.as_deref())
                    .map_err(SimError::Other)?,
            );
        }
    }
    Ok((report, sim))
}

fn other(p: &Path, e: impl std::fmt::Display) -> SimError {
    SimError::Other(format!("{}: {e}", p.display()))
}

/// The report as text.
pub fn text(r: &Report) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let si = plot::format_si;
    let _ = writeln!(
        s,
        "{} ({}, {} controller, seed {}): {} simulated in {:.2} s, {} packet events ({}/s)",
        r.scenario,
        r.algorithm,
        r.controller,
        r.seed,
        fmt_ns(r.sim_ns as f64),
        r.wall_s,
        r.counters.packet_events,
        si(r.packet_events_per_s)
    );
    if r.switch_model == "ns3" {
        let _ = writeln!(
            s,
            "  switch model ns3: the HPCC authors' ns-3 NIC and switch (round-robin queue pairs, ns-3's packet sizes with a {} B INT header, times truncated to the ns, ECMP by its hash), ACKs in the data class, PFC at ns-3's dynamic threshold",
            cc::REGISTRY
                .iter()
                .find(|e| e.name == r.algorithm)
                .map_or(0, |e| e.ns3_int_bytes)
        );
    }
    if !r.params.is_empty() {
        let _ = writeln!(s, "  parameters in force:");
        for p in &r.params {
            let _ = writeln!(s, "    {}={} ({})", p.key, p.value, p.origin);
        }
    }
    for e in &r.ecn {
        let _ = writeln!(
            s,
            "  ECN at {}b/s egress: kmin {} B ({}), kmax {} B ({}), pmax {} ({})",
            si(e.rate_bps as f64),
            e.kmin_bytes,
            e.origin[0],
            e.kmax_bytes,
            e.origin[1],
            e.pmax,
            e.origin[2]
        );
    }
    if let Some(p) = &r.paths {
        let _ = writeln!(
            s,
            "  paths: longest base RTT {} ns, largest bandwidth-delay product {} B",
            p.longest_rtt_ns, p.largest_bdp_bytes
        );
        for c in &p.classes {
            let _ = writeln!(
                s,
                "    {:<24} {:>7} pairs, {} links: base RTT {:.2} ns (ns-3's formula {} ns), BDP {} B",
                c.name,
                c.pairs,
                c.links,
                c.base_rtt_ps as f64 / 1e3,
                c.ns3_base_rtt_ns,
                c.bdp_bytes
            );
        }
        if let (Some(t), Some(o)) = (p.t_ns, &p.t_origin) {
            let _ = writeln!(s, "    T in force: {t} ns ({o})");
        }
        if let Some(w) = &p.warning {
            let _ = writeln!(s, "  warning: {w}");
        }
    }
    let c = &r.counters;
    let _ = writeln!(
        s,
        "  packets: sent {} = delivered {} + dropped {} + in flight {}; ACKs {} (NACKs {}), timeouts {}, ECN marked {}",
        c.sent, c.delivered, c.dropped, c.in_flight, c.acks, c.nacks, c.timeouts, c.ecn_marked
    );
    if c.cnps_sent > 0 {
        let _ = writeln!(
            s,
            "  CNPs: {} sent by receivers, {} reached their sender",
            c.cnps_sent, c.cnps_received
        );
    }
    let _ = writeln!(
        s,
        "  pacer: {} ({} flows per NIC): {} segments, at most {} flows in one NIC's pacer, {} flows waited for a slot ({} µs in all), {} B handed out unused, {} rates below its slowest, {} B of other line time",
        if r.pacer == "fixed" {
            "cc-pacer"
        } else {
            "f64 reference"
        },
        r.pacer_flows,
        c.pacer_segments,
        c.pacer_max_flows,
        c.pacer_waits,
        c.pacer_wait_ns / 1000,
        c.pacer_unused_bytes,
        c.pacer_rate_floor,
        c.pacer_line_bytes
    );
    if let Some(p) = &r.pcc {
        let counters: Vec<String> = p.counters.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(
            s,
            "  DOCA PCC: probes sent {}, dropped {}, answered {}{}",
            p.probes_sent,
            p.probes_dropped,
            p.probe_responses,
            if counters.is_empty() {
                String::new()
            } else {
                format!("; adapter counters {}", counters.join(" · "))
            }
        );
    }
    if c.pfc_pauses > 0 || c.acks_dropped > 0 {
        let _ = writeln!(
            s,
            "  PFC: {} pause frames, ports paused {:.3} ms in total{}",
            c.pfc_pauses,
            c.pfc_paused_ns as f64 / 1e6,
            if c.acks_dropped > 0 {
                format!("; {} ACKs dropped at a full headroom", c.acks_dropped)
            } else {
                String::new()
            }
        );
    }
    if r.flows_sized > 0 {
        let _ = writeln!(
            s,
            "  flows: {} sized ({} finished, {} stopped, {} unfinished with {} B left), {} long; goodput {}b/s",
            r.flows_sized,
            r.flows_finished,
            r.flows_stopped,
            r.flows_unfinished,
            r.unfinished_bytes_left,
            r.flows_long,
            si(r.goodput_bps)
        );
    } else {
        let _ = writeln!(
            s,
            "  flows: {} long; goodput {}b/s",
            r.flows_long,
            si(r.goodput_bps)
        );
    }
    for g in &r.load {
        let incasts = match (g.incasts, g.fan_in) {
            (Some(n), Some(k)) => format!("; incast events: {n}, {k} senders each"),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "  load of flows[{}]: nominal {:.3}, realised {:.3} ({} flows, {} B{incasts})",
            g.group, g.nominal, g.realised, g.flows, g.bytes
        );
    }
    let q4 = |q: &Option<[u64; 4]>, f: &dyn Fn(u64) -> String| match q {
        Some(q) => format!(
            "p50 {}, p95 {}, p99 {}, max {}",
            f(q[0]),
            f(q[1]),
            f(q[2]),
            f(q[3])
        ),
        None => "none (no sample in the statistics window)".into(),
    };
    let bytes = |v: u64| format!("{v} B");
    let ns = |v: u64| fmt_ns(v as f64);
    let _ = writeln!(
        s,
        "  queue (switch egress, sampled): {}",
        q4(&r.queue_bytes, &bytes)
    );
    let _ = writeln!(
        s,
        "  queue found by arriving data packets: {}",
        q4(&r.queue_seen_bytes, &bytes)
    );
    // The series is sampled (about 600 points a run): a burst between two points is not in
    // it, so the largest queue any arriving packet found is given beside it.
    let _ = writeln!(
        s,
        "  longest queue over time (the sampled series): peak {} B at {}, down to two packets at {}{}",
        r.queue_peak.0,
        fmt_ns(r.queue_peak.1 as f64),
        r.queue_drained_ns
            .map_or("never".into(), |t| fmt_ns(t as f64)),
        r.queue_seen_bytes.map_or(String::new(), |q| format!(
            "; the largest queue an arriving data packet found: {} B",
            q[3]
        ))
    );
    let _ = writeln!(s, "  RTT (per ACK): {}", q4(&r.rtt_ns, &ns));
    if r.flows_long > 0 {
        match (r.jain, r.jain_mean_bps) {
            (Some(j), Some(m)) => {
                let _ = writeln!(
                    s,
                    "  fairness: Jain {j:.4} over {} long flows (mean {}b/s)",
                    r.jain_flows,
                    si(m)
                );
            }
            _ => {
                let _ = writeln!(
                    s,
                    "  fairness: none (no long flow delivered in the fairness window)"
                );
            }
        }
    }
    let opt = |v: Option<f64>| v.map_or("none".to_string(), |x| format!("{x:.2}"));
    if r.slowdown
        .iter()
        .any(|b| b.flows + b.unfinished + b.stopped > 0)
    {
        let _ = writeln!(
            s,
            "  FCT slowdown   flows      p50      p95      p99  unfinished (B left)  stopped{}",
            if r.ideal_fct == "ns3" {
                "   (against ns-3's standalone FCT, at least 1)"
            } else {
                ""
            }
        );
        for b in r
            .slowdown
            .iter()
            .filter(|b| b.flows + b.unfinished + b.stopped > 0)
        {
            let _ = writeln!(
                s,
                "    {:<12} {:>5} {:>8} {:>8} {:>8}  {:>10} ({}) {:>8}",
                b.bucket,
                b.flows,
                opt(b.p50),
                opt(b.p95),
                opt(b.p99),
                b.unfinished,
                b.unfinished_bytes_left,
                b.stopped
            );
        }
    }
    if let Some(w) = &r.web {
        s.push_str(&web_text(w));
    }
    if let Some(n) = &r.ns3 {
        s.push_str(&ns3::text(n));
    }
    if r.violations.is_empty() {
        let _ = writeln!(s, "  invariants: all hold");
    } else {
        let _ = writeln!(s, "  INVARIANTS VIOLATED: {}", r.violations.join("; "));
    }
    if let Some(rc) = &r.recorded {
        let rows: Vec<String> = rc
            .flows
            .iter()
            .map(|(id, n)| format!("flow {id} ({n} events)"))
            .collect();
        let _ = writeln!(s, "  recorded {}: {}", rows.join(", "), rc.chosen);
        if !rc.too_few.is_empty() {
            let _ = writeln!(
                s,
                "  warning: recorded flows {:?} have fewer than 2 events: a replay of them has nothing to compare",
                rc.too_few
            );
        }
    }
    for f in &r.files {
        let _ = writeln!(s, "  wrote {f}");
    }
    s
}

fn fmt_ns(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.3} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2} µs", v / 1e3)
    } else {
        format!("{v:.0} ns")
    }
}

fn write_plots(
    d: &Path,
    name: &str,
    sim: &engine::Sim,
    rep: &Report,
) -> Result<Vec<String>, SimError> {
    let st = &sim.stats;
    let mut files = Vec::new();
    let title = format!("{name} ({} controller)", rep.controller);
    let (div, label) = plot::time_axis(rep.sim_ns as f64);
    let x = |t: u64| t as f64 / div;
    // Queue and aggregate throughput over time.
    let queue: Vec<(f64, f64)> = st
        .series
        .iter()
        .map(|p| (x(p.t_ns), p.queue_max_bytes as f64))
        .collect();
    let thr: Vec<(f64, f64)> = st
        .series
        .windows(2)
        .map(|w| {
            let dt = (w[1].t_ns - w[0].t_ns).max(1) as f64 * 1e-9;
            (
                x(w[1].t_ns),
                (w[1].delivered_bytes - w[0].delivered_bytes) as f64 * 8.0 / dt,
            )
        })
        .collect();
    let p = d.join(format!("{name}_queue.svg"));
    plot::draw(
        &p,
        &title,
        label,
        &[
            Panel::new(
                "longest switch queue (bytes)",
                vec![Series {
                    name: "max over switch egress ports".into(),
                    points: queue,
                    color: plot::FIXED,
                }],
            ),
            Panel::new(
                "goodput, all flows (b/s)",
                vec![Series {
                    name: "delivered in order".into(),
                    points: thr,
                    color: plot::REF,
                }],
            ),
        ],
    )
    .map_err(|e| other(&p, e))?;
    files.push(p.display().to_string());
    // Rates of the tracked flows.
    let k = st.series.first().map_or(0, |p| p.rates_bps.len());
    let series_of = |goodput: bool| -> Vec<Series> {
        (0..k)
            .map(|i| Series {
                name: format!("flow {}", st.tracked.get(i).copied().unwrap_or(i as u32)),
                points: st
                    .series
                    .iter()
                    .filter_map(|p| {
                        let v = if goodput {
                            p.goodput_bps[i]
                        } else {
                            p.rates_bps[i]
                        };
                        v.is_finite().then_some((x(p.t_ns), v))
                    })
                    .collect(),
                color: plot::PALETTE[i % plot::PALETTE.len()],
            })
            .filter(|s| !s.points.is_empty())
            .collect()
    };
    let p = d.join(format!("{name}_rates.svg"));
    plot::draw(
        &p,
        &title,
        label,
        &[
            Panel::new("controller rate (b/s)", series_of(false)),
            Panel::new("goodput (b/s)", series_of(true)),
        ],
    )
    .map_err(|e| other(&p, e))?;
    files.push(p.display().to_string());
    // Slowdown percentiles per bucket (x: bucket number, labels in the summary).
    if rep.slowdown.iter().any(|b| b.flows > 0) {
        let pts = |f: fn(&Bucket) -> Option<f64>| -> Vec<(f64, f64)> {
            rep.slowdown
                .iter()
                .enumerate()
                .filter_map(|(i, b)| f(b).map(|v| (i as f64, v)))
                .collect()
        };
        let labels: Vec<String> = rep
            .slowdown
            .iter()
            .enumerate()
            .map(|(i, b)| format!("{i}: {}", b.bucket))
            .collect();
        let p = d.join(format!("{name}_slowdown.svg"));
        plot::draw(
            &p,
            &title,
            &format!("flow-size bucket ({})", labels.join(", ")),
            &[Panel {
                log_y: true,
                ..Panel::new(
                    "FCT slowdown",
                    vec![
                        Series {
                            name: "p50".into(),
                            points: pts(|b| b.p50),
                            color: plot::REF,
                        },
                        Series {
                            name: "p95".into(),
                            points: pts(|b| b.p95),
                            color: plot::OTHER,
                        },
                        Series {
                            name: "p99".into(),
                            points: pts(|b| b.p99),
                            color: plot::FIXED,
                        },
                    ],
                )
            }],
        )
        .map_err(|e| other(&p, e))?;
        files.push(p.display().to_string());
        let mut sd = st.all_slowdown.clone();
        sd.sort_by(f64::total_cmp);
        let n = sd.len() as f64;
        let cdf: Vec<(f64, f64)> = sd
            .iter()
            .enumerate()
            .map(|(i, v)| (*v, (i + 1) as f64 / n))
            .collect();
        let p = d.join(format!("{name}_slowdown_cdf.svg"));
        plot::draw(
            &p,
            &title,
            "FCT slowdown",
            &[Panel::new(
                "fraction of finished flows",
                vec![Series {
                    name: "CDF".into(),
                    points: cdf,
                    color: plot::FIXED,
                }],
            )],
        )
        .map_err(|e| other(&p, e))?;
        files.push(p.display().to_string());
    }
    let p = d.join(format!("{name}_queue_cdf.svg"));
    plot::draw(
        &p,
        &title,
        "switch egress queue (bytes, 80-byte buckets)",
        &[Panel::new(
            "fraction of samples",
            vec![Series {
                name: "queue CDF".into(),
                points: st.queue.cdf(),
                color: plot::FIXED,
            }],
        )],
    )
    .map_err(|e| other(&p, e))?;
    files.push(p.display().to_string());
    Ok(files)
}

/// `sim-host sim`: exit 0 when the run finished and every invariant held, 1 when an
/// invariant failed, 2 for a bad scenario or an output that could not be written.
pub fn cli(file: &Path, o: &SimOpts, json: bool) -> i32 {
    let run = scenario::load(file)
        .map_err(SimError::Scenario)
        .and_then(|l| run_with_bar(&l, o, true));
    match run {
        Ok((r, _)) => {
            if let Some(w) = r.paths.as_ref().and_then(|p| p.warning.as_ref()) {
                eprintln!("warning: {w}");
            }
            if json {
                match serde_json::to_string_pretty(&r) {
                    Ok(j) => cc_output::outln!("{j}"),
                    Err(e) => {
                        eprintln!("error: {e}");
                        return 2;
                    }
                }
            } else {
                cc_output::out!("{}", text(&r));
            }
            if cc_output::output::stdout_failed() {
                2
            } else if r.violations.is_empty() {
                0
            } else {
                1
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

fn ms(v: Option<u64>) -> String {
    v.map_or("—".into(), |t| format!("{:.3} ms", t as f64 / 1e6))
}

/// The page results as summary lines.
fn web_text(r: &WebReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let t = &r.run.transport;
    let _ = writeln!(
        s,
        "  transport: paced at {} b/s ({}), window {} B ({}){}",
        t.pacing_rate_bps,
        t.origin[0],
        t.window_bytes,
        t.origin[1],
        t.initial_window_bytes.map_or(String::new(), |b| format!(
            ", slow start from {b} B (web.initial_window_packets)"
        ))
    );
    let _ = writeln!(
        s,
        "  page completion      P0           P1           P2           P3           P4      page load          FCP   first byte"
    );
    let mut row = |w: &WebRun| {
        let _ = write!(s, "    {:<8}", w.scheduler);
        for p in 0..5 {
            let _ = write!(s, " {:>12}", ms(w.completion_ns[p]));
        }
        let _ = writeln!(
            s,
            " {:>14} {:>12} {:>12}",
            ms(w.page_load_ns),
            ms(w.fcp_ns),
            ms(w.first_byte_ns)
        );
    };
    row(&r.run);
    if let Some(b) = &r.baseline {
        row(b);
    }
    let order = |w: &WebRun| {
        w.completion_order
            .iter()
            .map(|p| format!("P{p}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = write!(
        s,
        "  completion order: {} {}",
        r.run.scheduler,
        order(&r.run)
    );
    if let Some(b) = &r.baseline {
        let _ = write!(s, "; {} {}", b.scheduler, order(b));
    }
    let _ = writeln!(
        s,
        "; {} chunks, {} deadlock resolutions",
        r.run.chunks, r.run.deadlocks_resolved
    );
    if let (Some(b), Some(i)) = (&r.baseline, r.fcp_improvement_pct) {
        let _ = writeln!(
            s,
            "  FCP improvement {} vs {}: {i:.1} %; page load {} − {}: {:+.3} ms",
            r.run.scheduler,
            b.scheduler,
            r.run.scheduler,
            b.scheduler,
            r.page_load_diff_ns.unwrap_or(0) as f64 / 1e6
        );
    }
    s
}

/// `--plot`: `NAME_page.svg` (bytes delivered per priority over time, one panel per run).
/// Returns the file written.
fn web_plot(
    d: &std::path::Path,
    name: &str,
    controller: &str,
    r: &WebReport,
    w: &WebFlow,
    base: Option<&WebFlow>,
) -> Result<String, String> {
    let runs: Vec<(&WebRun, &WebFlow)> = std::iter::once((&r.run, w))
        .chain(r.baseline.iter().zip(base))
        .collect();
    let span = runs
        .iter()
        .filter_map(|(_, f)| f.progress.last().map(|x| x.0))
        .max()
        .unwrap_or(1) as f64;
    let (div, label) = plot::time_axis(span);
    let panels: Vec<plot::Panel> = runs
        .iter()
        .map(|(run, f)| {
            let series = (0..5)
                .filter(|&p| run.bytes[p] > 0)
                .map(|p| {
                    let mut points = vec![(0.0, 0.0)];
                    points.extend(
                        f.progress
                            .iter()
                            .map(|(t, b)| (*t as f64 / div, b[p] as f64)),
                    );
                    plot::Series {
                        name: format!(
                            "P{p} {} kB: {}",
                            run.bytes[p] as f64 / 1e3,
                            run.completion_ns[p]
                                .map_or("—".into(), |t| format!("{:.0} ms", t as f64 / 1e6))
                        ),
                        points,
                        color: plot::PALETTE[p],
                    }
                })
                .collect();
            plot::Panel::new(
                format!(
                    "bytes delivered, {} (FCP {})",
                    run.scheduler,
                    ms(run.fcp_ns)
                ),
                series,
            )
        })
        .collect();
    let p = d.join(format!("{name}_page.svg"));
    plot::draw(
        &p,
        &format!("{name} ({controller} conductor): bytes delivered per priority"),
        label,
        &panels,
    )?;
    Ok(p.display().to_string())
}

/// `sim-host sim`'s options.
#[derive(clap::Args)]
pub struct SimArgs {
    /// The scenario file (fixtures/scenarios/*.toml); several with --results (a sweep).
    #[arg(required = true, num_args = 1..)]
    pub scenario: Vec<PathBuf>,
    /// Sweep: write one self-describing result file per (scenario, controller, seed) into
    /// DIR, named by a hash of all three; without --controller both controllers run.
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Sweep: run the I-th of N shares of the jobs (0-based), e.g. a job array index.
    #[arg(long, value_name = "I/N", requires = "results")]
    pub shard: Option<String>,
    /// Sweep: seeds, e.g. 1..9 (9 excluded) or 1,4,7 [default: each scenario's].
    #[arg(long, value_name = "LIST", requires = "results")]
    pub seeds: Option<String>,
    /// Write SVG figures into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Write the per-flow CSV, the time series and the summary JSON into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Record the chosen flows' TIMELY completions / HPCC ACKs / CATS conductor events as
    /// replayable CSV traces (HPCC also as a pcapng capture).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// fixed: the firmware crates; reference: the f64 references (cats: the conductor); ns3: HPCC in the authors' ns-3 arithmetic
    /// [default: the scenario's].
    #[arg(long, value_enum)]
    pub controller: Option<scenario::ControllerKind>,
    /// RNG seed [default: the scenario's].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Override an algorithm parameter (the `replay --set` keys), repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_cli_set)]
    pub set: Vec<Param>,
    /// Write the HPCC authors' ns-3 simulator's files into this directory: fct.txt,
    /// pfc.txt, qlen.txt, and the topology.txt and flow.txt of the run (docs/sim.md).
    #[arg(long, value_name = "DIR")]
    ns3_out: Option<PathBuf>,
    /// Read the network from an ns-3 topology file: a star, a dumbbell, a two-tier
    /// leaf-spine (leaf_spine) or a three-tier fat tree (fat_tree) wired as the authors'
    /// mix/fat.txt, recognised from its links; it replaces the scenario's [topology] shape
    /// keys (docs/robustness.md §6g).
    #[arg(long, value_name = "FILE")]
    ns3_topology: Option<PathBuf>,
    /// Read the flows from an ns-3 flow file; they replace the scenario's [[flows]].
    #[arg(long, value_name = "FILE")]
    ns3_flows: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `sim --help`'s text after the options: the scenario's keys, with the algorithms of the
/// controller registry and the `[params]` each parses.
pub fn sim_help() -> String {
    let registry = cc::REGISTRY;
    let names: Vec<&str> = registry.iter().map(|e| e.name).collect();
    let params: Vec<String> = registry
        .iter()
        .map(|e| format!("{}: {}", e.name, e.setup))
        .collect();
    format!(
        "Scenario: TOML with name, algorithm ({}), controller, seed, \
duration_ns, mtu_bytes, segment_bytes, ack_every, reaction, [params] ({}), \
[web] (cats: page, scheduler cats|fifo, baseline, pacing_rate_bps, window_bytes, initial_window_packets), [topology] (star|dumbbell|leaf_spine|fat_tree), [[flows]] (long|incast|poisson|poisson_incast) and [output]; see \
docs/sim.md. Several scenarios with --results DIR make a sweep (scenario x controller x seed, \
--seeds, --shard I/N for a job array; combine with `sim-host merge`). Exit codes: 0 the run \
finished and every invariant held; 1 an \
invariant failed; 2 a bad scenario (the message names the file and the key) or an output that \
could not be written.",
        names.join("|"),
        params.join("; ")
    )
}

/// `sim-host sim`: one scenario ([`cli`]), or a sweep of several (`--results`).
pub fn cmd(a: SimArgs) -> i32 {
    let SimArgs {
        scenario,
        results,
        shard,
        seeds,
        plot,
        out,
        record,
        controller,
        seed,
        set,
        ns3_out,
        ns3_topology,
        ns3_flows,
        json,
    } = a;
    match results {
        Some(dir) => {
            use scenario::ControllerKind;
            if plot.is_some()
                || out.is_some()
                || record.is_some()
                || seed.is_some()
                || json
                || ns3_out.is_some()
                || ns3_topology.is_some()
                || ns3_flows.is_some()
            {
                eprintln!(
                    "error: a sweep (--results) takes --seeds, --shard, --controller and --set only"
                );
                return crate::replay::EXIT_INPUT;
            }
            let parsed = shard
                .as_deref()
                .map_or(Ok((0, 1)), sweep::parse_shard)
                .and_then(|sh| {
                    seeds
                        .as_deref()
                        .map_or(Ok(Vec::new()), sweep::parse_seeds)
                        .map(|sd| (sh, sd))
                });
            match parsed {
                Err(e) => {
                    eprintln!("error: {e}");
                    crate::replay::EXIT_INPUT
                }
                Ok((sh, sd)) => {
                    let cs = match controller {
                        Some(c) => vec![c],
                        None => vec![ControllerKind::Fixed, ControllerKind::Reference],
                    };
                    let jobs = sweep::jobs(&scenario, &cs, &sd);
                    match sweep::run(&jobs, sh, &dir, &set) {
                        Ok(done) => {
                            cc_output::outln!(
                                "shard {}/{}: {} of {} jobs, results in {}",
                                sh.0,
                                sh.1,
                                done.files.len(),
                                jobs.len(),
                                dir.display()
                            );
                            for v in &done.violated {
                                eprintln!("INVARIANTS VIOLATED: {v}");
                            }
                            if cc_output::output::stdout_failed() {
                                2
                            } else {
                                done.exit_code()
                            }
                        }
                        Err(e) => {
                            eprintln!("error: {e}");
                            crate::replay::EXIT_INPUT
                        }
                    }
                }
            }
        }
        None => {
            if scenario.len() != 1 {
                eprintln!("error: several scenarios are a sweep: give --results DIR");
                return crate::replay::EXIT_INPUT;
            }
            let o = SimOpts {
                plot,
                out,
                record,
                controller,
                seed,
                set,
                ns3_out,
                ns3_topology,
                ns3_flows,
            };
            cli(&scenario[0], &o, json)
        }
    }
}
