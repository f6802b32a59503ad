//! Rendering: each chart as PNG or SVG (plotters), and the report as
//! Markdown and HTML.

use super::*;

/// A figure, measured and read.
pub struct Done<'a> {
    /// The figure.
    pub figure: &'a Figure,
    /// What its runs say.
    pub reading: Reading,
    /// Image files written (PNG names, beside the report).
    pub images: Vec<String>,
}

/// Draws `chart` to `path` (.png or .svg).
pub fn draw(path: &Path, chart: &Chart) -> Result<(), ReportError> {
    let name = path.display().to_string();
    match path.extension().and_then(|e| e.to_str()) {
        Some("svg") => draw_on(SVGBackend::new(path, (900, 560)).into_drawing_area(), chart, &name),
        Some("png") => draw_on(BitMapBackend::new(path, (900, 560)).into_drawing_area(), chart, &name),
        _ => Err(ReportError::PlotKind(name)),
    }
}

pub(super) fn draw_on<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    chart: &Chart,
    path: &str,
) -> Result<(), ReportError> {
    report::register_font();
    let err = |e: &dyn std::fmt::Display| ReportError::Plot {
        path: path.to_string(),
        message: e.to_string(),
    };
    let finite = || chart.series.iter().flat_map(|s| s.1.iter()).filter(|p| p.1.is_finite());
    let bars = !chart.categories.is_empty();
    let max_x = if bars {
        chart.categories.len() as f64 + 0.5
    } else {
        finite().map(|p| p.0).fold(1.0, f64::max) * 1.05 + 0.5
    };
    let max_y = finite().map(|p| p.1).fold(0.0, f64::max).max(1e-9);
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut c = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(if bars { 0.5 } else { 0.0 }..max_x, 0.0..max_y * 1.15)
        .map_err(|e| err(&e))?;
    let categories = &chart.categories;
    c.configure_mesh()
        .x_desc(chart.x_desc)
        .y_desc(chart.y_desc)
        .x_labels(if bars { categories.len() } else { 10 })
        .x_label_formatter(&|v| {
            if (v - v.round()).abs() > 1e-6 {
                String::new()
            } else if bars {
                let i = v.round() as usize;
                categories.get(i.wrapping_sub(1)).cloned().unwrap_or_default()
            } else {
                format!("{v:.0}")
            }
        })
        .y_label_formatter(&|v| {
            if *v == 0.0 {
                "0".to_string()
            } else if *v >= 1e6 {
                format!("{:.1}M", v / 1e6)
            } else if *v >= 1e4 {
                format!("{:.0}k", v / 1e3)
            } else if *v >= 10.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        })
        .light_line_style(WHITE)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| err(&e))?;
    let n = chart.series.len().max(1) as f64;
    for (i, (label, pts)) in chart.series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = pts.iter().copied().filter(|p| p.1.is_finite()).collect();
        if bars {
            // Each category's group of bars, this series in slot `i`.
            let w = 0.8 / n;
            let left = |x: f64| x - 0.4 + w * i as f64;
            c.draw_series(
                pts.iter()
                    .map(|&(x, y)| Rectangle::new([(left(x), 0.0), (left(x) + w * 0.9, y)], color.filled())),
            )
            .map_err(|e| err(&e))?
            .label(label.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
            continue;
        }
        c.draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        c.draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))
            .map_err(|e| err(&e))?;
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// `report.md`.
pub fn markdown(done: &[Done<'_>], header: &str) -> String {
    let mut s = format!("# heirloom figures\n\n{header}\n\n| figure | verdict |\n|---|---|\n");
    for d in done {
        s += &format!("| {} | {} |\n", d.figure.name, d.reading.verdict.text());
    }
    for d in done {
        let f = d.figure;
        s += &format!("\n## {}\n\n*{}*\n\n", f.name, f.source);
        s += &format!("**The paper.** {}\n\n", f.paper);
        for img in &d.images {
            s += &format!("![{}]({img})\n\n", f.name);
        }
        s += &format!("**Here.** {}\n\n", d.reading.ours);
        s += &format!("**Verdict: {}.** Rule: {}.\n", d.reading.verdict.text(), (f.rule)());
    }
    s
}

/// `report.html`: the same, self-contained (images beside it, no script).
pub fn html(done: &[Done<'_>], header: &str) -> String {
    let mut s = String::from(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>heirloom figures</title>\n\
         <style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}\
         img{max-width:100%}td,th{border:1px solid #ccc;padding:.2em .6em}table{border-collapse:collapse}\
         .reproduced{color:#075}.direction{color:#a60}.not{color:#b00}</style></head><body>\n",
    );
    s += &format!(
        "<h1>heirloom figures</h1>\n<p>{}</p>\n<table><tr><th>figure</th><th>verdict</th></tr>\n",
        esc(header)
    );
    let class = |v: Verdict| match v {
        Verdict::Reproduced => "reproduced",
        Verdict::Direction => "direction",
        Verdict::NotReproduced => "not",
    };
    for d in done {
        s += &format!(
            "<tr><td><a href=\"#{0}\">{0}</a></td><td class=\"{1}\">{2}</td></tr>\n",
            d.figure.name,
            class(d.reading.verdict),
            d.reading.verdict.text()
        );
    }
    s += "</table>\n";
    for d in done {
        let f = d.figure;
        s += &format!("<h2 id=\"{0}\">{0}</h2>\n<p><em>{1}</em></p>\n", f.name, esc(f.source));
        s += &format!("<p><b>The paper.</b> {}</p>\n", esc(f.paper));
        for img in &d.images {
            s += &format!("<p><img src=\"{img}\" alt=\"{}\"></p>\n", f.name);
        }
        s += &format!("<p><b>Here.</b> {}</p>\n", esc(&d.reading.ours));
        s += &format!(
            "<p class=\"{}\"><b>Verdict: {}.</b> Rule: {}.</p>\n",
            class(d.reading.verdict),
            d.reading.verdict.text(),
            esc(&(f.rule)())
        );
    }
    s += "</body></html>\n";
    s
}

/// Writes an own figure's samples as JSON (`{"samples": [...]}`) and CSV.
pub fn write_samples(json: &Path, csv_path: &Path, samples: &[IndexSample]) -> Result<(), ReportError> {
    let io = |p: &Path, source: std::io::Error| ReportError::Io {
        path: p.display().to_string(),
        source,
    };
    let text = serde_json::to_string_pretty(
        &serde_json::json!({ "machine": report::MachineJson::this(), "samples": samples }),
    )
    .map_err(|e| io(json, e.into()))?;
    std::fs::write(json, text + "\n").map_err(|e| io(json, e))?;
    let mut w = csv::Writer::from_path(csv_path).map_err(|source| ReportError::Csv {
        path: csv_path.display().to_string(),
        source,
    })?;
    for s in samples {
        w.serialize(s).map_err(|source| ReportError::Csv {
            path: csv_path.display().to_string(),
            source,
        })?;
    }
    w.flush().map_err(|e| io(csv_path, e))
}
