//! The result table: one row per figure, the median of its repeats per column.

/// What the three value columns of a section hold, and which two ratios follow them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Columns {
    /// Header of each value column.
    pub names: [&'static str; 3],
    /// Each ratio column is `names[a] / names[b]` for `(a, b)`.
    pub ratios: [(usize, usize); 2],
}

/// The columns of the comparison rows: Switchyard, rmcp, the raw reference.
pub const SERVERS: Columns = Columns { names: ["OURS", "RMCP", "RAW"], ratios: [(0, 1), (0, 2)] };

/// One figure measured in up to three columns (see [`Columns`]; by default ours, rmcp, raw).
pub struct Figure {
    name: String,
    samples: [Vec<f64>; 3],
}

impl Figure {
    /// A figure named `name` (which says `(higher)` or `(lower)`), with no samples yet.
    pub fn new(name: String) -> Figure {
        Figure { name, samples: Default::default() }
    }

    /// Adds one sample for column `col` (0 ours, 1 rmcp, 2 raw in the comparison rows).
    pub fn add(&mut self, col: usize, value: f64) {
        self.samples[col].push(value);
    }

    /// The median of each column (`None` for a column without finite samples).
    pub fn medians(&self) -> [Option<f64>; 3] {
        [self.median(0), self.median(1), self.median(2)]
    }

    fn median(&self, col: usize) -> Option<f64> {
        let mut v: Vec<f64> = self.samples[col].iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        // An even count (the HTTP rows' 18 rounds) has two middle values: their mean.
        Some(if v.len().is_multiple_of(2) { (v[mid - 1] + v[mid]) / 2.0 } else { v[mid] })
    }
}

enum Line {
    Section(Columns),
    Row(Figure),
    Note(String),
}

/// All figures of a run, in the order measured.
#[derive(Default)]
pub struct Table {
    lines: Vec<Line>,
}

impl Table {
    /// Appends a figure.
    pub fn push(&mut self, f: Figure) {
        self.lines.push(Line::Row(f));
    }

    /// The figures pushed from now on are in `columns` (until the next section).
    pub fn section(&mut self, columns: Columns) {
        self.lines.push(Line::Section(columns));
    }

    /// Appends the lines of `other` (measured separately, e.g. to be written elsewhere too).
    pub fn append(&mut self, other: Table) {
        self.lines.extend(other.lines);
    }

    /// A `# text` line at this point, e.g. why a group or a column was skipped.
    pub fn note(&mut self, text: String) {
        self.lines.push(Line::Note(text));
    }

    /// `NAME<TAB>OURS<TAB>RMCP<TAB>RAW<TAB>OURS/RMCP<TAB>OURS/RAW` lines, with a header line;
    /// a section in other columns starts after a blank line with a header of its own.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut columns = SERVERS;
        // The header is written once a section has something to show, so a run without the
        // comparison rows does not start with their header.
        let mut shown: Option<Columns> = None;
        for line in &self.lines {
            match line {
                Line::Section(c) => columns = *c,
                Line::Note(text) => {
                    show_header(&mut out, columns, &mut shown);
                    out.push_str(&format!("# {text}\n"));
                }
                Line::Row(f) => {
                    show_header(&mut out, columns, &mut shown);
                    let values = [f.median(0), f.median(1), f.median(2)];
                    let ratio = |(a, b): (usize, usize)| match (values[a], values[b]) {
                        (Some(a), Some(b)) if b != 0.0 => format!("{:.2}", a / b),
                        _ => "n/a".to_owned(),
                    };
                    out.push_str(&format!(
                        "{}\t{}\t{}\t{}\t{}\t{}\n",
                        f.name,
                        value(values[0]),
                        value(values[1]),
                        value(values[2]),
                        ratio(columns.ratios[0]),
                        ratio(columns.ratios[1])
                    ));
                }
            }
        }
        if shown.is_none() {
            out.push_str(&header_line(columns));
        }
        out
    }
}

fn show_header(out: &mut String, columns: Columns, shown: &mut Option<Columns>) {
    if *shown != Some(columns) {
        if shown.is_some() {
            out.push('\n');
        }
        out.push_str(&header_line(columns));
        *shown = Some(columns);
    }
}

fn header_line(c: Columns) -> String {
    let [a, b, d] = c.names;
    let ratio = |(x, y): (usize, usize)| format!("{}/{}", c.names[x], c.names[y]);
    format!("NAME\t{a}\t{b}\t{d}\t{}\t{}\n", ratio(c.ratios[0]), ratio(c.ratios[1]))
}

fn value(v: Option<f64>) -> String {
    match v {
        None => "n/a".to_owned(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.0}"),
        Some(x) if x.abs() >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}
