//! The inputs of `ndvm run` and `ndvm vm`: `--bind NAME=NUMBER`, `--bind NAME=[1,2,3]` (a
//! vector), `--bind NAME=@FILE.csv` (a matrix) and `--lanes FILE.csv` (one column per input,
//! one row per lane), read into [`Bindings`].
//!
//! Every error here is a usage or IO error, returned as its message.

use runtime_cpu::{Bindings, Tensor};
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

/// One `--bind` argument.
#[derive(Clone, Debug, PartialEq)]
pub struct BindArg {
    /// The input's name.
    pub name: String,
    /// What it is bound to.
    pub value: BindValue,
}

/// The right-hand side of a `--bind`.
#[derive(Clone, Debug, PartialEq)]
pub enum BindValue {
    /// A number, the same on every lane.
    Number(f64),
    /// A vector, the same on every lane.
    Vector(Vec<f64>),
    /// A CSV file holding a matrix, the same on every lane.
    Matrix(PathBuf),
}

/// Parses `NAME=NUMBER`, `NAME=[1,2,3]` or `NAME=@FILE.csv` (used as clap's value parser for
/// `--bind`).
pub fn parse_bind(arg: &str) -> Result<BindArg, String> {
    let Some((name, value)) = arg.split_once('=') else {
        return Err("expected NAME=NUMBER, NAME=[1,2,3] or NAME=@FILE.csv".into());
    };
    let name = name.trim();
    check_name(name)?;
    let value = value.trim();
    let value = if let Some(path) = value.strip_prefix('@') {
        if path.is_empty() {
            return Err(format!("`{name}=@` needs a file name after `@`"));
        }
        BindValue::Matrix(PathBuf::from(path))
    } else if let Some(items) = value.strip_prefix('[') {
        BindValue::Vector(parse_vector(name, items)?)
    } else {
        match parse_number(value) {
            Some(x) => BindValue::Number(x),
            None if value.contains(',') || value.contains(' ') => {
                return Err(format!(
                    "`{value}` is not a number; bind a vector as {name}=[1,2,3], or a matrix from a CSV file with {name}=@FILE.csv"
                ))
            }
            None => return Err(format!("`{value}` is not a number")),
        }
    };
    Ok(BindArg {
        name: name.to_string(),
        value,
    })
}

/// The numbers of `[1,2,3]` or `[1 2 3]` after the `[`.
fn parse_vector(name: &str, items: &str) -> Result<Vec<f64>, String> {
    let Some(items) = items.strip_suffix(']') else {
        return Err(format!("`{name}=[...`: the vector has no closing `]`"));
    };
    let mut out = Vec::new();
    for word in items.split(|c: char| c == ',' || c.is_whitespace()) {
        if word.is_empty() {
            continue;
        }
        let x = parse_number(word)
            .ok_or_else(|| format!("`{word}` in the vector bound to `{name}` is not a number"))?;
        out.push(x);
    }
    if out.is_empty() {
        return Err(format!("`{name}=[]`: an empty vector holds no numbers"));
    }
    Ok(out)
}

fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the input name before `=` is empty".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| c.is_whitespace() || "()[]'\";".contains(*c))
    {
        return Err(format!(
            "`{name}` is not a valid input name (it contains `{c}`)"
        ));
    }
    Ok(())
}

/// A number as written on the command line or in a CSV cell: anything Rust reads as an `f64`
/// (`1`, `-2.5e-3`, `inf`, `NaN`), or Scheme's `+inf.0`, `-inf.0`, `+nan.0`.
pub fn parse_number(s: &str) -> Option<f64> {
    let s = s.trim();
    match s {
        "+inf.0" => Some(f64::INFINITY),
        "-inf.0" => Some(f64::NEG_INFINITY),
        "+nan.0" | "-nan.0" => Some(f64::NAN),
        _ => s.parse().ok(),
    }
}

/// Reads the bindings of a run from its `--bind` and `--lanes` arguments.
pub fn read_bindings(binds: &[BindArg], lanes: Option<&Path>) -> Result<Bindings, String> {
    let mut bindings = Bindings::new();
    let mut seen = HashSet::new();
    for b in binds {
        if !seen.insert(b.name.as_str()) {
            return Err(format!("input `{}` is bound twice by --bind", b.name));
        }
        bindings = match &b.value {
            BindValue::Number(x) => bindings.scalar(&b.name, *x),
            BindValue::Vector(xs) => bindings.uniform(&b.name, Tensor::vector(xs.clone())),
            BindValue::Matrix(path) => bindings.uniform(&b.name, read_matrix(path)?),
        };
    }
    if let Some(path) = lanes {
        for (name, column) in read_lanes(path)? {
            if seen.contains(name.as_str()) {
                return Err(format!(
                    "input `{name}` is bound both by --bind and by a column of {}",
                    path.display()
                ));
            }
            bindings = bindings
                .lanes(&name, column)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(bindings)
}

fn csv_reader(path: &Path, headers: bool) -> Result<csv::Reader<std::fs::File>, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(csv::ReaderBuilder::new()
        .has_headers(headers)
        .flexible(true)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(file))
}

fn csv_error(path: &Path, e: csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Io(io) => format!("cannot read {}: {io}", path.display()),
        _ => format!("{}: {e}", path.display()),
    }
}

