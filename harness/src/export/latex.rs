//! An export tree as LaTeX math: loop-free programs of numbers (a `let`'s names written out
//! where they are used, an `if` as `cases`). A loop, a function or a vector is an
//! [`ExportError`]: LaTeX of those is no formula.

use super::lower::{lower, Ex};
use super::ExportError;
use std::collections::HashMap;

/// `source` as LaTeX.
pub fn to_latex(source: &str) -> Result<String, ExportError> {
    let tree = lower(source)?;
    let names: HashMap<String, String> = tree
        .inputs
        .iter()
        .map(|(n, py)| (py.clone(), symbol(n)))
        .collect();
    let mut env = names;
    tex(&tree.body, &mut env, 0)
}

fn refuse(what: &str) -> ExportError {
    ExportError {
        form: String::new(),
        line: None,
        column: None,
        message: format!("{what} has no LaTeX formula (export it to sympy, NumPy, JAX or PyTorch)"),
    }
}

/// A name as a LaTeX symbol: `x_1` as x with subscript 1, a Greek letter's name as the letter.
fn symbol(name: &str) -> String {
    const GREEK: &[&str] = &[
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
        "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi",
        "omega",
    ];
    let (base, sub) = match name.split_once('_') {
        Some((b, s)) if !b.is_empty() && !s.is_empty() => (b, Some(s)),
        _ => (name, None),
    };
    let base = if GREEK.contains(&base) {
        format!("\\{base}")
    } else if base.chars().count() == 1 {
        base.to_string()
    } else {
        format!("\\mathrm{{{}}}", base.replace('-', "\\text{-}"))
    };
    match sub {
        Some(s) => format!("{base}_{{{s}}}"),
        None => base,
    }
}

fn number(x: f64) -> String {
    if x.is_nan() {
        return "\\mathrm{NaN}".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "\\infty" } else { "-\\infty" }.into();
    }
    let s = format!("{x}");
    match s.split_once('e') {
        Some((m, e)) => format!("{m} \\cdot 10^{{{e}}}"),
        None => s,
    }
}

/// Precedence: 0 sum, 1 product, 2 power and atoms.
fn tex(e: &Ex, env: &mut HashMap<String, String>, prec: u8) -> Result<String, ExportError> {
    let wrap = |s: String, own: u8| {
        if own < prec {
            format!("\\left({s}\\right)")
        } else {
            s
        }
    };
    Ok(match e {
        Ex::Num(x) => {
            let s = number(*x);
            if *x < 0.0 && prec > 0 {
                format!("\\left({s}\\right)")
            } else {
                s
            }
        }
        Ex::Bool(_) => return Err(refuse("a boolean")),
        Ex::Var(v) => env.get(v).cloned().unwrap_or_else(|| symbol(v)),
        Ex::Let(bs, body) => {
            for (n, v) in bs {
                let t = tex(v, env, 2)?;
                env.insert(n.clone(), t);
            }
            tex(body, env, prec)?
        }
        Ex::If(c, t, f) => {
            let c = tex(c, env, 0)?;
            let t = tex(t, env, 0)?;
            let f = tex(f, env, 0)?;
            format!("\\begin{{cases}} {t} & \\text{{if }} {c} \\\\ {f} & \\text{{otherwise}} \\end{{cases}}")
        }
        Ex::Prim(p, xs) => {
            let all =
                |env: &mut HashMap<String, String>, prec: u8| -> Result<Vec<String>, ExportError> {
                    xs.iter().map(|x| tex(x, env, prec)).collect()
                };
            match *p {
                "+" if xs.is_empty() => "0".into(),
                "+" => wrap(all(env, 0)?.join(" + "), 0),
                "-" if xs.len() == 1 => wrap(format!("-{}", tex(&xs[0], env, 2)?), 0),
                "-" => {
                    let mut parts = vec![tex(&xs[0], env, 0)?];
                    for x in &xs[1..] {
                        parts.push(tex(x, env, 1)?);
                    }
                    wrap(parts.join(" - "), 0)
                }
                "*" if xs.is_empty() => "1".into(),
                "*" => wrap(all(env, 1)?.join(" \\cdot "), 1),
                "/" if xs.len() == 1 => format!("\\frac{{1}}{{{}}}", tex(&xs[0], env, 0)?),
                "/" => {
                    let mut num = tex(&xs[0], env, 0)?;
                    for x in &xs[1..] {
                        num = format!("\\frac{{{num}}}{{{}}}", tex(x, env, 0)?);
                    }
                    num
                }
                "pow" | "expt" => {
                    format!("{{{}}}^{{{}}}", tex(&xs[0], env, 3)?, tex(&xs[1], env, 0)?)
                }
                "sqrt" => format!("\\sqrt{{{}}}", tex(&xs[0], env, 0)?),
                "abs" => format!("\\left|{}\\right|", tex(&xs[0], env, 0)?),
                "exp" => format!("e^{{{}}}", tex(&xs[0], env, 0)?),
                "sin" | "cos" | "log" => {
                    format!("\\{p}{{\\left({}\\right)}}", tex(&xs[0], env, 0)?)
                }
                "min" | "max" => format!("\\{p}\\left({}\\right)", all(env, 0)?.join(", ")),
                "modulo" | "remainder" => {
                    format!("{} \\bmod {}", tex(&xs[0], env, 2)?, tex(&xs[1], env, 2)?)
                }
                "=" | "<" | ">" | "<=" | ">=" => {
                    let op = match *p {
                        "=" => "=",
                        "<" => "<",
                        ">" => ">",
                        "<=" => "\\le",
                        _ => "\\ge",
                    };
                    all(env, 0)?.join(&format!(" {op} "))
                }
                "and" => all(env, 0)?.join(" \\wedge "),
                "or" => all(env, 0)?.join(" \\vee "),
                "not" => format!("\\neg {}", tex(&xs[0], env, 2)?),
                _ => return Err(refuse(&format!("`{p}`"))),
            }
        }
        Ex::Def(..) | Ex::Call(..) => return Err(refuse("a function")),
        Ex::Loop(..) | Ex::Recur(..) => return Err(refuse("a loop")),
    })
}
