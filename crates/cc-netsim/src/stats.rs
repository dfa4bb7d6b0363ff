//! Measurements kept during a run, bounded in memory: histograms for queues and RTTs, one
//! slowdown per finished flow, and a fixed number of time-series points.

/// A histogram of non-negative integers in buckets of `width`, up to `cap` buckets (larger
/// values land in the last one).
#[derive(Debug, Clone)]
pub struct Hist {
    width: u64,
    cap: usize,
    counts: Vec<u64>,
    n: u64,
    max: u64,
}

impl Hist {
    /// Buckets of `width` (≥ 1), at most `cap`.
    pub fn new(width: u64, cap: usize) -> Hist {
        Hist {
            width: width.max(1),
            cap: cap.max(1),
            counts: Vec::new(),
            n: 0,
            max: 0,
        }
    }

    /// One value.
    pub fn add(&mut self, v: u64) {
        let i = ((v / self.width) as usize).min(self.cap - 1);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.n += 1;
        self.max = self.max.max(v);
    }

    /// Values added.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The largest value added.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The `p`-quantile (0..=1), the lower edge of its bucket; 0 when empty.
    pub fn quantile(&self, p: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let target = ((p * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut acc = 0;
        for (i, c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= target {
                return i as u64 * self.width;
            }
        }
        self.max
    }

    /// `(value, cumulative fraction)` points of the CDF, one per non-empty bucket.
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        let mut acc = 0;
        let mut v = Vec::new();
        for (i, c) in self.counts.iter().enumerate() {
            if *c > 0 {
                acc += c;
                v.push(((i as u64 * self.width) as f64, acc as f64 / self.n as f64));
            }
        }
        v
    }
}

/// One time-series point.
#[derive(Debug, Clone)]
pub struct Point {
    /// Simulated time, ns.
    pub t_ns: u64,
    /// The longest switch egress queue, bytes.
    pub queue_max_bytes: u64,
    /// Bytes delivered in order so far, all flows.
    pub delivered_bytes: u64,
    /// Tracked flows' controller rates, b/s (NaN when not running).
    pub rates_bps: Vec<f64>,
    /// Tracked flows' goodput since the previous point, b/s (NaN when not running).
    pub goodput_bps: Vec<f64>,
}

/// Everything measured.
#[derive(Debug, Clone)]
pub struct Stats {
    /// Switch egress queue samples (bytes, 80-byte buckets).
    pub queue: Hist,
    /// The queue each data packet found on arriving at a switch egress port (bytes, 80-byte
    /// buckets).
    pub queue_seen: Hist,
    /// RTT per ACK: data sent → its ACK back, ns (10-ns buckets).
    pub rtt: Hist,
    /// Upper bounds of the size buckets, bytes.
    pub buckets: Vec<u64>,
    /// Slowdowns per size bucket (the last bucket: above every bound).
    pub slowdown: Vec<Vec<f64>>,
    /// Every finished sized flow's slowdown.
    pub all_slowdown: Vec<f64>,
    /// Flows whose FCT fell below the ideal (must stay 0).
    pub below_ideal: u64,
    /// Slowdowns below 1 are taken as 1 (`output.ideal_fct = "ns3"`, as fct_analysis.py).
    pub clamp_slowdown: bool,
    /// The time series.
    pub series: Vec<Point>,
    /// The flow ids of the time series' rate and goodput columns.
    pub tracked: Vec<u32>,
}

impl Stats {
    /// Empty, with the size buckets.
    pub fn new(buckets: &[u64], clamp_slowdown: bool) -> Stats {
        Stats {
            queue: Hist::new(80, 1 << 20),
            queue_seen: Hist::new(80, 1 << 20),
            rtt: Hist::new(10, 1 << 20),
            buckets: buckets.to_vec(),
            slowdown: vec![Vec::new(); buckets.len() + 1],
            all_slowdown: Vec::new(),
            below_ideal: 0,
            clamp_slowdown,
            series: Vec::new(),
            tracked: Vec::new(),
        }
    }

    /// A finished flow of `size` bytes: its FCT, the lower bound of its FCT and the ideal FCT
    /// its slowdown divides by, ns.
    pub fn flow_done(&mut self, size: u64, fct_ns: f64, bound_ns: f64, ideal_ns: f64) {
        let s = fct_ns / ideal_ns.max(1e-9);
        let s = if self.clamp_slowdown { s.max(1.0) } else { s };
        if fct_ns < bound_ns {
            self.below_ideal += 1;
        }
        let b = self
            .buckets
            .iter()
            .position(|&u| size <= u)
            .unwrap_or(self.buckets.len());
        self.slowdown[b].push(s);
        self.all_slowdown.push(s);
    }

    /// One time-series point.
    pub fn series_point(
        &mut self,
        t_ns: u64,
        queue_max_bytes: u64,
        delivered_bytes: u64,
        rates_bps: Vec<f64>,
        goodput_bps: Vec<f64>,
    ) {
        self.series.push(Point {
            t_ns,
            queue_max_bytes,
            delivered_bytes,
            rates_bps,
            goodput_bps,
        });
    }

    /// A bucket's label (`≤ 3 KB`, `> 5 MB`).
    pub fn bucket_label(&self, i: usize) -> String {
        match self.buckets.get(i) {
            Some(&u) => format!("<= {}", cc_output::plot::format_si(u as f64) + "B"),
            None => format!(
                "> {}",
                cc_output::plot::format_si(*self.buckets.last().unwrap_or(&0) as f64) + "B"
            ),
        }
    }
}

/// The `p`-quantile of `v` (nearest rank), `None` when empty.
pub fn quantile(v: &[f64], p: f64) -> Option<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let k = ((p * s.len() as f64).ceil() as usize).clamp(1, s.len().max(1));
    s.get(k - 1).copied()
}

/// Jain's fairness index of `x` (1 = equal shares), `None` when empty or all zero.
pub fn jain(x: &[f64]) -> Option<f64> {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    (s2 > 0.0).then(|| s * s / (x.len() as f64 * s2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hist_quantiles() {
        let mut h = Hist::new(10, 100);
        for v in 0..100 {
            h.add(v);
        }
        assert_eq!(h.quantile(0.5), 40);
        assert_eq!(h.quantile(1.0), 90);
        h.add(100_000);
        assert_eq!(h.quantile(1.0), 990);
        assert_eq!(h.max(), 100_000);
    }

    #[test]
    fn jain_index() {
        assert!((jain(&[1.0, 1.0, 1.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0]).unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(jain(&[]), None);
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[3.0, 1.0, 2.0], 0.5), Some(2.0));
    }
}
