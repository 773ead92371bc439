//! Figures as data, and their rendering: line charts (CDFs, metric against a sweep axis,
//! latency over time) and grouped horizontal bar charts, drawn with plotters to SVG or
//! PNG, each with its data as CSV beside it.
//!
//! A figure is a pure value ([`LineChart`], [`BarChart`]); rendering it is a pure
//! function of that value, so equal data give equal bytes (no clock, no map iteration,
//! a fixed palette, an embedded font).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::{Context, bail};
use plotters::coord::Shift;
use plotters::coord::combinators::{BindKeyPoints, LogCoord};
use plotters::prelude::*;

use crate::out::write_atomic;

/// Figure size in pixels.
const SIZE: (u32, u32) = (960, 600);

/// The font every label uses: DejaVu Sans cut to ASCII and a few symbols (µ, ×, ≤, ≥,
/// dashes), 10 KB; its licence is `assets/DejaVuSans-LICENSE.txt`. Embedded so that PNGs
/// have text on any machine and look the same everywhere.
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans-subset.ttf");

/// Colours of the series, in order (Tableau 10: distinguishable, also in grey print).
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Output format of a figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Scalable vector graphics (text stays text).
    Svg,
    /// A 960 × 600 PNG image.
    Png,
}

impl Format {
    /// The file extension.
    pub fn ext(self) -> &'static str {
        match self {
            Format::Svg => "svg",
            Format::Png => "png",
        }
    }

    /// The format `--format` names, else the one the output path's extension names,
    /// else SVG. A `--format` that contradicts a `.svg`/`.png` extension is bad input
    /// (it would write PNG bytes into a file named `.svg`); with another extension the
    /// flag decides.
    pub fn choose(flag: Option<Format>, out: Option<&Path>) -> anyhow::Result<Format> {
        let ext = out.and_then(|p| p.extension()).map(|e| e.to_string_lossy().to_ascii_lowercase());
        let by_ext = match ext.as_deref() {
            Some("svg") => Some(Format::Svg),
            Some("png") => Some(Format::Png),
            _ => None,
        };
        match (flag, by_ext, ext) {
            (Some(f), Some(e), _) if f != e => Err(crate::exit::usage(format!(
                "output {}: --format {} contradicts its extension .{}; drop --format or name the file .{}",
                out.expect("has an extension").display(),
                f.ext(),
                e.ext(),
                f.ext()
            ))),
            (Some(f), _, _) => Ok(f),
            (None, Some(e), _) => Ok(e),
            (None, None, None) => Ok(Format::Svg),
            (None, None, Some(e)) => Err(crate::exit::usage(format!(
                "output {}: unknown figure extension .{e}; use .svg or .png (or --format svg|png)",
                out.expect("has an extension").display()
            ))),
        }
    }
}

/// How a line chart's y axis maps values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum YAxis {
    /// Linear from `min` (0 unless a value is below it) to the largest value.
    Linear,
    /// The tail axis of a latency CDF: y = -log10(1 - q) for quantile q, so p90, p99,
    /// p99.9, p99.99, p99.999 are equally spaced; labelled in percent.
    Tail,
}

/// The tail-axis coordinate of quantile `q` (capped at p99.999).
pub fn tail_y(q: f64) -> f64 {
    (-(1.0 - q).max(1e-5).log10()).clamp(0.0, TAIL_MAX)
}

/// The tail axis ends at p99.999.
pub const TAIL_MAX: f64 = 5.0;

fn tail_label(y: f64) -> String {
    // y = k ⇒ percentile 100 (1 - 10^-k): 0, 90, 99, 99.9, ...
    let p = 100.0 * (1.0 - 10f64.powf(-y));
    if y.fract().abs() < 1e-9 { format!("{}", (p * 1000.0).round() / 1000.0) } else { String::new() }
}

/// How a line chart's x axis maps values.
#[derive(Clone, Debug, PartialEq)]
pub enum XAxis {
    /// Numeric, linear.
    Linear,
    /// Numeric, logarithmic (every x must be positive).
    Log,
    /// Categories: point `i` of a series sits at x = i and is labelled `labels[i]`.
    Categories(Vec<String>),
}

/// One named line.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// `(x, y)` points in drawing order.
    pub points: Vec<(f64, f64)>,
}

/// A line chart with markers.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    /// Title above the plot.
    pub title: String,
    /// X axis caption.
    pub x_label: String,
    /// Y axis caption.
    pub y_label: String,
    /// X mapping.
    pub x_axis: XAxis,
    /// Y mapping.
    pub y_axis: YAxis,
    /// The lines (at least one point in all).
    pub series: Vec<Series>,
    /// Draw a marker at every point (off for dense curves such as CDFs).
    pub markers: bool,
    /// A horizontal reference line (e.g. the baseline at 1).
    pub reference: Option<f64>,
}

