//! Measured trajectories: a CSV of rows `(time, states..., inputs...)`, the rows of one
//! trajectory sharing a value in the trajectory column (one trajectory when there is none),
//! their times increasing and possibly irregular. Bad data is an error naming the file, the
//! line and the column.

use crate::search::dataset::{check_input_name, Csv};
use std::path::Path;

/// One trajectory: its observed times and, column by column, its states and inputs there.
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    /// Its value in the trajectory column (`0` when there is none).
    pub name: String,
    /// The observed times, increasing.
    pub t: Vec<f64>,
    /// `x[i][k]`: state `i` at time `t[k]`.
    pub x: Vec<Vec<f64>>,
    /// `u[j][k]`: input `j` at time `t[k]`.
    pub u: Vec<Vec<f64>>,
}

impl Trajectory {
    /// Observations.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// True without observations.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }

    /// The observed state at observation `k`.
    pub fn state(&self, k: usize) -> Vec<f64> {
        self.x.iter().map(|c| c[k]).collect()
    }
}

/// The columns of an ODE search.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Columns {
    /// The time.
    pub time: String,
    /// The states.
    pub states: Vec<String>,
    /// The trajectory column, if any.
    pub trajectory: Option<String>,
    /// The measured inputs.
    pub inputs: Vec<String>,
}

/// The training trajectories and the named test sets.
#[derive(Clone, Debug, PartialEq)]
pub struct OdeData {
    /// The columns.
    pub columns: Columns,
    /// Training trajectories.
    pub train: Vec<Trajectory>,
    /// Test sets by name, each one or more trajectories.
    pub tests: Vec<(String, Vec<Trajectory>)>,
}

impl OdeData {
    /// A fingerprint of the columns and every training and test trajectory (FNV over their
    /// names and the bits of their numbers), as 32 hexadecimal digits: a checkpoint keeps it so
    /// that a search is never resumed on other data.
    pub fn fingerprint(&self) -> String {
        let mut h = crate::search::fnv::Fnv::default();
        let c = &self.columns;
        for name in std::iter::once(&c.time).chain(&c.states).chain(&c.inputs) {
            h.text(name);
        }
        let set = |h: &mut crate::search::fnv::Fnv, trajs: &[Trajectory]| {
            h.number(trajs.len() as f64);
            for tr in trajs {
                h.text(&tr.name);
                h.number(tr.len() as f64);
                for v in
                    tr.t.iter()
                        .chain(tr.x.iter().flatten())
                        .chain(tr.u.iter().flatten())
                {
                    h.number(*v);
                }
            }
        };
        set(&mut h, &self.train);
        for (name, trajs) in &self.tests {
            h.text(name);
            set(&mut h, trajs);
        }
        format!("{:032x}", h.0)
    }
}

impl Columns {
    /// Checks the names: distinct, plain names of the language.
    pub fn check(&self, file: &str) -> Result<(), String> {
        if self.states.is_empty() {
            return Err("--target: name at least one state column".into());
        }
        let mut all: Vec<&String> = vec![&self.time];
        all.extend(&self.states);
        all.extend(&self.inputs);
        for (i, n) in all.iter().enumerate() {
            if all[..i].contains(n) {
                return Err(format!(
                    "column `{n}` is named twice among --time, --target and --inputs"
                ));
            }
            check_input_name(n, file)?;
        }
        if let Some(tr) = &self.trajectory {
            if all.contains(&tr) {
                return Err(format!(
                    "--trajectory {tr}: that column is also the time, a state or an input"
                ));
            }
        }
        Ok(())
    }
}

/// Reads the trajectories of a CSV file.
pub fn read(path: &Path, cols: &Columns) -> Result<Vec<Trajectory>, String> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {file}: {e}"))?;
    let text = crate::search::dataset::utf8(bytes, &file)?;
    parse(&text, &file, cols)
}

