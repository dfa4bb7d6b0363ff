//! HPCC through the C ABI: `cc_hpcc_on_ack` per ACK of `fixtures/hpcc/*.csv`
//! (`t_ns,ack_seq,snd_nxt,int`), labelled by hop count and the branch the call returns
//! (`"1 hop, md"`, `"5 hops, ai"`, …). One case per hop count (1, 3, 5), each drawing only the
//! ACKs whose INT block has that many hops (1 hop: `incast_1hop`, `near_eta`; 3 hops: the second
//! paths of `wrap_pathchange` and `ties_multihop`; 5 hops: `multihop_moving`,
//! `seq_wrap_long_flow` and the first path of `ties_multihop`).
//!
//! The host build of `hpcc_cc` replays every ACK of a fixture; the measured ACKs are spread evenly
//! over the matching ones (at most `limit / fixtures` per fixture), and before each the simulated
//! flow is set to the host's state with `cc_hpcc_flow_set_state` (not counted), so every measured
//! call sees the state the whole trace leads to, as on the NIC. Every simulated result (branch and
//! window) is checked against the host. The trace is read, and its `# set` lines mapped to a
//! configuration, by cc-trace (`TraceReader`, `hpcc::Setup::from_params`: the
//! configuration `sim-host replay` runs); the C side is given the same `Params`.

use std::path::{Path, PathBuf};

use anyhow::{Result, ensure};
use cc_trace::hpcc::HEADER;
use cc_trace::hpcc::{Row, Setup};
use hpcc_cc::{HpccBranch, Params, State};

use super::{Ctx, TraceFile, branch_name, fixture_paths, read_trace};
use crate::machine::Machine;
use crate::table::Sample;

/// A fixture: both sides' configuration from its `# set` lines, and its ACKs.
pub(crate) struct Trace {
    pub(crate) setup: Setup,
    /// `(ack_seq, snd_nxt, INT bytes)`.
    pub(crate) acks: Vec<(u32, u32, Vec<u8>)>,
}

/// Reads a fixture with cc-trace's trace reader and HPCC parameter mapping.
pub(crate) fn parse(path: &Path) -> Result<Trace> {
    let TraceFile { params: set, rows } = read_trace::<Row>(path, HEADER)?;
    let setup = Setup::from_params(&set)?;
    let acks = rows
        .into_iter()
        .map(|(line, r)| Ok((r.ack_seq, r.snd_nxt, r.int_bytes(path, line)?)))
        .collect::<Result<_>>()?;
    Ok(Trace { setup, acks })
}

/// `CcHpccParams` as laid out by `#[repr(C)]` (same on riscv32 ilp32 and the host).
pub(crate) fn params_bytes(p: &Params) -> Vec<u8> {
    let mut v = Vec::with_capacity(40);
    v.extend_from_slice(&p.nic_rate_bps.to_le_bytes());
    v.extend_from_slice(&p.min_rate_bps.to_le_bytes());
    for x in [
        p.base_rtt_ns,
        p.eta.num,
        p.eta.den,
        p.w_ai_bytes,
        u32::from(p.max_stage),
        0,
    ] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    debug_assert_eq!(v.len(), std::mem::size_of::<cc_ffi::hpcc::CcHpccParams>());
    v
}

/// `CcHpccState` as laid out by `#[repr(C)]` (64 bytes).
pub(crate) fn state_bytes(s: &State) -> Vec<u8> {
    let r = s.raw_parts();
    let mut v = Vec::with_capacity(64);
    v.extend_from_slice(&r.u.to_bits().to_le_bytes());
    for h in r.hops {
        v.extend_from_slice(&h.to_le_bytes());
    }
    for x in [r.w_bytes.to_bits(), r.wc_bytes.to_bits(), r.last_update_seq] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(&r.int_header.unwrap_or(0).to_le_bytes());
    v.push(u8::from(r.int_header.is_some()));
    v.push(r.inc_stage);
    debug_assert_eq!(v.len(), std::mem::size_of::<cc_ffi::hpcc::CcHpccState>());
    v
}

