//! SVG plots (plotters' SVG backend: no system libraries, no fonts to install) that a
//! researcher keeps: every panel shares a time axis relative to the trace start in readable
//! units, extremes survive any trace length (min/max per pixel column, [`Envelope`]), an error
//! panel on a log scale marks every event where the two sides took different branches, and
//! legends sit above the data, not on it.

use plotters::prelude::*;
use std::path::Path;

/// A streaming min/max envelope of several series over events: at most `cols` columns, each
/// holding, per series, the smallest and the largest value of its events (so a single spike or
/// a single disagreement in ten million events still shows), and whether any of its events is
/// marked. Columns double in width (pairs merge) when the trace outgrows them: memory is
/// bounded by `cols`, whatever the trace length.
#[derive(Debug, Clone)]
pub struct Envelope {
    cols: usize,
    width: u64,
    n: usize,
    cells: Vec<Cell>,
}

#[derive(Debug, Clone)]
struct Cell {
    /// Column index at the current width.
    col: u64,
    /// x of the column's first event.
    x: f64,
    lo: Vec<f64>,
    hi: Vec<f64>,
    /// x of the first marked event in the column.
    mark: Option<f64>,
}

impl Envelope {
    /// `n` series, at most `cols` (≥ 2) columns.
    pub fn new(n: usize, cols: usize) -> Self {
        Self {
            cols: cols.max(2),
            width: 1,
            n,
            cells: Vec::new(),
        }
    }

    /// Event `i` (0-based, increasing) at `x` with one value per series (non-finite values are
    /// left out), marked or not.
    pub fn offer(&mut self, i: u64, x: f64, ys: &[f64], mark: bool) {
        let col = i / self.width;
        let fresh = self.cells.last().is_none_or(|c| c.col != col);
        if fresh {
            self.cells.push(Cell {
                col,
                x,
                lo: vec![f64::INFINITY; self.n],
                hi: vec![f64::NEG_INFINITY; self.n],
                mark: None,
            });
        }
        if let Some(c) = self.cells.last_mut() {
            for (k, &y) in ys.iter().enumerate().take(self.n) {
                if y.is_finite() {
                    c.lo[k] = c.lo[k].min(y);
                    c.hi[k] = c.hi[k].max(y);
                }
            }
            if mark && c.mark.is_none() {
                c.mark = Some(x);
            }
        }
        if self.cells.len() > self.cols {
            self.width *= 2;
            let mut merged: Vec<Cell> = Vec::with_capacity(self.cols / 2 + 1);
            for mut c in self.cells.drain(..) {
                c.col /= 2;
                match merged.last_mut() {
                    Some(m) if m.col == c.col => {
                        for k in 0..m.lo.len() {
                            m.lo[k] = m.lo[k].min(c.lo[k]);
                            m.hi[k] = m.hi[k].max(c.hi[k]);
                        }
                        m.mark = m.mark.or(c.mark);
                    }
                    _ => merged.push(c),
                }
            }
            self.cells = merged;
        }
    }

    /// Series `k` as a line through every column's minimum and maximum.
    pub fn series(&self, k: usize) -> Vec<(f64, f64)> {
        let mut v = Vec::with_capacity(self.cells.len() * 2);
        for c in &self.cells {
            if let (Some(&lo), Some(&hi)) = (c.lo.get(k), c.hi.get(k))
                && lo.is_finite()
            {
                v.push((c.x, lo));
                if hi > lo {
                    v.push((c.x, hi));
                }
            }
        }
        v
    }

    /// The x of every marked column.
    pub fn marks(&self) -> Vec<f64> {
        self.cells.iter().filter_map(|c| c.mark).collect()
    }

    /// Series `k` as a named line, x divided by `div` (a time unit).
    pub fn line(&self, k: usize, div: f64, name: &str, color: RGBColor) -> Series {
        Series {
            name: name.to_string(),
            points: self
                .series(k)
                .into_iter()
                .map(|(x, y)| (x / div, y))
                .collect(),
            color,
        }
    }

