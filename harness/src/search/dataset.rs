//! The data of a search: a CSV with a header of column names, its rows the lanes. The inputs
//! form an `ndarray` table (rows by inputs, column-major, so each input is one contiguous
//! column to bind as lanes); the target is one column. Every problem with the data is an error
//! that names the file, the line and the column.

use super::fnv::Fnv;
use ndarray::{Array1, Array2, ShapeBuilder};
use std::path::Path;

/// The population variance of `y` (divided by its length).
pub fn variance(y: &[f64]) -> f64 {
    let n = y.len() as f64;
    let mean = y.iter().sum::<f64>() / n;
    y.iter().map(|t| (t - mean) * (t - mean)).sum::<f64>() / n
}

/// Rows and columns as read: numbers, and the `split` column's words when there is one.
#[derive(Clone, Debug)]
pub struct Csv {
    /// Where it came from (for messages).
    pub file: String,
    /// Column names, in file order, `split` excluded.
    pub names: Vec<String>,
    /// Columns parallel to `names`.
    pub columns: Vec<Vec<f64>>,
    /// The file line of each row (the header is line 1).
    pub lines: Vec<usize>,
    /// Each row's `split` word, when the file has that column.
    pub split: Option<Vec<String>>,
    /// Columns kept as words ([`Csv::parse_keeping`]): name and one word per row.
    pub words: Vec<(String, Vec<String>)>,
}

impl Csv {
    /// Reads a CSV file.
    pub fn read(path: &Path) -> Result<Csv, String> {
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let text = utf8(bytes, &path.display().to_string())?;
        Csv::parse(&text, &path.display().to_string())
    }

    /// Parses CSV text with a header; `file` names it in messages.
    pub fn parse(text: &str, file: &str) -> Result<Csv, String> {
        Csv::parse_keeping(text, file, &[])
    }

    /// A column kept as words, by name.
    pub fn kept(&self, name: &str) -> Option<&[String]> {
        self.words
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, w)| w.as_slice())
    }

    /// Parses CSV text with a header, keeping the columns named in `words` as words (labels
    /// such as a trajectory's name) rather than numbers.
    pub fn parse_keeping(text: &str, file: &str, words: &[&str]) -> Result<Csv, String> {
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .flexible(true)
            .from_reader(text.as_bytes());
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| format!("{file}: cannot read the header: {e}"))?
            .iter()
            .map(str::to_string)
            .collect();
        if header.iter().all(String::is_empty) {
            return Err(format!(
                "{file}: the file is empty (no header of column names)"
            ));
        }
        for (i, h) in header.iter().enumerate() {
            if h.is_empty() {
                return Err(format!("{file}:1: column {} has no name", i + 1));
            }
            if header[..i].contains(h) {
                return Err(format!("{file}:1: column `{h}` appears twice"));
            }
        }
        let split_col = header.iter().position(|h| h == "split");
        let is_word = |i: usize| words.contains(&header[i].as_str());
        let names: Vec<String> = header
            .iter()
            .enumerate()
            .filter(|&(i, _)| Some(i) != split_col && !is_word(i))
            .map(|(_, h)| h.clone())
            .collect();
        let mut kept: Vec<(String, Vec<String>)> = (0..header.len())
            .filter(|&i| is_word(i))
            .map(|i| (header[i].clone(), Vec::new()))
            .collect();
        let mut columns = vec![Vec::new(); names.len()];
        let mut split = split_col.map(|_| Vec::new());
        let mut lines = Vec::new();
        for rec in reader.records() {
            let rec = rec.map_err(|e| match e.position() {
                Some(p) => format!("{file}:{}: {e}", p.line()),
                None => format!("{file}: {e}"),
            })?;
            let line = rec
                .position()
                .map_or(lines.len() + 2, |p| p.line() as usize);
            if rec.len() != header.len() {
                return Err(format!(
                    "{file}:{line}: {} cells where the header has {} columns",
                    rec.len(),
                    header.len()
                ));
            }
            let mut k = 0;
            for (i, cell) in rec.iter().enumerate() {
                if Some(i) == split_col {
                    if let Some(s) = &mut split {
                        s.push(cell.to_string());
                    }
                    continue;
                }
                if is_word(i) {
                    if let Some((_, w)) = kept.iter_mut().find(|(n, _)| *n == header[i]) {
                        w.push(cell.to_string());
                    }
                    continue;
                }
                if cell.is_empty() {
                    return Err(format!("{file}:{line}: column `{}` is empty", header[i]));
                }
                let x: f64 = cell.parse().map_err(|_| {
                    format!(
                        "{file}:{line}: column `{}`: `{cell}` is not a number",
                        header[i]
                    )
                })?;
                columns[k].push(x);
                k += 1;
            }
            lines.push(line);
        }
        Ok(Csv {
            file: file.to_string(),
            names,
            columns,
            lines,
            split,
            words: kept,
        })
    }

    /// The index of column `name`, or an error listing the columns.
    pub fn find(&self, name: &str, role: &str) -> Result<usize, String> {
        self.names.iter().position(|n| n == name).ok_or_else(|| {
            format!(
                "{}: no column `{name}` ({role}); the columns are {}",
                self.file,
                self.names.join(", ")
            )
        })
    }

    /// The rows whose `split` word is one of `words` (every row when there is no split).
    pub fn rows_where(&self, words: &[&str]) -> Vec<usize> {
        match &self.split {
            None => (0..self.lines.len()).collect(),
            Some(s) => (0..s.len())
                .filter(|&r| words.contains(&s[r].as_str()))
                .collect(),
        }
    }
}

