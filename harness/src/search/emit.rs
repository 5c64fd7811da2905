//! A genome as a program of the object language (its constants as parameters `c0, c1, ...`,
//! so the text is the candidate's skeleton) and as ordinary infix math with fitted values.

use super::expr::{Count, Expr, Genome};
use super::ops::Op;
use std::fmt::Write;

/// The names a program is written with: the inputs' own, and fresh ones for the parameters,
/// the shared values, and an `iterate`'s state and counter, none equal to an input's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Names {
    /// The data columns, by index.
    pub inputs: Vec<String>,
    /// Parameter `k` is `{param}{k}`.
    pub param: String,
    /// Shared value `j` is `{shared}{j}`.
    pub shared: String,
    /// An `iterate`'s state.
    pub state: String,
    /// An `iterate`'s step counter.
    pub counter: String,
}

impl Names {
    /// Names for a search over `inputs`.
    pub fn new(inputs: &[String]) -> Names {
        let indexed = |base: &str| {
            let mut p = base.to_string();
            while inputs.iter().any(|i| is_indexed(i, &p)) {
                p.push('_');
            }
            p
        };
        let param = indexed("c");
        let shared = indexed("t");
        let single = |base: &str| {
            let mut p = base.to_string();
            while inputs.contains(&p) || is_indexed(&p, &param) || is_indexed(&p, &shared) {
                p.push('_');
            }
            p
        };
        Names {
            inputs: inputs.to_vec(),
            state: single("s"),
            counter: single("k"),
            param,
            shared,
        }
    }

    /// Parameter `k`'s name.
    pub fn param(&self, k: usize) -> String {
        format!("{}{k}", self.param)
    }
}