    /// A panel of series `k` (the f64 reference) beside series `k + 1` (the fixed point), x
    /// divided by `div`.
    pub fn ref_vs_fixed(&self, k: usize, div: f64, y_label: &str) -> Panel {
        Panel::new(
            y_label,
            vec![
                self.line(k, div, "reference (f64)", REF),
                self.line(k + 1, div, "fixed point", FIXED),
            ],
        )
    }

    /// The relative-error panel of every estimate kind: column `k` (`|fixed − ref| / ref`) on a
    /// log axis, titled `title`, with the events whose branches differ marked.
    pub fn rel_err_panel(&self, k: usize, div: f64, title: &str) -> Panel {
        Panel {
            log_y: true,
            marks: Some(("branches differ".into(), self.marks_in(div))),
            ..Panel::new(title, vec![self.line(k, div, "|fixed − ref| / ref", FIXED)])
        }
    }

    /// The marks, x divided by `div`.
    pub fn marks_in(&self, div: f64) -> Vec<f64> {
        self.marks().into_iter().map(|x| x / div).collect()
    }

    /// The time axis for the x span offered (x in ns since the first event): see [`time_axis`].
    pub fn time_axis(&self) -> (f64, &'static str) {
        let span = match (self.cells.first(), self.cells.last()) {
            (Some(a), Some(b)) => b.x - a.x,
            _ => 0.0,
        };
        time_axis(span)
    }

    /// Columns kept.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// No event offered yet.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }
}

/// Columns per figure: about one per pixel of the plot's width.
pub const COLUMNS: usize = 1_800;

/// A time axis relative to the trace's first event: `(divisor, label)` for a span of `span_ns`
/// (ns below 10 µs, µs below 10 ms, ms below 10 s, s above).
pub fn time_axis(span_ns: f64) -> (f64, &'static str) {
    if span_ns < 1e4 {
        (1.0, "time since the first event (ns)")
    } else if span_ns < 1e7 {
        (1e3, "time since the first event (µs)")
    } else if span_ns < 1e10 {
        (1e6, "time since the first event (ms)")
    } else {
        (1e9, "time since the first event (s)")
    }
}

/// One line on a panel.
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points `(x, y)`.
    pub points: Vec<(f64, f64)>,
    /// Line colour.
    pub color: RGBColor,
}

/// One panel (sub-plot) of a figure; panels share the x axis.
pub struct Panel {
    /// Y-axis label.
    pub y_label: String,
    /// Lines on it.
    pub series: Vec<Series>,
    /// A log-scale y axis (values ≤ 0 are drawn at its floor).
    pub log_y: bool,
    /// x positions to mark with a vertical tick at the panel's foot (events where the two
    /// sides disagreed), with the legend text for them.
    pub marks: Option<(String, Vec<f64>)>,
    /// Draw a dot at every point as well as the line (sparse data such as one value per seed).
    pub markers: bool,
}

impl Panel {
    /// A linear panel without marks.
    pub fn new(y_label: impl Into<String>, series: Vec<Series>) -> Self {
        Self {
            y_label: y_label.into(),
            series,
            log_y: false,
            marks: None,
            markers: false,
        }
    }
}

/// Colours used by the kinds: reference, fixed point, and extras.
pub const REF: RGBColor = RGBColor(31, 119, 180);
/// Fixed-point series colour.
pub const FIXED: RGBColor = RGBColor(214, 39, 40);
/// A third series (RTT, queue, …).
pub const OTHER: RGBColor = RGBColor(44, 160, 44);
/// Marks (branch disagreements).
pub const MARK: RGBColor = RGBColor(0, 0, 0);
/// Palette for many series (five priorities).
pub const PALETTE: [RGBColor; 5] = [
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(31, 119, 180),
    RGBColor(148, 103, 189),
];

/// Smallest value a log-scale panel shows (relative errors of exactly 0 are drawn here).
pub const LOG_FLOOR: f64 = 1e-12;

/// Height of the legend strip above a panel, pixels.
pub const LEGEND_PX: u32 = 22;