/// A file's bytes as text, or an error naming the line and column of the first byte that is
/// not UTF-8.
pub fn utf8(bytes: Vec<u8>, file: &str) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
        format!(
            "{file}:{line}:{column}: the file is not UTF-8 text (byte 0x{:02x})",
            e.as_bytes()[at]
        )
    })
}

/// Inputs and target of one set of rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// Rows by inputs, column-major.
    pub x: Array2<f64>,
    /// The target on each row.
    pub y: Array1<f64>,
    /// Each row's weight (`--weights`; every row 1 when `None`).
    pub w: Option<Array1<f64>>,
}

impl Dataset {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.y.len()
    }

    /// Input column `j` as a slice.
    pub fn column(&self, j: usize) -> &[f64] {
        self.x
            .column(j)
            .to_slice()
            .expect("column-major storage: a column is contiguous")
    }

    /// The rows `rows` of this set, in that order.
    pub fn select(&self, rows: &[usize]) -> Dataset {
        let x = Array2::from_shape_fn((rows.len(), self.x.ncols()).f(), |(i, j)| {
            self.x[(rows[i], j)]
        });
        let y = rows.iter().map(|&r| self.y[r]).collect();
        let w = self
            .w
            .as_ref()
            .map(|w| rows.iter().map(|&r| w[r]).collect());
        Dataset { x, y, w }
    }

    /// The population variance of the target.
    pub fn target_variance(&self) -> f64 {
        variance(&self.y.to_vec())
    }
}

/// A held-out set, reported by name.
#[derive(Clone, Debug, PartialEq)]
pub struct TestSet {
    /// `NAME` of `--test NAME=FILE`, or `holdout` for a `split` column's held-out rows.
    pub name: String,
    /// Its rows.
    pub data: Dataset,
}

/// Everything a search reads: the inputs' and target's names, the training rows and the tests.
#[derive(Clone, Debug, PartialEq)]
pub struct Data {
    /// Input names, in column order.
    pub inputs: Vec<String>,
    /// The target's name.
    pub target: String,
    /// Training rows.
    pub train: Dataset,
    /// Held-out sets.
    pub tests: Vec<TestSet>,
}

impl Data {
    /// A fingerprint of the names, the training rows and every test set ([`Fnv`] over their
    /// names and the bits of their numbers), as 32 hexadecimal digits: a checkpoint keeps it
    /// so that a search is never resumed on other data.
    pub fn fingerprint(&self) -> String {
        let mut h = Fnv::default();
        for name in &self.inputs {
            h.text(name);
        }
        h.text(&self.target);
        let set = |h: &mut Fnv, d: &Dataset| {
            h.number(d.rows() as f64);
            for j in 0..d.x.ncols() {
                for &v in d.column(j) {
                    h.number(v);
                }
            }
            for &v in &d.y {
                h.number(v);
            }
            if let Some(w) = &d.w {
                h.text("weights");
                for &v in w {
                    h.number(v);
                }
            }
        };
        set(&mut h, &self.train);
        for t in &self.tests {
            h.text(&t.name);
            set(&mut h, &t.data);
        }
        format!("{:032x}", h.0)
    }
}

/// How to pick the columns.
#[derive(Clone, Debug, Default)]
pub struct Columns {
    /// The target column.
    pub target: String,
    /// The inputs (`None`: every column but the target and the weights).
    pub inputs: Option<Vec<String>>,
    /// The column of the training rows' weights (`--weights`).
    pub weights: Option<String>,
}

/// Checks that `name` can be an input of a program: a plain name of the language, not one of
/// its keywords or primitives.
pub fn check_input_name(name: &str, file: &str) -> Result<(), String> {
    let ok = runtime_cpu::Program::parse(name)
        .map(|p| p.inputs().collect::<Vec<_>>() == [name])
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{file}:1: column `{name}` cannot be an input's name: a program would not read it as \
             a variable (it is a keyword or primitive of the language, or not a plain name); \
             rename the column"
        ))
    }
}

