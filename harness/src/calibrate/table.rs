//! Tabular data for fits: a CSV with a header of column names, numeric columns, and an optional
//! `split` column marking rows `train` or `holdout`.

use anyhow::{bail, Context, Result};
use std::path::Path;

/// Why a fit whose data rows are all held out cannot run.
pub const NOTHING_TO_FIT: &str =
    "every data row is held out (split = holdout): no training rows to fit";

/// A data table: named numeric columns of equal length, and the split of each row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Column names, in file order (the `split` column excluded).
    pub names: Vec<String>,
    /// Columns, parallel to `names`.
    pub columns: Vec<Vec<f64>>,
    /// For each row, true when it is a held-out row.
    pub holdout: Vec<bool>,
}

impl Table {
    /// Reads a CSV file.
    pub fn read(path: &Path) -> Result<Table> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let text = crate::search::dataset::utf8(bytes, &path.display().to_string())
            .map_err(anyhow::Error::msg)?;
        Table::parse(&text).with_context(|| format!("in {}", path.display()))
    }

    /// Parses CSV text with a header row.
    pub fn parse(text: &str) -> Result<Table> {
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(text.as_bytes());
        let header: Vec<String> = reader.headers()?.iter().map(str::to_string).collect();
        let split_col = header.iter().position(|h| h == "split");
        let names: Vec<String> = header
            .iter()
            .enumerate()
            .filter(|&(i, _)| Some(i) != split_col)
            .map(|(_, h)| h.clone())
            .collect();
        let mut columns = vec![Vec::new(); names.len()];
        let mut holdout = Vec::new();
        for (row, rec) in reader.records().enumerate() {
            let rec = rec.with_context(|| format!("row {}", row + 2))?;
            let mut k = 0;
            for (i, cell) in rec.iter().enumerate() {
                if Some(i) == split_col {
                    holdout.push(match cell {
                        "train" | "" => false,
                        "holdout" | "test" | "heldout" | "held-out" => true,
                        other => bail!(
                            "row {}: split must be train or holdout, not `{other}`",
                            row + 2
                        ),
                    });
                    continue;
                }
                let x: f64 = cell.parse().with_context(|| {
                    format!(
                        "row {}, column `{}`: `{cell}` is not a number",
                        row + 2,
                        header[i]
                    )
                })?;
                if !x.is_finite() {
                    bail!(
                        "row {}, column `{}`: `{cell}` is not a finite number (a fit needs \
                         every number of its data finite)",
                        row + 2,
                        header[i]
                    );
                }
                columns[k].push(x);
                k += 1;
            }
            if split_col.is_none() {
                holdout.push(false);
            }
        }
        if holdout.is_empty() {
            bail!("the table has no rows");
        }
        Ok(Table {
            names,
            columns,
            holdout,
        })
    }

    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&[f64]> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.columns[i].as_slice())
    }

    /// The rows of one side of the split, as a new table (all rows when there is no split).
    pub fn rows(&self, holdout: bool) -> Table {
        let keep: Vec<usize> = (0..self.holdout.len())
            .filter(|&r| self.holdout[r] == holdout)
            .collect();
        Table {
            names: self.names.clone(),
            columns: self
                .columns
                .iter()
                .map(|c| keep.iter().map(|&r| c[r]).collect())
                .collect(),
            holdout: vec![holdout; keep.len()],
        }
    }

    /// True when some rows are held out.
    pub fn has_holdout(&self) -> bool {
        self.holdout.iter().any(|&h| h)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.holdout.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.holdout.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_columns_and_split() {
        let t = Table::parse("x,y,split\n1,2,train\n3,4,holdout\n5,6,train\n").unwrap();
        assert_eq!(t.names, vec!["x", "y"]);
        assert_eq!(t.column("y").unwrap(), &[2.0, 4.0, 6.0]);
        assert_eq!(t.rows(false).column("x").unwrap(), &[1.0, 5.0]);
        assert_eq!(t.rows(true).len(), 1);
        assert!(Table::parse("x\nabc\n").is_err());
    }
}