/// Parses the trajectories of CSV text; `file` names it in messages.
pub fn parse(text: &str, file: &str, cols: &Columns) -> Result<Vec<Trajectory>, String> {
    // Only the time, the states and the inputs must be numbers: any other column (the
    // trajectory's names, notes) is read as words.
    let used: Vec<&str> = std::iter::once(&cols.time)
        .chain(&cols.states)
        .chain(&cols.inputs)
        .map(String::as_str)
        .collect();
    let header: Vec<String> = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes())
        .headers()
        .map(|h| h.iter().map(str::to_string).collect())
        .unwrap_or_default();
    let keep: Vec<&str> = header
        .iter()
        .map(String::as_str)
        .filter(|h| !used.contains(h) && *h != "split")
        .collect();
    let csv = Csv::parse_keeping(text, file, &keep)?;
    let time = csv.find(&cols.time, "the time, --time")?;
    let states: Vec<usize> = cols
        .states
        .iter()
        .map(|n| csv.find(n, "a state, --target"))
        .collect::<Result<_, _>>()?;
    let inputs: Vec<usize> = cols
        .inputs
        .iter()
        .map(|n| csv.find(n, "an input, --inputs"))
        .collect::<Result<_, _>>()?;
    let labels: Vec<String> = match &cols.trajectory {
        Some(name) => csv
            .kept(name)
            .ok_or_else(|| {
                format!(
                    "{file}: no column `{name}` (the trajectory, --trajectory); the columns are {}",
                    csv.names.join(", ")
                )
            })?
            .to_vec(),
        None => vec!["0".to_string(); csv.lines.len()],
    };
    if csv.lines.is_empty() {
        return Err(format!("{file}: no rows after the header"));
    }
    for &j in std::iter::once(&time).chain(&states).chain(&inputs) {
        for (r, &v) in csv.columns[j].iter().enumerate() {
            if !v.is_finite() {
                return Err(format!(
                    "{file}:{}: column `{}` is {v}: every number must be finite",
                    csv.lines[r], csv.names[j]
                ));
            }
        }
    }
    // Trajectories in the order of their first row; rows of one in file order.
    let mut order: Vec<String> = Vec::new();
    let mut rows: Vec<Vec<usize>> = Vec::new();
    for (r, l) in labels.iter().enumerate() {
        match order.iter().position(|o| o == l) {
            Some(i) => rows[i].push(r),
            None => {
                order.push(l.clone());
                rows.push(vec![r]);
            }
        }
    }
    let mut out = Vec::new();
    for (name, rs) in order.into_iter().zip(rows) {
        let what = match &cols.trajectory {
            Some(c) => format!("trajectory `{name}` (column `{c}`)"),
            None => "the trajectory".to_string(),
        };
        if rs.len() < 2 {
            return Err(format!(
                "{file}:{}: {what} has one row; a trajectory needs at least two times",
                csv.lines[rs[0]]
            ));
        }
        for w in rs.windows(2) {
            let (a, b) = (csv.columns[time][w[0]], csv.columns[time][w[1]]);
            if b <= a {
                return Err(format!(
                    "{file}:{}: column `{}`: time {b} of {what} is not after the time {a} of \
                     its row before (line {}); times within a trajectory must increase",
                    csv.lines[w[1]], cols.time, csv.lines[w[0]]
                ));
            }
        }
        let col = |j: usize| rs.iter().map(|&r| csv.columns[j][r]).collect::<Vec<f64>>();
        out.push(Trajectory {
            name,
            t: col(time),
            x: states.iter().map(|&j| col(j)).collect(),
            u: inputs.iter().map(|&j| col(j)).collect(),
        });
    }
    Ok(out)
}

/// Checks trajectories given as arrays (`what` names them in messages): at least two
/// observations each, increasing times, every number finite, one column per state and input.
pub fn check(trajs: &[Trajectory], what: &str, cols: &Columns) -> Result<(), String> {
    if trajs.is_empty() {
        return Err(format!("{what}: no trajectories"));
    }
    for tr in trajs {
        let label = format!("{what}, trajectory `{}`", tr.name);
        if tr.x.len() != cols.states.len() || tr.u.len() != cols.inputs.len() {
            return Err(format!(
                "{label}: {} state and {} input columns where {} and {} are named",
                tr.x.len(),
                tr.u.len(),
                cols.states.len(),
                cols.inputs.len()
            ));
        }
        if tr.len() < 2 {
            return Err(format!(
                "{label} has {} row(s); a trajectory needs at least two times",
                tr.len()
            ));
        }
        let named = std::iter::once((&cols.time, &tr.t))
            .chain(cols.states.iter().zip(&tr.x))
            .chain(cols.inputs.iter().zip(&tr.u));
        for (name, col) in named {
            if col.len() != tr.len() {
                return Err(format!(
                    "{label}: column `{name}` has {} rows where the time has {}",
                    col.len(),
                    tr.len()
                ));
            }
            if let Some(r) = col.iter().position(|v| !v.is_finite()) {
                return Err(format!(
                    "{label}, row {r}: column `{name}` is {}: every number must be finite",
                    col[r]
                ));
            }
        }
        if let Some(r) = tr.t.windows(2).position(|w| w[1] <= w[0]) {
            return Err(format!(
                "{label}, row {}: time {} is not after the time {} of the row before; times \
                 within a trajectory must increase",
                r + 1,
                tr.t[r + 1],
                tr.t[r]
            ));
        }
    }
    Ok(())
}

