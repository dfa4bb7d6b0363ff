//! SVG plots (plotters' SVG backend: no system libraries, no fonts to install) and a decimator
//! that keeps at most a fixed number of points from a trace of any length.

use plotters::prelude::*;
use std::path::Path;

/// Keeps every `stride`-th sample of a stream, doubling the stride (and dropping every other kept
/// sample) whenever `cap` is exceeded, so memory stays bounded and the kept samples stay evenly
/// spread over the whole trace.
#[derive(Debug, Clone)]
pub struct Decimator<T> {
    cap: usize,
    stride: u64,
    kept: Vec<(u64, T)>,
}

impl<T> Decimator<T> {
    /// At most `cap` (≥ 2) samples are kept.
    pub fn new(cap: usize) -> Self {
        Self {
            cap: cap.max(2),
            stride: 1,
            kept: Vec::new(),
        }
    }

    /// Offers sample number `i` (0-based, increasing); `make` is only called if it is kept.
    pub fn offer(&mut self, i: u64, make: impl FnOnce() -> T) {
        if !i.is_multiple_of(self.stride) {
            return;
        }
        self.kept.push((i, make()));
        if self.kept.len() > self.cap {
            self.stride *= 2;
            let stride = self.stride;
            self.kept.retain(|(j, _)| j.is_multiple_of(stride));
        }
    }

    /// The kept samples with their sample numbers.
    pub fn samples(&self) -> &[(u64, T)] {
        &self.kept
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
}

/// Colours used by the kinds: reference, fixed point, and extras.
pub const REF: RGBColor = RGBColor(31, 119, 180);
/// Fixed-point series colour.
pub const FIXED: RGBColor = RGBColor(214, 39, 40);
/// A third series (RTT, queue, …).
pub const OTHER: RGBColor = RGBColor(44, 160, 44);
/// Palette for many series (five priorities).
pub const PALETTE: [RGBColor; 5] = [
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(31, 119, 180),
    RGBColor(148, 103, 189),
];

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
    let height = 60 + 300 * panels.len().max(1) as u32;
    let root = SVGBackend::new(path, (1000, height)).into_drawing_area();
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
        let (mut y_lo, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for s in &panel.series {
            for &(_, y) in &s.points {
                if y.is_finite() {
                    y_lo = y_lo.min(y);
                    y_hi = y_hi.max(y);
                }
            }
        }
        if !y_lo.is_finite() {
            (y_lo, y_hi) = (0.0, 1.0);
        }
        let pad = ((y_hi - y_lo) * 0.05).max(y_hi.abs() * 1e-6).max(1e-12);
        let mut chart = ChartBuilder::on(area)
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(80)
            .build_cartesian_2d(x_lo..x_hi, (y_lo - pad)..(y_hi + pad))
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
            let color = s.color;
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    color.stroke_width(1),
                ))
                .map_err(|e| err(&e))?
                .label(s.name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| err(&e))?;
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

    #[test]
    fn decimator_is_bounded_and_even() {
        let mut d = Decimator::new(100);
        for i in 0..100_000u64 {
            d.offer(i, || i);
        }
        let s = d.samples();
        assert!(s.len() <= 100 && s.len() >= 50, "{}", s.len());
        let step = s[1].0 - s[0].0;
        assert!(s.windows(2).all(|w| w[1].0 - w[0].0 == step));
        assert!(s.last().unwrap().0 > 90_000);
    }

    #[test]
    fn draws_an_svg() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.svg");
        let panels = vec![Panel {
            y_label: "rate (b/s)".into(),
            series: vec![Series {
                name: "ref".into(),
                points: vec![(0.0, 1e9), (1.0, 2e9)],
                color: REF,
            }],
        }];
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
