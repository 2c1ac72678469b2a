//! Charts drawn on the server as inline SVG (no chart library, no script: the strict CSP
//! stays), and the tables every page shows, which also answer as CSV. A chart carries an
//! accessible title and description and comes with its data as a table, for screen readers
//! and for copying.

use crate::dashboard::figures::{Figures, Measure};
use maud::{html, Markup, PreEscaped};
use std::fmt::Write as _;

mod table;
pub use table::{export, Table};

/// The y axis's ticks: about `target` intervals of a round step (1, 2, 2.5 or 5 x 10^k)
/// from a multiple of the step at or below `lo` to one at or above `hi`, so the labels read
/// 80, 85, 90 rather than 81.57. No step needs more than `max_decimals` decimals (a percent
/// axis never reads 85.25). Returns the step and the ticks, lowest first.
fn nice_ticks(lo: f64, hi: f64, target: u32, max_decimals: u32) -> (f64, Vec<f64>) {
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let raw = (hi - lo) / f64::from(target.max(1));
    let magnitude = 10f64.powf(raw.log10().floor());
    let smallest = 10f64.powi(-(max_decimals as i32));
    let step = [1.0, 2.0, 2.5, 5.0, 10.0, 20.0]
        .iter()
        .map(|m| m * magnitude)
        .filter(|s| tick_decimals(*s) <= max_decimals as usize)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
        .max(smallest);
    // Snap to the step's grid; the small allowance keeps 90.0000001 from opening a new step.
    let first = (lo / step + 1e-9).floor();
    let last = (hi / step - 1e-9).ceil().max(first + 1.0);
    let ticks = (0..=((last - first).round() as i64))
        .map(|k| {
            let v = (first + k as f64) * step;
            // Round away binary noise (0.30000000000000004).
            let scale = 10f64.powi(tick_decimals(step) as i32);
            (v * scale).round() / scale
        })
        .collect();
    (step, ticks)
}