/// Grouped horizontal bars: one group per row label, one bar per series in each.
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    /// Title above the plot.
    pub title: String,
    /// Value axis caption.
    pub value_label: String,
    /// Group (row) labels, top to bottom.
    pub groups: Vec<String>,
    /// Series (bar) names, in legend order.
    pub series: Vec<String>,
    /// `values[g][s]`: the bar of series `s` in group `g` (None: no data, no bar).
    pub values: Vec<Vec<Option<f64>>>,
    /// A vertical reference line (the baseline at 1).
    pub reference: Option<f64>,
}

/// A figure of either kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Figure {
    /// Lines.
    Lines(LineChart),
    /// Bars.
    Bars(BarChart),
}

impl Figure {
    /// True when there is nothing to draw (no point, no bar).
    pub fn is_empty(&self) -> bool {
        match self {
            Figure::Lines(c) => c.series.iter().all(|s| s.points.is_empty()),
            Figure::Bars(c) => c.values.iter().flatten().all(Option::is_none),
        }
    }

    /// The figure's data as CSV: `series,x,y` per point of a line chart (x the category
    /// label on a categorical axis), `group,series,value` per bar.
    pub fn to_csv(&self) -> String {
        let mut s = String::new();
        match self {
            Figure::Lines(c) => {
                s.push_str("series,x,y\n");
                for se in &c.series {
                    for &(x, y) in &se.points {
                        let x = match &c.x_axis {
                            XAxis::Categories(l) => l[x as usize].clone(),
                            _ => num(x),
                        };
                        let _ = writeln!(s, "{},{},{}", csv_field(&se.name), csv_field(&x), num(y));
                    }
                }
            }
            Figure::Bars(c) => {
                s.push_str("group,series,value\n");
                for (g, row) in c.groups.iter().zip(&c.values) {
                    for (name, v) in c.series.iter().zip(row) {
                        let v = v.map_or_else(|| "n/a".to_owned(), num);
                        let _ = writeln!(s, "{},{},{v}", csv_field(g), csv_field(name));
                    }
                }
            }
        }
        s
    }

    /// Write the figure to `path` in `format`, and its data to `path` with the
    /// extension `.csv`; returns the figure's path.
    pub fn write(&self, path: &Path, format: Format) -> anyhow::Result<PathBuf> {
        let path = path.to_path_buf();
        let csv = path.with_extension("csv");
        match format {
            Format::Svg => {
                let mut svg = String::new();
                {
                    let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
                    self.draw(&root)?;
                    root.present().map_err(|e| anyhow::anyhow!("drawing {}: {e}", path.display()))?;
                }
                svg.push('\n');
                write_atomic(&path, svg.as_bytes())?;
            }
            Format::Png => {
                // plotters' encoder writes only to a named file (and picks the format by
                // its extension): draw to a hidden `.png` beside the target, then rename,
                // so the figure appears whole like every other output.
                let name = path.file_name().context("figure path has a file name")?.to_string_lossy();
                let partial = path.with_file_name(format!(".{name}.partial.png"));
                {
                    let root = BitMapBackend::new(&partial, SIZE).into_drawing_area();
                    self.draw(&root)?;
                    root.present().map_err(|e| anyhow::anyhow!("drawing {}: {e}", path.display()))?;
                }
                std::fs::rename(&partial, &path)
                    .with_context(|| format!("renaming {} to {}", partial.display(), path.display()))?;
            }
        }
        write_atomic(&csv, self.to_csv().as_bytes())?;
        Ok(path)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        register_font();
        root.fill(&WHITE).map_err(err)?;
        match self {
            Figure::Lines(c) => draw_lines(c, root),
            Figure::Bars(c) => draw_bars(c, root),
        }
    }
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .unwrap_or_else(|_| panic!("the embedded font is a valid TrueType font"));
    });
}

fn err<E: std::error::Error + Send + Sync + 'static>(e: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow::anyhow!("drawing a figure: {e}")
}

/// A number as CSV/label text: integers without a fraction, others with up to 6
/// significant decimals, trailing zeros dropped.
pub fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let s = format!("{v:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_owned() }
}

/// The (lo, hi) of `values`, widened so a flat range still draws.
fn span(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return None;
    }
    if hi <= lo {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        return Some((lo - pad, hi + pad));
    }
    Some((lo, hi))
}