/// The hop count an INT block's header announces.
pub(crate) fn nhop(int: &[u8]) -> usize {
    usize::from(int.first().copied().unwrap_or(0) >> 4)
}

/// The row label's hop part: `1 hop`, `5 hops`.
pub(crate) fn hop_label(hops: usize) -> String {
    if hops == 1 {
        "1 hop".to_owned()
    } else {
        format!("{hops} hops")
    }
}

fn run_hops(m: &mut Machine, ctx: &Ctx, hops: usize) -> Result<Vec<Sample>> {
    let paths = fixture_paths(ctx, "hpcc")?;
    let traces: Vec<(PathBuf, Trace, usize)> = paths
        .into_iter()
        .map(|p| {
            let t = parse(&p)?;
            let n = t.acks.iter().filter(|a| nhop(&a.2) == hops).count();
            Ok((p, t, n))
        })
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .filter(|t| t.2 > 0)
        .collect();
    ensure!(
        !traces.is_empty(),
        "no fixture in {} has {hops}-hop ACKs",
        ctx.fixtures.join("hpcc").display()
    );
    let share = ctx.limit.div_ceil(traces.len()).max(1);
    let label = hop_label(hops);
    let mut samples = Vec::new();
    for (path, t, matching) in &traces {
        let host_cfg = t.setup.cfg;
        m.reset_scratch();
        let params = m.push_bytes(&params_bytes(host_cfg.params()), 8)?;
        let cfg = m.alloc(cc_ffi::hpcc::CC_HPCC_CONFIG_BYTES as u32, 8)?;
        let flow = m.alloc(cc_ffi::hpcc::CC_HPCC_FLOW_BYTES as u32, 8)?;
        let st = m.alloc(64, 8)?;
        let int = m.alloc(2 + 8 * 15, 8)?;
        let out = m.alloc(4, 4)?;
        let r = m.call("cc_hpcc_config_init", &[cfg, params])?;
        ensure!(r.a0 == 0, "cc_hpcc_config_init returned {}", r.a0);
        m.call("cc_hpcc_flow_init", &[flow, cfg])?;
        let every = matching.div_ceil(share).max(1);
        let mut host: State = State::new(&host_cfg);
        let mut k = 0usize;
        for (ack, nxt, bytes) in &t.acks {
            let measure = nhop(bytes) == hops && {
                k += 1;
                (k - 1).is_multiple_of(every)
            };
            if !measure {
                host.on_ack_window(&host_cfg, *ack, *nxt, bytes);
                continue;
            }
            m.write_bytes(st, &state_bytes(&host))?;
            m.call("cc_hpcc_flow_set_state", &[flow, st])?;
            m.write_bytes(int, bytes)?;
            let r = m.call(
                "cc_hpcc_on_ack",
                &[cfg, flow, *ack, *nxt, int, bytes.len() as u32, out],
            )?;
            let w = m.read_u32(out)?;
            let (want_w, want_b) = host.on_ack_window(&host_cfg, *ack, *nxt, bytes);
            let name = branch_name(
                r.a0,
                |c| HpccBranch::from_code(c).map(HpccBranch::name),
                "cc_hpcc_on_ack",
            )?;
            ensure!(
                name == HpccBranch::name(want_b) && w == want_w.to_bits(),
                "{}: ack {ack}: simulated {name} {w}, host {want_b:?} {want_w}",
                path.display()
            );
            samples.push(Sample::of_call(format!("{label}, {name}"), &r));
        }
    }
    Ok(samples)
}

/// `cc_hpcc_on_ack` on 1-hop ACKs.
pub(crate) fn run_1hop(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run_hops(m, ctx, 1)
}
/// `cc_hpcc_on_ack` on 3-hop ACKs.
pub(crate) fn run_3hop(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run_hops(m, ctx, 3)
}
/// `cc_hpcc_on_ack` on 5-hop ACKs.
pub(crate) fn run_5hop(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run_hops(m, ctx, 5)
}