/// The decimals a tick of this step needs (2.5 needs one, 0.25 two, 50 none).
fn tick_decimals(step: f64) -> usize {
    (0..=6)
        .find(|d| {
            let scaled = step * 10f64.powi(*d);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(6) as usize
}

/// A y-axis label in the chart's measure, with the decimals its step needs (never more than
/// the measure's own).
fn tick(figures: &Figures, measure: Measure, v: f64, step: f64) -> String {
    let most = figures.decimals(measure);
    let needed = (tick_decimals(step) as u32).min(most);
    // Money shows whole units or all its cents ($2.50, never $2.5).
    let decimals = if measure.is_money() && needed > 0 {
        most
    } else {
        needed
    };
    figures.with_decimals(measure, v, decimals).shown
}

/// The share of the y axis's height the data's spread fills at least, so that a 2 % swing
/// does not look like a cliff: an axis not drawn from zero spans at least this share of its
/// largest value (90 to 92 draws on an axis of about 75 to 95).
const MIN_SPAN_OF_VALUE: f64 = 0.2;

/// A category label cut to the width it has (about 6.5 px a character at 11 px), with `…`.
fn fit_label(label: &str, width_px: f64) -> String {
    let room = ((width_px / 6.5).floor() as usize).max(2);
    if label.chars().count() <= room {
        label.to_owned()
    } else {
        let mut cut: String = label.chars().take(room - 1).collect();
        cut.push('…');
        cut
    }
}

/// The part of each category label that tells it from the others: the words every label
/// starts or ends with are left out (`Demo Storage 0001`, `Demo Storage 0002` read `0001`,
/// `0002`), so labels cut to their room do not all read `Demo Sto…`. Labels without a space
/// (dates, months, sizes) and a single label are kept whole; the full label is the tooltip.
fn distinct_parts(labels: &[String]) -> Vec<String> {
    let words: Vec<Vec<&str>> = labels.iter().map(|l| l.split(' ').collect()).collect();
    let shortest = words.iter().map(Vec::len).min().unwrap_or(0);
    if labels.len() < 2 || shortest < 2 {
        return labels.to_vec();
    }
    let first = &words[0];
    let mut head = 0;
    while head + 1 < shortest && words.iter().all(|w| w[head] == first[head]) {
        head += 1;
    }
    let mut tail = 0;
    while head + tail + 1 < shortest
        && words
            .iter()
            .all(|w| w[w.len() - 1 - tail] == first[first.len() - 1 - tail])
    {
        tail += 1;
    }
    let parts: Vec<String> = words
        .iter()
        .map(|w| w[head..w.len() - tail].join(" "))
        .collect();
    let mut unique = parts.clone();
    unique.sort();
    unique.dedup();
    if unique.len() == parts.len() {
        parts
    } else {
        labels.to_vec()
    }
}

/// How a series is drawn.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Line,
    /// A dashed line (a reference: a target, a band edge).
    Dashed,
    Bar,
}

pub struct Series {
    pub name: String,
    pub kind: Kind,
    /// One value per label of the chart; `None` is a gap.
    pub values: Vec<Option<f64>>,
}

impl Series {
    pub fn new(name: impl Into<String>, kind: Kind, values: Vec<Option<f64>>) -> Self {
        Self {
            name: name.into(),
            kind,
            values,
        }
    }
}

pub struct Chart {
    /// The id of the figure; its table view is `<id>-table`.
    pub id: String,
    pub title: String,
    /// What the values are (`per sq ft`, `%`), for the table view's headers.
    pub unit: String,
    /// How the values read (money of the company's currency, a percent, a count).
    pub measure: Measure,
    pub figures: Figures,
    /// The x axis: one label per point (dates, months, names).
    pub labels: Vec<String>,
    pub series: Vec<Series>,
    /// Draw the y axis from zero (bars always do).
    pub from_zero: bool,
}

const W: f64 = 720.0;
const H: f64 = 240.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 40.0;

/// Colours by series position (presentation attributes, which the CSP allows).
const COLOURS: [&str; 8] = [
    "#1f5fbf", "#b3261e", "#1e6b3a", "#8a5a00", "#6b3fa0", "#00838f", "#5b6472", "#c2185b",
];

/// The plot area's width and height: the drawing less its margins (the axes' labels).
const PLOT_W: f64 = W - LEFT - RIGHT;
const PLOT_H: f64 = H - TOP - BOTTOM;

/// Where things fall in a drawn chart: `n` points across, values from `lo` (bottom) to `hi`.
struct Plot {
    n: usize,
    lo: f64,
    hi: f64,
}

impl Plot {
    /// The x of point `i`: the middle of its slot.
    fn x(&self, i: usize) -> f64 {
        LEFT + PLOT_W * (i as f64 + 0.5) / self.n.max(1) as f64
    }

    /// The y of value `v`.
    fn y(&self, v: f64) -> f64 {
        TOP + PLOT_H * (1.0 - (v - self.lo) / (self.hi - self.lo))
    }

    /// One bar series, the `bi`-th of the chart's bars: a bar of `bar_w` per finite value,
    /// from zero to the value, at its place in the point's `slot`.
    fn draw_bars(
        &self,
        s: &Series,
        slot: f64,
        bar_w: f64,
        bi: usize,
        colour: &str,
        body: &mut String,
    ) {
        for (i, v) in s.values.iter().enumerate() {
            let Some(v) = v.filter(|v| v.is_finite()) else {
                continue;
            };
            let x0 = LEFT + slot * i as f64 + slot * 0.1 + bar_w * bi as f64;
            let (y0, y1) = (self.y(v.max(0.0)), self.y(v.min(0.0)));
            let _ = write!(
                body,
                r#"<rect x="{x0:.1}" y="{y0:.1}" width="{bar_w:.1}" height="{:.1}" fill="{colour}"/>"#,
                (y1 - y0).max(0.5)
            );
        }
    }

    /// One line series (dashed for a reference): a polyline per unbroken run of values.
    fn draw_line(&self, s: &Series, colour: &str, body: &mut String) {
        let dash = if s.kind == Kind::Dashed {
            r#" stroke-dasharray="5 4""#
        } else {
            ""
        };
        for run in runs(&s.values) {
            let points = run
                .iter()
                .map(|&(i, v)| format!("{:.1},{:.1}", self.x(i), self.y(v)))
                .collect::<Vec<_>>()
                .join(" ");
            let _ = write!(
                body,
                r#"<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="{points}"/>"#
            );
        }
    }
}

impl Chart {
    /// The data's extent (from zero for bars and `from_zero`), widened to round ticks: the
    /// step, and the ticks from the axis's low end to its high end.
    fn range(&self) -> Option<(f64, Vec<f64>)> {
        let mut all = self
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied())
            .filter(|v| v.is_finite())
            .peekable();
        all.peek()?;
        let (mut lo, mut hi) = all.fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v), h.max(v)));
        if self.from_zero || self.series.iter().any(|s| s.kind == Kind::Bar) {
            lo = lo.min(0.0);
            hi = hi.max(0.0);
        } else {
            let least = MIN_SPAN_OF_VALUE * lo.abs().max(hi.abs());
            if hi - lo < least {
                let mid = (hi + lo) / 2.0;
                let (l, h) = (mid - least / 2.0, mid + least / 2.0);
                // Values on one side of zero keep their axis on that side.
                (lo, hi) = if lo >= 0.0 && l < 0.0 {
                    (0.0, least)
                } else if hi <= 0.0 && h > 0.0 {
                    (-least, 0.0)
                } else {
                    (l, h)
                };
            }
        }
        Some(nice_ticks(lo, hi, 4, self.figures.decimals(self.measure)))
    }

    /// The SVG of the chart: axes with a few ticks, one polyline (or bars) per series, and a
    /// legend; `role="img"` with a title and a description naming the series and the range.
    pub fn svg(&self) -> Markup {
        let title_id = format!("{}-title", self.id);
        let desc_id = format!("{}-desc", self.id);
        let Some((step, ticks)) = self.range() else {
            return html! { p class="muted" id=(self.id) { (self.title) ": no data in this range." } };
        };
        let plot = Plot {
            n: self.labels.len(),
            lo: ticks[0],
            hi: ticks[ticks.len() - 1],
        };
        let mut body = String::new();
        self.draw_y_axis(&plot, step, &ticks, &mut body);
        self.draw_x_labels(&plot, &mut body);
        self.draw_series(&plot, &mut body);
        html! {
            figure class="chart" {
                svg id=(self.id) class="chart" role="img" viewBox={"0 0 " (W) " " (H)}
                    aria-labelledby={(title_id) " " (desc_id)} xmlns="http://www.w3.org/2000/svg" {
                    title id=(title_id) { (self.title) }
                    desc id=(desc_id) { (self.description(&plot)) }
                    (PreEscaped(body))
                }
                (self.legend())
            }
        }
    }

    /// The y axis: a grid line and a label at each tick.
    fn draw_y_axis(&self, plot: &Plot, step: f64, ticks: &[f64], body: &mut String) {
        for &v in ticks {
            let yy = plot.y(v);
            let _ = write!(
                body,
                r##"<line x1="{LEFT}" x2="{:.1}" y1="{yy:.1}" y2="{yy:.1}" stroke="#d8dde5"/><text class="y-label" x="{:.1}" y="{:.1}" text-anchor="end" font-size="11" fill="#5b6472">{}</text>"##,
                W - RIGHT,
                LEFT - 4.0,
                yy + 4.0,
                tick(&self.figures, self.measure, v, step)
            );
        }
    }

    /// The x labels: at most about eight, evenly spread, each cut to the room it has so that
    /// neighbours never overlap (the full label is the text's tooltip).
    fn draw_x_labels(&self, plot: &Plot, body: &mut String) {
        let n = plot.n;
        let step = n.div_ceil(8).max(1);
        let room = PLOT_W / n.max(1) as f64 * step as f64 - 6.0;
        let parts = distinct_parts(&self.labels);
        for i in (0..n).step_by(step) {
            let full = &self.labels[i];
            let shown = fit_label(&parts[i], room);
            let _ = write!(
                body,
                r##"<text class="x-label" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11" fill="#5b6472">{}{}</text>"##,
                plot.x(i),
                H - BOTTOM + 16.0,
                if &shown == full {
                    String::new()
                } else {
                    maud::html! { title { (full) } }.into_string()
                },
                maud::html! { (shown) }.into_string()
            );
        }
    }

    /// Every series in its colour: the bars of a label side by side in its slot (in the
    /// order of the bar series), a line as one polyline per unbroken run of values.
    fn draw_series(&self, plot: &Plot, body: &mut String) {
        let bars: Vec<&Series> = self.series.iter().filter(|s| s.kind == Kind::Bar).collect();
        let slot = PLOT_W / plot.n.max(1) as f64;
        let bar_w = (slot * 0.8 / bars.len().max(1) as f64).max(1.0);
        for (si, s) in self.series.iter().enumerate() {
            let colour = COLOURS[si % COLOURS.len()];
            match s.kind {
                Kind::Bar => {
                    let bi = bars.iter().position(|b| std::ptr::eq(*b, s)).unwrap_or(0);
                    plot.draw_bars(s, slot, bar_w, bi, colour, body);
                }
                Kind::Line | Kind::Dashed => plot.draw_line(s, colour, body),
            }
        }
    }

    /// The description screen readers give: the series, the points and the axis's range.
    fn description(&self, plot: &Plot) -> String {
        format!(
            "{} series ({}) over {} points from {} to {}; values {} to {} {}.",
            self.series.len(),
            self.series
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            plot.n,
            self.labels.first().map_or("", String::as_str),
            self.labels.last().map_or("", String::as_str),
            self.figures.cell(self.measure, plot.lo),
            self.figures.cell(self.measure, plot.hi),
            self.unit
        )
    }

    /// The legend under the chart: its title, then each series' key (a swatch for bars, a
    /// stroke for lines) and name.
    fn legend(&self) -> Markup {
        html! {
            figcaption class="legend" {
                b { (self.title) }
                @for (si, s) in self.series.iter().enumerate() {
                    span class="key" {
                        svg width="18" height="10" aria-hidden="true" {
                            @if s.kind == Kind::Bar {
                                rect width="18" height="10" fill=(COLOURS[si % COLOURS.len()]) {}
                            } @else {
                                line x1="0" x2="18" y1="5" y2="5" stroke=(COLOURS[si % COLOURS.len()]) stroke-width="2"
                                    stroke-dasharray=[(s.kind == Kind::Dashed).then_some("5 4")] {}
                            }
                        }
                        " " (s.name)
                    }
                }
            }
        }
    }

    /// The chart's data as a table: one row per label, one column per series.
    pub fn table(&self, id: impl Into<String>) -> Table {
        let mut t = Table::new(id, format!("{} (table view)", self.title), &["Point"]);
        t.headers.extend(
            self.series
                .iter()
                .map(|s| format!("{} ({})", s.name, self.unit)),
        );
        for (i, label) in self.labels.iter().enumerate() {
            let mut row = vec![crate::dashboard::figures::Cell::text(label.clone())];
            row.extend(self.series.iter().map(|s| {
                self.figures
                    .cell(self.measure, s.values.get(i).copied().flatten())
            }));
            t.row(row);
        }
        t
    }
}

/// The chart with its table view folded beneath it.
pub fn with_table(chart: &Chart, table: &Table, query: &str) -> Markup {
    html! {
        (chart.svg())
        details class="table-view" {
            summary { "Table view: " (chart.title) }
            (table.render_figures(query))
        }
    }
}

/// The unbroken runs of finite values, with their positions.
fn runs(values: &[Option<f64>]) -> Vec<Vec<(usize, f64)>> {
    let mut out: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut current = Vec::new();
    for (i, v) in values.iter().enumerate() {
        match v.filter(|v| v.is_finite()) {
            Some(v) => current.push((i, v)),
            None if !current.is_empty() => out.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests;
