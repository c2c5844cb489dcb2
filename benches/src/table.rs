//! The result table: one row per figure, the median of its repeats per server.

/// One figure measured on up to three servers (columns: ours, rmcp, raw).
pub struct Figure {
    name: String,
    samples: [Vec<f64>; 3],
}

impl Figure {
    /// A figure named `name` (which says `(higher)` or `(lower)`), with no samples yet.
    pub fn new(name: String) -> Figure {
        Figure { name, samples: Default::default() }
    }

    /// Adds one sample for column `col` (0 ours, 1 rmcp, 2 raw).
    pub fn add(&mut self, col: usize, value: f64) {
        self.samples[col].push(value);
    }

    fn median(&self, col: usize) -> Option<f64> {
        let mut v: Vec<f64> = self.samples[col].iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(v[v.len() / 2])
    }
}

/// All figures of a run, in the order measured.
#[derive(Default)]
pub struct Table {
    rows: Vec<Figure>,
}

impl Table {
    /// Appends a figure.
    pub fn push(&mut self, f: Figure) {
        self.rows.push(f);
    }

    /// `NAME<TAB>OURS<TAB>RMCP<TAB>RAW<TAB>OURS/RMCP<TAB>OURS/RAW` lines, with a header line.
    pub fn render(&self) -> String {
        let mut out = String::from("NAME\tOURS\tRMCP\tRAW\tOURS/RMCP\tOURS/RAW\n");
        for f in &self.rows {
            let [ours, rmcp, raw] = [f.median(0), f.median(1), f.median(2)];
            let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) if b != 0.0 => format!("{:.2}", a / b),
                _ => "n/a".to_owned(),
            };
            out.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\t{}\n",
                f.name,
                value(ours),
                value(rmcp),
                value(raw),
                ratio(ours, rmcp),
                ratio(ours, raw)
            ));
        }
        out
    }
}

fn value(v: Option<f64>) -> String {
    match v {
        None => "n/a".to_owned(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.0}"),
        Some(x) if x.abs() >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}