/// True when `name` is `prefix` followed by digits only.
fn is_indexed(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// The program text: parameters named `c0, c1, ...` in the genome's constant order.
pub fn source(g: &Genome, names: &Names) -> String {
    let mut out = String::new();
    let mut k = 0;
    if g.lets.is_empty() {
        src(&g.body, names, &mut k, &mut out);
        return out;
    }
    out.push_str("(let* (");
    for (j, v) in g.lets.iter().enumerate() {
        if j > 0 {
            out.push(' ');
        }
        let _ = write!(out, "({}{j} ", names.shared);
        src(v, names, &mut k, &mut out);
        out.push(')');
    }
    out.push_str(") ");
    src(&g.body, names, &mut k, &mut out);
    out.push(')');
    out
}

fn src(e: &Expr, names: &Names, k: &mut usize, out: &mut String) {
    match e {
        Expr::Const(_) => {
            let _ = write!(out, "{}{}", names.param, *k);
            *k += 1;
        }
        Expr::Input(i) => out.push_str(&names.inputs[*i as usize]),
        Expr::State => out.push_str(&names.state),
        Expr::Shared(j) => {
            let _ = write!(out, "{}{j}", names.shared);
        }
        Expr::Unary(op, a) => {
            let leaf = matches!(**a, Expr::Input(_) | Expr::State | Expr::Shared(_));
            let (head, tail) = match op {
                Op::Square if leaf => {
                    out.push_str("(* ");
                    src(a, names, k, out);
                    out.push(' ');
                    ("", "")
                }
                Op::Square => ("(pow ", " 2)"),
                Op::Cube => ("(pow ", " 3)"),
                Op::Neg => ("(- ", ")"),
                Op::Inv => ("(/ ", ")"),
                other => {
                    let _ = write!(out, "({} ", other.name());
                    ("", ")")
                }
            };
            out.push_str(head);
            src(a, names, k, out);
            out.push_str(tail);
            if matches!(op, Op::Square) && leaf {
                out.push(')');
            }
        }
        Expr::Binary(op, a, b) => {
            let head = match op {
                Op::Add => "+",
                Op::Sub => "-",
                Op::Mul => "*",
                Op::Div => "/",
                other => other.name(),
            };
            let _ = write!(out, "({head} ");
            src(a, names, k, out);
            out.push(' ');
            src(b, names, k, out);
            out.push(')');
        }
        Expr::Iterate(it) => {
            let (s, c) = (&names.state, &names.counter);
            let _ = write!(out, "(loop (({s} ");
            src(&it.init, names, k, out);
            let _ = write!(out, ") ({c} 0)) (if (>= {c} ");
            match it.count {
                Count::Input(i) => out.push_str(&names.inputs[i as usize]),
                Count::Fixed(n) => {
                    let _ = write!(out, "{n}");
                }
            }
            let _ = write!(out, ") {s} (recur ");
            src(&it.step, names, k, out);
            let _ = write!(out, " (+ {c} 1))))");
        }
    }
}

/// Ordinary infix math (Python and sympy syntax) with the constants' values.
pub fn infix(g: &Genome, names: &Names) -> String {
    infix_in(g, names, number)
}

/// [`infix`] with every constant's value in full (the shortest text that reads back as the
/// same `f64`), for code that must reproduce the program's numbers.
pub fn infix_exact(g: &Genome, names: &Names) -> String {
    infix_in(g, names, |x| {
        if x.is_finite() {
            format!("{x:?}")
        } else {
            format!("{x}")
        }
    })
}

fn infix_in(g: &Genome, names: &Names, num: fn(f64) -> String) -> String {
    let mut out = String::new();
    for (j, v) in g.lets.iter().enumerate() {
        let _ = write!(
            out,
            "{}{j} = {}; ",
            names.shared,
            infix_expr(v, names, num).0
        );
    }
    out.push_str(&infix_expr(&g.body, names, num).0);
    out
}

/// Precedence of what an infix string's outermost operator binds: 1 `+ -`, 2 `* /`,
/// 3 unary minus, 4 `**`, 5 an atom or a call.
type Infix = (String, u8);

fn infix_expr(e: &Expr, names: &Names, num: fn(f64) -> String) -> Infix {
    let wrap = |(s, p): Infix, min: u8| if p < min { format!("({s})") } else { s };
    match e {
        Expr::Const(c) => {
            let s = num(*c);
            let p = if s.starts_with('-') { 3 } else { 5 };
            (s, p)
        }
        Expr::Input(i) => (names.inputs[*i as usize].clone(), 5),
        Expr::State => (names.state.clone(), 5),
        Expr::Shared(j) => (format!("{}{j}", names.shared), 5),
        Expr::Unary(op, a) => {
            let a = infix_expr(a, names, num);
            match op {
                Op::Square => (format!("{}**2", wrap(a, 5)), 4),
                Op::Cube => (format!("{}**3", wrap(a, 5)), 4),
                Op::Neg => (format!("-{}", wrap(a, 4)), 3),
                Op::Inv => (format!("1/{}", wrap(a, 3)), 2),
                other => (format!("{}({})", other.name(), a.0), 5),
            }
        }
        Expr::Binary(op, a, b) => {
            if let (Op::Add | Op::Sub, Expr::Const(c)) = (op, &**b) {
                if *c < 0.0 {
                    let sign = if *op == Op::Add { "-" } else { "+" };
                    return (
                        format!("{} {sign} {}", infix_expr(a, names, num).0, num(-c)),
                        1,
                    );
                }
            }
            let (a, b) = (infix_expr(a, names, num), infix_expr(b, names, num));
            // A right operand led by a minus sign is always put in parentheses.
            let right = |b: Infix, min: u8| {
                if b.1 == 3 {
                    format!("({})", b.0)
                } else {
                    wrap(b, min)
                }
            };
            match op {
                Op::Add => (format!("{} + {}", a.0, right(b, 2)), 1),
                Op::Sub => (format!("{} - {}", a.0, right(b, 2)), 1),
                Op::Mul => (format!("{}*{}", wrap(a, 2), right(b, 3)), 2),
                Op::Div => (format!("{}/{}", wrap(a, 2), right(b, 3)), 2),
                Op::Pow => (format!("{}**{}", wrap(a, 5), wrap(b, 4)), 4),
                other => (format!("{}({}, {})", other.name(), a.0, b.0), 5),
            }
        }
        Expr::Iterate(it) => {
            let count = match it.count {
                Count::Input(i) => names.inputs[i as usize].clone(),
                Count::Fixed(n) => n.to_string(),
            };
            let s = &names.state;
            (
                format!(
                    "iterate({s} = {}; {s} -> {}; {count} times)",
                    infix_expr(&it.init, names, num).0,
                    infix_expr(&it.step, names, num).0
                ),
                5,
            )
        }
    }
}

/// A constant for people: six significant digits, no trailing zeros.
pub fn number(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-4..=8).contains(&mag) {
        let s = format!("{x:.5e}");
        let (m, e) = s.split_once('e').expect("exponent form");
        let m = m.trim_end_matches('0').trim_end_matches('.');
        return format!("{m}e{e}");
    }
    let decimals = (5 - mag).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::expr::Iterate;
    use super::*;

    fn names() -> Names {
        Names::new(&["x".to_string(), "n".to_string(), "c0".to_string()])
    }

    #[test]
    fn fresh_names_avoid_the_inputs() {
        let n = names();
        assert_eq!(n.param, "c_");
        assert_eq!((n.state.as_str(), n.counter.as_str()), ("s", "k"));
        let m = Names::new(&["s".to_string(), "t1".to_string()]);
        assert_eq!((m.state.as_str(), m.shared.as_str()), ("s_", "t_"));
    }

    #[test]
    fn source_and_infix() {
        let n = names();
        let it = Iterate {
            init: Expr::Input(0),
            step: Expr::bin(Op::Mul, Expr::Const(0.5), Expr::un(Op::Sin, Expr::State)),
            count: Count::Input(1),
        };
        let g = Genome {
            lets: vec![Expr::un(Op::Square, Expr::Input(0))],
            body: Expr::bin(
                Op::Sub,
                Expr::Iterate(Box::new(it)),
                Expr::bin(Op::Add, Expr::Shared(0), Expr::Const(-2.0)),
            ),
        };
        assert_eq!(
            source(&g, &n),
            "(let* ((t0 (* x x))) (- (loop ((s x) (k 0)) (if (>= k n) s \
             (recur (* c_0 (sin s)) (+ k 1)))) (+ t0 c_1)))"
        );
        assert_eq!(
            infix(&g, &n),
            "t0 = x**2; iterate(s = x; s -> 0.5*sin(s); n times) - (t0 - 2)"
        );
        let d = Genome::of(Expr::bin(
            Op::Div,
            Expr::Input(0),
            Expr::bin(Op::Mul, Expr::Input(1), Expr::un(Op::Neg, Expr::Input(0))),
        ));
        assert_eq!(infix(&d, &n), "x/(n*(-x))");
    }

    #[test]
    fn numbers_for_people() {
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(1.0 / 3.0), "0.333333");
        assert_eq!(number(2.8235825615541e10), "2.82358e10");
        assert_eq!(number(-12.776548), "-12.7765");
        assert_eq!(number(3.0), "3");
    }
}