fn cell_error(path: &Path, rec: &csv::StringRecord, col: usize, what: &str, cell: &str) -> String {
    let line = rec.position().map_or(0, |p| p.line());
    let cell = if cell.is_empty() {
        "an empty cell".to_string()
    } else {
        format!("`{cell}`")
    };
    format!(
        "{}:{line}: column {} ({what}): {cell} is not a number",
        path.display(),
        col + 1
    )
}

/// Reads a matrix from a CSV file of numbers: one line per row, no header (a first line with
/// no number in it is taken for a header and skipped). One line or one column still makes a
/// matrix (1 x cols or rows x 1).
pub fn read_matrix(path: &Path) -> Result<Tensor, String> {
    let mut reader = csv_reader(path, false)?;
    let mut data = Vec::new();
    let mut cols = None;
    let mut rows = 0usize;
    for (i, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| csv_error(path, e))?;
        if i == 0 && rec.iter().all(|c| parse_number(c).is_none()) {
            continue; // a header
        }
        let line = rec.position().map_or(0, |p| p.line());
        match cols {
            None => cols = Some(rec.len()),
            Some(c) if c != rec.len() => {
                return Err(format!(
                    "{}:{line}: this row has {} numbers but the rows above have {c}",
                    path.display(),
                    rec.len()
                ))
            }
            Some(_) => {}
        }
        for (j, cell) in rec.iter().enumerate() {
            let x = parse_number(cell)
                .ok_or_else(|| cell_error(path, &rec, j, &format!("row {}", rows + 1), cell))?;
            data.push(x);
        }
        rows += 1;
    }
    let cols = cols.ok_or_else(|| format!("{}: no numbers in the file", path.display()))?;
    Tensor::matrix(rows, cols, data).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads a lanes file: a header row of input names, then one row of numbers per lane.
/// Returns each column with its name, in file order.
pub fn read_lanes(path: &Path) -> Result<Vec<(String, Vec<f64>)>, String> {
    let mut reader = csv_reader(path, true)?;
    let header = reader.headers().map_err(|e| csv_error(path, e))?.clone();
    let mut names = BTreeSet::new();
    for (j, name) in header.iter().enumerate() {
        check_name(name)
            .map_err(|m| format!("{}: header column {}: {m}", path.display(), j + 1))?;
        if parse_number(name).is_some() {
            return Err(format!(
                "{}: the first row must name the inputs, but column {} is the number `{name}`",
                path.display(),
                j + 1
            ));
        }
        if !names.insert(name) {
            return Err(format!("{}: column `{name}` appears twice", path.display()));
        }
    }
    if header.is_empty() {
        return Err(format!(
            "{}: the file is empty (expected a header row of input names)",
            path.display()
        ));
    }
    let mut columns: Vec<Vec<f64>> = vec![Vec::new(); header.len()];
    for (lane, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| csv_error(path, e))?;
        if rec.len() != header.len() {
            let line = rec.position().map_or(0, |p| p.line());
            return Err(format!(
                "{}:{line}: lane {lane} has {} values but the header names {} inputs",
                path.display(),
                rec.len(),
                header.len()
            ));
        }
        for (j, cell) in rec.iter().enumerate() {
            let what = format!("lane {lane}, input `{}`", &header[j]);
            let x = parse_number(cell).ok_or_else(|| cell_error(path, &rec, j, &what, cell))?;
            columns[j].push(x);
        }
    }
    if columns[0].is_empty() {
        return Err(format!(
            "{}: a header but no lanes (no rows below it)",
            path.display()
        ));
    }
    Ok(header.iter().map(String::from).zip(columns).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_arguments() {
        let b = parse_bind("alpha=2.5").unwrap();
        assert_eq!(
            (b.name.as_str(), b.value),
            ("alpha", BindValue::Number(2.5))
        );
        let b = parse_bind(" obs = @data/obs.csv").unwrap();
        assert_eq!(b.value, BindValue::Matrix("data/obs.csv".into()));
        assert!(
            parse_bind("x=-inf.0").is_ok_and(|b| b.value == BindValue::Number(f64::NEG_INFINITY))
        );
        for bad in ["x", "=1", "x=", "x=abc", "x=1,2", "x=@", "a b=1", "(x)=1"] {
            assert!(parse_bind(bad).is_err(), "{bad}");
        }
        assert!(parse_bind("x=1,2").unwrap_err().contains("@FILE.csv"));
        let b = parse_bind("v=[1, -2.5 3e1]").unwrap();
        assert_eq!(b.value, BindValue::Vector(vec![1.0, -2.5, 30.0]));
        for bad in ["v=[1,2", "v=[]", "v=[1,x]"] {
            assert!(parse_bind(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number(" 1e-3 "), Some(0.001));
        assert_eq!(parse_number("+inf.0"), Some(f64::INFINITY));
        assert!(parse_number("+nan.0").is_some_and(f64::is_nan));
        assert!(parse_number("NaN").is_some_and(f64::is_nan));
        assert_eq!(parse_number(""), None);
        assert_eq!(parse_number("1,5"), None);
    }
}