/// Draws a legend strip (a short line in each entry's colour, then its name) into `legend`,
/// left to right: the strip sits above its panel, never over the data.
pub fn draw_legend<DB: DrawingBackend>(
    legend: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[(String, RGBColor)],
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("cannot draw plot: {e}");
    let mut lx = 90i32;
    for (name, color) in entries {
        legend
            .draw(&PathElement::new(
                vec![(lx, 12), (lx + 22, 12)],
                color.stroke_width(3),
            ))
            .map_err(|e| err(&e))?;
        legend
            .draw(&Text::new(name.clone(), (lx + 28, 5), ("sans-serif", 13)))
            .map_err(|e| err(&e))?;
        lx += 40 + 7 * i32::try_from(name.chars().count()).unwrap_or(20);
    }
    Ok(())
}

/// Draws `panels` stacked vertically into an SVG file.
pub fn draw(path: &Path, title: &str, x_label: &str, panels: &[Panel]) -> Result<(), String> {
    // Drawn beside the target and renamed into place: a failed plot leaves no partial file.
    let tmp = crate::output::temp_beside(path);
    match draw_svg(&tmp, title, x_label, panels) {
        Ok(()) => crate::output::commit_temp(&tmp, path).map_err(|e| e.msg),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

fn draw_svg(path: &Path, title: &str, x_label: &str, panels: &[Panel]) -> Result<(), String> {
    let height = 60 + 320 * panels.len().max(1) as u32;
    let root = SVGBackend::new(path, (1100, height)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| format!("cannot draw plot: {e}");
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root
        .titled(title, ("sans-serif", 20))
        .map_err(|e| err(&e))?;
    let areas = root.split_evenly((panels.len().max(1), 1));
    let (mut x_lo, mut x_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for p in panels {
        for s in &p.series {
            for &(x, _) in &s.points {
                x_lo = x_lo.min(x);
                x_hi = x_hi.max(x);
            }
        }
    }
    if !x_lo.is_finite() {
        (x_lo, x_hi) = (0.0, 1.0);
    }
    if x_hi <= x_lo {
        x_hi = x_lo + 1.0;
    }
    for (area, panel) in areas.iter().zip(panels) {
        // The legend goes in a strip above the panel, never over the data.
        let (legend, plot_area) = area.split_vertically(LEGEND_PX);
        let mut entries: Vec<(String, RGBColor)> = panel
            .series
            .iter()
            .map(|s| (s.name.clone(), s.color))
            .collect();
        if let Some((name, m)) = &panel.marks {
            entries.push((format!("{name} ({})", m.len()), MARK));
        }
        draw_legend(&legend, &entries)?;
        let (mut y_lo, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for s in &panel.series {
            for &(_, y) in &s.points {
                let y = if panel.log_y { y.max(LOG_FLOOR) } else { y };
                if y.is_finite() {
                    y_lo = y_lo.min(y);
                    y_hi = y_hi.max(y);
                }
            }
        }
        if !y_lo.is_finite() {
            (y_lo, y_hi) = if panel.log_y {
                (LOG_FLOOR, 1.0)
            } else {
                (0.0, 1.0)
            };
        }
        let mut builder = ChartBuilder::on(&plot_area);
        builder
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(80);
        if panel.log_y {
            let (lo, hi) = (y_lo.max(LOG_FLOOR) / 2.0, (y_hi * 2.0).max(y_lo * 10.0));
            let mut chart = builder
                .build_cartesian_2d(x_lo..x_hi, (lo..hi).log_scale())
                .map_err(|e| err(&e))?;
            chart
                .configure_mesh()
                .x_desc(x_label)
                .y_desc(panel.y_label.as_str())
                .y_label_formatter(&|v| format!("{v:.0e}"))
                .x_label_formatter(&|v| format_si(*v))
                .draw()
                .map_err(|e| err(&e))?;
            for s in &panel.series {
                chart
                    .draw_series(LineSeries::new(
                        s.points.iter().map(|&(x, y)| (x, y.max(LOG_FLOOR))),
                        s.color.stroke_width(1),
                    ))
                    .map_err(|e| err(&e))?;
                if panel.markers {
                    chart
                        .draw_series(
                            s.points.iter().map(|&(x, y)| {
                                Circle::new((x, y.max(LOG_FLOOR)), 3, s.color.filled())
                            }),
                        )
                        .map_err(|e| err(&e))?;
                }
            }
            if let Some((_, m)) = &panel.marks {
                chart
                    .draw_series(m.iter().map(|&x| {
                        PathElement::new(vec![(x, lo), (x, lo * 8.0)], MARK.stroke_width(1))
                    }))
                    .map_err(|e| err(&e))?;
            }
        } else {
            let pad = ((y_hi - y_lo) * 0.05).max(y_hi.abs() * 1e-6).max(1e-12);
            let (lo, hi) = (y_lo - pad, y_hi + pad);
            let mut chart = builder
                .build_cartesian_2d(x_lo..x_hi, lo..hi)
                .map_err(|e| err(&e))?;
            chart
                .configure_mesh()
                .x_desc(x_label)
                .y_desc(panel.y_label.as_str())
                .y_label_formatter(&|v| format_si(*v))
                .x_label_formatter(&|v| format_si(*v))
                .draw()
                .map_err(|e| err(&e))?;
            for s in &panel.series {
                chart
                    .draw_series(LineSeries::new(
                        s.points.iter().copied(),
                        s.color.stroke_width(1),
                    ))
                    .map_err(|e| err(&e))?;
                if panel.markers {
                    chart
                        .draw_series(
                            s.points
                                .iter()
                                .map(|&(x, y)| Circle::new((x, y), 3, s.color.filled())),
                        )
                        .map_err(|e| err(&e))?;
                }
            }
            if let Some((_, m)) = &panel.marks {
                let tick = (hi - lo) * 0.06;
                chart
                    .draw_series(m.iter().map(|&x| {
                        PathElement::new(vec![(x, lo), (x, lo + tick)], MARK.stroke_width(1))
                    }))
                    .map_err(|e| err(&e))?;
            }
        }
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// `12_500_000_000` → `12.5G`.
pub fn format_si(v: f64) -> String {
    let a = v.abs();
    let (d, s) = if a >= 1e12 {
        (1e12, "T")
    } else if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let t = format!("{:.3}", v / d);
    let t = t.trim_end_matches('0').trim_end_matches('.');
    format!("{t}{s}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extremes survive: one spike and one mark among 10^6 events are still in a 100-column
    /// envelope, and memory stays at ≤ 100 columns.
    #[test]
    fn envelope_keeps_spikes_and_marks_in_bounded_memory() {
        let mut e = Envelope::new(1, 100);
        for i in 0..1_000_000u64 {
            let y = if i == 777_777 { 1e6 } else { (i % 10) as f64 };
            e.offer(i, i as f64, &[y], i == 123_457);
            assert!(e.len() <= 100);
        }
        let s = e.series(0);
        assert!(s.iter().any(|&(_, y)| y == 1e6), "the spike survives");
        assert!(s.iter().all(|&(_, y)| (0.0..=1e6).contains(&y)));
        assert_eq!(e.marks().len(), 1);
        assert!(e.len() >= 50);
    }

    #[test]
    fn draws_an_svg() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.svg");
        let panels = vec![
            Panel::new(
                "rate (b/s)",
                vec![Series {
                    name: "ref".into(),
                    points: vec![(0.0, 1e9), (1.0, 2e9)],
                    color: REF,
                }],
            ),
            Panel {
                log_y: true,
                marks: Some(("branches differ".into(), vec![0.5])),
                ..Panel::new(
                    "relative error",
                    vec![Series {
                        name: "|fixed − ref| / ref".into(),
                        points: vec![(0.0, 0.0), (1.0, 1e-5)],
                        color: FIXED,
                    }],
                )
            },
        ];
        draw(&p, "test", "time (ns)", &panels).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("polyline"),
            "{}",
            &svg[..200.min(svg.len())]
        );
    }

    #[test]
    fn si_format() {
        assert_eq!(format_si(12.5e9), "12.5G");
        assert_eq!(format_si(0.5), "0.5");
        assert_eq!(format_si(1000.0), "1k");
    }
}