/// Builds the dataset of `rows` of `csv` from its columns `inputs` and `target`, checking
/// every number is finite.
fn dataset(csv: &Csv, inputs: &[usize], target: usize, rows: &[usize]) -> Result<Dataset, String> {
    for &j in inputs.iter().chain(std::iter::once(&target)) {
        for &r in rows {
            let v = csv.columns[j][r];
            if !v.is_finite() {
                return Err(format!(
                    "{}:{}: column `{}` is {v}: every number must be finite",
                    csv.file, csv.lines[r], csv.names[j]
                ));
            }
        }
    }
    let x = Array2::from_shape_fn((rows.len(), inputs.len()).f(), |(i, j)| {
        csv.columns[inputs[j]][rows[i]]
    });
    let y = rows.iter().map(|&r| csv.columns[target][r]).collect();
    Ok(Dataset { x, y, w: None })
}

/// The weights of `rows` from column `j`: finite, at least 0, and not all 0.
fn row_weights(csv: &Csv, j: usize, rows: &[usize]) -> Result<Array1<f64>, String> {
    for &r in rows {
        let v = csv.columns[j][r];
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!(
                "{}:{}: the weight `{}` is {v}: a weight must be a finite number of 0 or more",
                csv.file, csv.lines[r], csv.names[j]
            ));
        }
    }
    let w: Array1<f64> = rows.iter().map(|&r| csv.columns[j][r]).collect();
    if !w.sum().is_finite() {
        return Err(format!(
            "{}: the weights `{}` add up to more than a number can hold; scale them down",
            csv.file, csv.names[j]
        ));
    }
    if w.sum() <= 0.0 {
        return Err(format!(
            "{}: the weight `{}` is zero on every training row: there is nothing to fit",
            csv.file, csv.names[j]
        ));
    }
    Ok(w)
}

/// Checks a set has rows to fit or score on and a target that varies.
fn check_rows(d: &Dataset, file: &str, what: &str, target: &str) -> Result<(), String> {
    if d.rows() < 2 {
        return Err(format!(
            "{file}: {what} has {} row(s); at least 2 are needed",
            d.rows()
        ));
    }
    if d.target_variance() <= 0.0 {
        return Err(format!(
            "{file}: the target `{target}` is the same ({}) on every row of {what}: there is \
             nothing to fit, and NMSE and R^2 are undefined",
            d.y[0]
        ));
    }
    Ok(())
}

impl Data {
    /// Reads the training file and the named test files.
    pub fn read(
        train: &Path,
        tests: &[(String, std::path::PathBuf)],
        cols: &Columns,
    ) -> Result<Data, String> {
        let csv = Csv::read(train)?;
        let named: Vec<(String, Csv)> = tests
            .iter()
            .map(|(n, p)| Csv::read(p).map(|c| (n.clone(), c)))
            .collect::<Result<_, _>>()?;
        Data::from_csv(&csv, &named, cols)
    }