/// Reads the training file and the test files.
pub fn read_all(
    train: &Path,
    tests: &[(String, std::path::PathBuf)],
    cols: &Columns,
) -> Result<OdeData, String> {
    cols.check(&train.display().to_string())?;
    let train_set = read(train, cols)?;
    let mut sets: Vec<(String, Vec<Trajectory>)> = Vec::new();
    for (name, path) in tests {
        if sets.iter().any(|(n, _)| n == name) {
            return Err(format!(
                "--test {name}: a test set of that name is given twice"
            ));
        }
        // A test file without the trajectory column is one trajectory.
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read {file}: {e}"))?;
        let text = crate::search::dataset::utf8(bytes, &file)?;
        let header = text.lines().next().unwrap_or("");
        let has = |c: &str| header.split(',').any(|h| h.trim() == c);
        let own = match &cols.trajectory {
            Some(c) if !has(c) => Columns {
                trajectory: None,
                ..cols.clone()
            },
            _ => cols.clone(),
        };
        sets.push((name.clone(), parse(&text, &file, &own)?));
    }
    let data = OdeData {
        columns: cols.clone(),
        train: train_set,
        tests: sets,
    };
    if data.train.iter().all(|tr| {
        tr.x.iter()
            .all(|c| c.iter().all(|&v| v.to_bits() == c[0].to_bits()))
    }) {
        return Err(format!(
            "{}: every state is constant on every trajectory: there is nothing to fit",
            train.display()
        ));
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(tr: Option<&str>) -> Columns {
        Columns {
            time: "t".into(),
            states: vec!["x".into(), "y".into()],
            trajectory: tr.map(str::to_string),
            inputs: vec![],
        }
    }

    #[test]
    fn trajectories_are_grouped_by_their_column() {
        let text = "run,t,x,y\na,0,1,2\nb,0,5,6\na,0.5,1.5,2.5\nb,1,7,8\n";
        let t = parse(text, "f.csv", &cols(Some("run"))).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].name, "a");
        assert_eq!(t[0].t, vec![0.0, 0.5]);
        assert_eq!(t[1].x[1], vec![6.0, 8.0]);
    }

    #[test]
    fn bad_data_names_file_line_and_column() {
        let e = parse("t,x,y\n0,1,2\n0,2,3\n", "f.csv", &cols(None)).unwrap_err();
        assert!(
            e.contains("f.csv:3") && e.contains("`t`") && e.contains("increase"),
            "{e}"
        );
        let e = parse(
            "run,t,x,y\na,0,1,2\nb,0,1,2\nb,1,2,3\n",
            "f.csv",
            &cols(Some("run")),
        )
        .unwrap_err();
        assert!(e.contains("f.csv:2") && e.contains("one row"), "{e}");
        let e = parse("t,x,y\n0,1,2\n1,oops,3\n", "f.csv", &cols(None)).unwrap_err();
        assert!(
            e.contains("f.csv:3") && e.contains("`x`") && e.contains("oops"),
            "{e}"
        );
        let e = parse("t,x,z\n0,1,2\n1,2,3\n", "f.csv", &cols(None)).unwrap_err();
        assert!(e.contains("no column `y`") && e.contains("state"), "{e}");
        let e = parse("t,x,y\n0,1,2\n1,2,3\n", "f.csv", &cols(Some("run"))).unwrap_err();
        assert!(e.contains("no column `run`"), "{e}");
    }
}