fn title_style() -> TextStyle<'static> {
    ("sans-serif", 22).into_font().into()
}

fn label_style() -> TextStyle<'static> {
    ("sans-serif", 15).into_font().into()
}

fn draw_lines<DB: DrawingBackend>(c: &LineChart, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let Some((x_lo, x_hi)) = span(c.series.iter().flat_map(|s| s.points.iter().map(|p| p.0))) else {
        bail!("figure {:?} has no points", c.title);
    };
    let (y_lo, y_hi) = match c.y_axis {
        YAxis::Tail => (0.0, TAIL_MAX),
        YAxis::Linear => {
            let ys = c.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).chain(c.reference);
            // The data's range with a margin (not from 0: ratios near 1 would be flat).
            let (lo, hi) = span(ys).expect("x had points");
            let pad = (hi - lo) * 0.1;
            let lo = if lo >= 0.0 { (lo - pad).max(0.0) } else { lo - pad };
            // Room above the data for the legend (upper left, ~20 px a series of a
            // ~470 px plot), so it never hides a point.
            let legend = ((20 * c.series.len() + 24) as f64 / 470.0).min(0.5);
            (lo, lo + (hi + pad - lo) / (1.0 - legend))
        }
    };
    // A margin on linear x so the end markers are not cut by the axes.
    let (x_lo, x_hi) = match c.x_axis {
        XAxis::Linear if c.markers => {
            let pad = (x_hi - x_lo) * 0.04;
            (x_lo - pad, x_hi + pad)
        }
        _ => (x_lo, x_hi),
    };
    let mut b = ChartBuilder::on(root);
    b.caption(&c.title, title_style()).margin(16).x_label_area_size(52).y_label_area_size(80);
    let series_style = |i: usize| ShapeStyle::from(&colour(i)).stroke_width(2);
    // The same mesh, series and legend for every x mapping; a macro because each
    // mapping gives the chart another coordinate type.
    macro_rules! finish {
        ($chart:expr, $x_fmt:expr, $x_labels:expr) => {{
            let mut chart = $chart;
            let y_fmt = |y: &f64| match c.y_axis {
                YAxis::Tail => tail_label(*y),
                YAxis::Linear => num((*y * 1e4).round() / 1e4),
            };
            let y_labels = if c.y_axis == YAxis::Tail { 6 } else { 8 };
            chart
                .configure_mesh()
                .x_desc(c.x_label.as_str())
                .y_desc(c.y_label.as_str())
                .x_label_formatter($x_fmt)
                .x_labels($x_labels)
                .y_label_formatter(&y_fmt)
                .y_labels(y_labels)
                .label_style(label_style())
                .axis_desc_style(label_style())
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(err)?;
            if let Some(r) = c.reference {
                chart
                    .draw_series(LineSeries::new([(x_lo, r), (x_hi, r)], BLACK.stroke_width(1)))
                    .map_err(err)?;
            }
            for (i, s) in c.series.iter().enumerate() {
                let style = series_style(i);
                chart
                    .draw_series(LineSeries::new(s.points.iter().copied(), style))
                    .map_err(err)?
                    .label(s.name.as_str())
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
                if c.markers {
                    chart
                        .draw_series(s.points.iter().map(|&p| Circle::new(p, 4, style.filled())))
                        .map_err(err)?;
                }
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .label_font(label_style())
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        }};
    }
    match &c.x_axis {
        XAxis::Linear => {
            let chart = b.build_cartesian_2d(x_lo..x_hi, y_lo..y_hi).map_err(err)?;
            finish!(chart, &|x: &f64| num((*x * 1e4).round() / 1e4), 10)
        }
        XAxis::Log => {
            if x_lo <= 0.0 {
                bail!("figure {:?}: a logarithmic x axis needs positive values (smallest {x_lo})", c.title);
            }
            // Ticks at 1, 2 and 5 times each power of ten in range (plotters' own log
            // ticks skip whole decades on short spans), and 3 too on spans under ~2
            // decades; every tick labelled.
            let mantissas: &[f64] =
                if x_hi / x_lo < 100.0 { &[1.0, 2.0, 3.0, 5.0] } else { &[1.0, 2.0, 5.0] };
            let ticks: Vec<f64> = (x_lo.log10().floor() as i32..=x_hi.log10().ceil() as i32)
                .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
                .filter(|t| (x_lo..=x_hi).contains(t))
                .collect();
            let x_coord: LogCoord<f64> = (x_lo..x_hi).log_scale().into();
            let chart =
                b.build_cartesian_2d(x_coord.with_key_points(ticks.clone()), y_lo..y_hi).map_err(err)?;
            // Three significant digits: ticks far below 1 (a load of 0.005) keep theirs.
            let fmt = |x: &f64| {
                let scale = 10f64.powi(2 - x.abs().log10().floor() as i32);
                num((*x * scale).round() / scale)
            };
            finish!(chart, &fmt, ticks.len().max(2))
        }
        XAxis::Categories(labels) => {
            let n = labels.len();
            let fmt = |x: &f64| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 {
                    labels.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            };
            let chart = b.build_cartesian_2d(-0.5..(n as f64 - 0.5), y_lo..y_hi).map_err(err)?;
            // One label per category: ask for exactly the integer points.
            finish!(chart, &fmt, n)
        }
    }
    Ok(())
}