    /// Builds the data from parsed tables.
    pub fn from_csv(csv: &Csv, tests: &[(String, Csv)], cols: &Columns) -> Result<Data, String> {
        let target = csv.find(&cols.target, "the target")?;
        let weights = match &cols.weights {
            Some(name) => {
                if *name == cols.target {
                    return Err(format!(
                        "`{name}` is the target; it cannot be the weights too"
                    ));
                }
                Some(csv.find(name, "the weights")?)
            }
            None => None,
        };
        let inputs: Vec<String> = match &cols.inputs {
            Some(list) => {
                for name in list {
                    csv.find(name, "an input")?;
                    if *name == cols.target {
                        return Err(format!("`{name}` is the target; it cannot be an input too"));
                    }
                    if Some(name) == cols.weights.as_ref() {
                        return Err(format!(
                            "`{name}` is the weights; it cannot be an input too"
                        ));
                    }
                }
                list.clone()
            }
            None => csv
                .names
                .iter()
                .filter(|n| **n != cols.target && Some(*n) != cols.weights.as_ref())
                .cloned()
                .collect(),
        };
        if inputs.is_empty() {
            return Err(format!(
                "{}: no inputs: the only column is the target `{}`",
                csv.file, cols.target
            ));
        }
        for name in &inputs {
            check_input_name(name, &csv.file)?;
        }
        let idx: Vec<usize> = inputs
            .iter()
            .map(|n| csv.find(n, "an input"))
            .collect::<Result<_, _>>()?;
        if let Some(words) = &csv.split {
            for (r, w) in words.iter().enumerate() {
                if !["train", "holdout", "test"].contains(&w.as_str()) {
                    return Err(format!(
                        "{}:{}: split must be `train` or `holdout` (or `test`), not `{w}`",
                        csv.file, csv.lines[r]
                    ));
                }
            }
        }
        let train_rows = csv.rows_where(&["train"]);
        let mut train = dataset(csv, &idx, target, &train_rows)?;
        check_rows(&train, &csv.file, "the training data", &cols.target)?;
        if let Some(j) = weights {
            let w = row_weights(csv, j, &train_rows)?;
            // The rows of positive weight are what is fitted: they need a target that varies.
            let positive: Vec<usize> = (0..w.len()).filter(|&r| w[r] > 0.0).collect();
            let what = "the training rows of positive weight";
            check_rows(&train.select(&positive), &csv.file, what, &cols.target)?;
            train.w = Some(w);
        }
        let mut sets = Vec::new();
        if csv.split.is_some() {
            let rows = csv.rows_where(&["holdout", "test"]);
            if !rows.is_empty() {
                let d = dataset(csv, &idx, target, &rows)?;
                check_rows(&d, &csv.file, "the held-out rows", &cols.target)?;
                sets.push(TestSet {
                    name: "holdout".into(),
                    data: d,
                });
            }
        }
        for (name, t) in tests {
            if sets.iter().any(|s: &TestSet| s.name == *name) {
                return Err(format!(
                    "--test {name}: a test set of that name is given twice"
                ));
            }
            let ti = t.find(&cols.target, "the target")?;
            let tx: Vec<usize> = inputs
                .iter()
                .map(|n| t.find(n, "an input"))
                .collect::<Result<_, _>>()?;
            let rows = t.rows_where(&["train", "holdout", "test"]);
            let d = dataset(t, &tx, ti, &rows)?;
            check_rows(&d, &t.file, &format!("test set `{name}`"), &cols.target)?;
            sets.push(TestSet {
                name: name.clone(),
                data: d,
            });
        }
        Ok(Data {
            inputs,
            target: cols.target.clone(),
            train,
            tests: sets,
        })
    }

    /// The inputs whose every training value is a non-negative integer of at most `max`: the
    /// columns an `iterate` may take its trip count from (decided from the training rows
    /// alone; a test row outside it fails its program's score there).
    pub fn count_columns(&self, max: f64) -> Vec<u16> {
        (0..self.inputs.len())
            .filter(|&j| {
                self.train
                    .column(j)
                    .iter()
                    .all(|&v| (0.0..=max).contains(&v) && v.fract() == 0.0)
            })
            .map(|j| j as u16)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(target: &str) -> Columns {
        Columns {
            target: target.into(),
            inputs: None,
            weights: None,
        }
    }

    fn data(text: &str, target: &str) -> Result<Data, String> {
        Data::from_csv(&Csv::parse(text, "t.csv")?, &[], &cols(target))
    }

    #[test]
    fn columns_rows_and_split() {
        let d = data(
            "x,n,y,split\n1,2,3,train\n2,0,5,holdout\n3,1,4,train\n4,3,1,holdout\n",
            "y",
        )
        .unwrap();
        assert_eq!(d.inputs, vec!["x", "n"]);
        assert_eq!(d.train.rows(), 2);
        assert_eq!(d.train.column(1), &[2.0, 1.0]);
        assert_eq!(d.tests[0].name, "holdout");
        assert_eq!(d.tests[0].data.y.to_vec(), vec![5.0, 1.0]);
        assert_eq!(d.count_columns(100.0), vec![0, 1]);
    }

    #[test]
    fn bad_data_names_file_line_and_column() {
        let cases = [
            ("x,y\n1,2\n3,4\n", "z", "no column `z` (the target)"),
            (
                "x,y\n1,2\nabc,4\n",
                "y",
                "t.csv:3: column `x`: `abc` is not a number",
            ),
            ("x,y\n1,2\n,4\n", "y", "t.csv:3: column `x` is empty"),
            ("x,y\n1,2\n3,NaN\n", "y", "t.csv:3: column `y` is NaN"),
            ("x,y\n1,2\n", "y", "1 row(s)"),
            ("x,y\n1,2\n3,2\n", "y", "the same (2) on every row"),
            ("y\n1\n2\n", "y", "no inputs"),
            ("x,y\n1,2\n3\n", "y", "t.csv:3: 1 cells"),
            ("log,y\n1,2\n3,4\n", "y", "column `log` cannot be an input"),
            (
                "x,y,split\n1,2,train\n3,4,maybe\n",
                "y",
                "t.csv:3: split must be",
            ),
        ];
        for (text, target, want) in cases {
            let e = data(text, target).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