fn draw_bars<DB: DrawingBackend>(c: &BarChart, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let values = c.values.iter().flatten().flatten().copied().chain(c.reference);
    let Some((_, hi)) = span(values) else {
        bail!("figure {:?} has no bars", c.title);
    };
    let groups = c.groups.len();
    let longest = c.groups.iter().map(|g| g.chars().count()).max().unwrap_or(0);
    // Group labels are drawn by hand at the middle of each group (8 px per character).
    let label_area = (longest as u32 * 8 + 16).clamp(60, 360);
    let mut chart = ChartBuilder::on(root)
        .caption(&c.title, title_style())
        .margin(16)
        .x_label_area_size(52)
        .y_label_area_size(label_area)
        // Room on the right for the legend.
        .build_cartesian_2d(0.0..hi * 1.3, 0.0..groups as f64)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(c.value_label.as_str())
        .x_label_formatter(&|x: &f64| num((*x * 1e4).round() / 1e4))
        .y_labels(0)
        .disable_y_mesh()
        .label_style(label_style())
        .axis_desc_style(label_style())
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    let n = c.series.len().max(1) as f64;
    let band = 0.8 / n;
    for (s, name) in c.series.iter().enumerate() {
        let col = colour(s);
        // Group g occupies y in [groups - g - 1, groups - g): the first group on top.
        let bars = c.values.iter().enumerate().filter_map(|(g, row)| {
            let v = row.get(s).copied().flatten()?;
            let top = (groups - g) as f64 - 0.1 - band * s as f64;
            Some(Rectangle::new([(0.0, top - band), (v, top)], col.filled()))
        });
        chart
            .draw_series(bars)
            .map_err(err)?
            .label(name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], col.filled()));
    }
    if let Some(r) = c.reference {
        chart
            .draw_series(LineSeries::new([(r, 0.0), (r, groups as f64)], BLACK.stroke_width(1)))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font(label_style())
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    for (g, label) in c.groups.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(0.0, (groups - g) as f64 - 0.5));
        let style = label_style().pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Right,
            plotters::style::text_anchor::VPos::Center,
        ));
        root.draw(&Text::new(label.as_str(), (px - 8, py), style)).map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tail axis puts p90, p99, … p99.999 at 1, 2, … 5, labelled in percent.
    #[test]
    fn the_tail_axis_spaces_the_nines_evenly() {
        for (q, y) in [(0.0, 0.0), (0.9, 1.0), (0.99, 2.0), (0.999, 3.0), (0.99999, 5.0), (1.0, 5.0)] {
            assert!((tail_y(q) - y).abs() < 1e-9, "q {q}");
        }
        let labels: Vec<String> = (0..=5).map(|y| tail_label(y as f64)).collect();
        assert_eq!(labels, ["0", "90", "99", "99.9", "99.99", "99.999"]);
        assert_eq!(tail_label(1.5), "");
    }

    #[test]
    fn numbers_print_short_and_formats_follow_flag_then_extension() {
        assert_eq!((num(3.0), num(0.25), num(1.0 / 3.0)), ("3".into(), "0.25".into(), "0.333333".into()));
        assert_eq!(Format::choose(None, Some(Path::new("a.PNG"))).unwrap(), Format::Png);
        let e = Format::choose(Some(Format::Svg), Some(Path::new("a.png"))).unwrap_err().to_string();
        assert!(e.contains("--format svg contradicts its extension .png"), "{e}");
        assert_eq!(Format::choose(Some(Format::Png), Some(Path::new("a.PNG"))).unwrap(), Format::Png);
        assert_eq!(Format::choose(Some(Format::Png), Some(Path::new("fig.img"))).unwrap(), Format::Png);
        assert_eq!(Format::choose(None, None).unwrap(), Format::Svg);
        assert!(Format::choose(None, Some(Path::new("a.jpg"))).is_err());
    }
}
