//! Programs given as text (`--seed-programs`, an outside proposer's candidates) read as genomes
//! of the built-in grammar where they can be, so the built-in proposer can vary them, and their
//! complexity counted either way.

use super::expr::{Count, Expr, Genome, Iterate};
use super::ops::Op;
use runtime_cpu::syntax::{read, DatumId, DatumKind, Forms, Interner};
use std::collections::HashMap;

/// Forms whose head is syntax, not an operator node.
const KEYWORDS: [&str; 15] = [
    "if", "let", "let*", "letrec", "loop", "recur", "lambda", "define", "begin", "cond", "else",
    "when", "unless", "quote", "and",
];

/// The node count of any program: its numbers and names, less the keywords of special forms
/// and the names that bindings introduce.
pub fn complexity(src: &str) -> Result<usize, String> {
    let mut names = Interner::default();
    let forms = read(src, &mut names).map_err(|e| e.to_string())?;
    let mut count = 0usize;
    let mut stack: Vec<DatumId> = forms.top.clone();
    while let Some(id) = stack.pop() {
        let items = forms.items(id);
        match forms.get(id).kind {
            DatumKind::List { .. } | DatumKind::Bracket { .. } => {
                let head = items.first().and_then(|&h| symbol(&forms, &names, h));
                for (i, &c) in items.iter().enumerate() {
                    if i == 0 && head.is_some_and(|h| KEYWORDS.contains(&h)) {
                        continue;
                    }
                    if i == 1 && matches!(head, Some("let" | "let*" | "letrec" | "loop")) {
                        // ((name value) ...): count the values only.
                        for &b in forms.items(c) {
                            stack.extend(forms.items(b).iter().skip(1));
                        }
                        continue;
                    }
                    if i == 1 && matches!(head, Some("lambda" | "define")) {
                        continue;
                    }
                    stack.push(c);
                }
            }
            _ => count += 1,
        }
    }
    Ok(count)
}

fn symbol<'a>(forms: &Forms, names: &'a Interner, id: DatumId) -> Option<&'a str> {
    match forms.get(id).kind {
        DatumKind::Symbol(s) => Some(names.name(s)),
        _ => None,
    }
}

/// What a name stands for while reading.
#[derive(Clone)]
enum Bound {
    Value(Expr),
    State,
}

struct Reader<'a> {
    forms: &'a Forms,
    names: &'a Interner,
    inputs: &'a [String],
    count_inputs: &'a [u16],
    init: &'a HashMap<String, f64>,
    env: Vec<(String, Bound)>,
}

/// The genome `src` reads as, when it is written in the built-in grammar's forms: `+ - * /`,
/// the one-operand functions, `pow`, `min`, `max`, `let`/`let*` (written out where used) and
/// `(loop ((s INIT) (k 0)) (if (>= k N) s (recur STEP (+ k 1))))` (also with `=`). Its numbers
/// and its free names other than the inputs become constants, starting at their `init` values
/// (a name without one at 1.0).
pub fn to_genome(
    src: &str,
    inputs: &[String],
    count_inputs: &[u16],
    init: &HashMap<String, f64>,
) -> Option<Genome> {
    let mut names = Interner::default();
    let forms = read(src, &mut names).ok()?;
    let [top] = forms.top[..] else {
        return None;
    };
    let mut r = Reader {
        forms: &forms,
        names: &names,
        inputs,
        count_inputs,
        init,
        env: Vec::new(),
    };
    let body = r.expr(top, 0, false)?;
    let g = Genome::of(body);
    g.is_well_formed().then_some(g)
}

/// The most nodes a program read as a genome may have: reading stops beyond it (so neither a
/// long argument list nor `let` values written out where used can grow without bound).
const MAX_NODES: usize = 200;

/// True when `src` has a `loop` form anywhere.
pub fn has_loop(src: &str) -> bool {
    let mut names = Interner::default();
    let Ok(forms) = read(src, &mut names) else {
        return false;
    };
    let mut stack: Vec<DatumId> = forms.top.clone();
    while let Some(id) = stack.pop() {
        let items = forms.items(id);
        if matches!(forms.get(id).kind, DatumKind::List { .. })
            && items.first().and_then(|&h| symbol(&forms, &names, h)) == Some("loop")
        {
            return true;
        }
        stack.extend(items);
    }
    false
}

impl Reader<'_> {
    fn sym(&self, id: DatumId) -> Option<&str> {
        symbol(self.forms, self.names, id)
    }

    /// The genome of datum `id`, within [`MAX_NODES`].
    fn expr(&mut self, id: DatumId, depth: usize, in_iterate: bool) -> Option<Expr> {
        let e = self.expr_unchecked(id, depth, in_iterate)?;
        (e.size() <= MAX_NODES).then_some(e)
    }

    fn expr_unchecked(&mut self, id: DatumId, depth: usize, in_iterate: bool) -> Option<Expr> {
        if depth > 64 {
            return None;
        }
        match self.forms.get(id).kind {
            DatumKind::Number(v) => Some(Expr::Const(v)),
            DatumKind::Symbol(s) => {
                let name = self.names.name(s);
                if let Some((_, b)) = self.env.iter().rev().find(|(n, _)| n == name) {
                    return Some(match b {
                        Bound::Value(e) => e.clone(),
                        Bound::State => Expr::State,
                    });
                }
                if let Some(i) = self.inputs.iter().position(|n| n == name) {
                    return Some(Expr::Input(i as u16));
                }
                Some(Expr::Const(self.init.get(name).copied().unwrap_or(1.0)))
            }
            DatumKind::List { .. } => self.list(id, depth, in_iterate),
            _ => None,
        }
    }

    fn list(&mut self, id: DatumId, depth: usize, in_iterate: bool) -> Option<Expr> {
        let items = self.forms.items(id).to_vec();
        if items.len() > MAX_NODES {
            return None;
        }
        let head = self.sym(*items.first()?)?.to_string();
        let mut args = Vec::new();
        if !matches!(head.as_str(), "let" | "let*" | "loop") {
            for &a in &items[1..] {
                args.push(self.expr(a, depth + 1, in_iterate)?);
            }
        }
        let fold = |op: Op, args: Vec<Expr>| args.into_iter().reduce(|a, b| Expr::bin(op, a, b));
        match (head.as_str(), args.len()) {
            ("+", 0) => Some(Expr::Const(0.0)),
            ("*", 0) => Some(Expr::Const(1.0)),
            ("+", _) => fold(Op::Add, args),
            ("*", _) => fold(Op::Mul, args),
            ("-", 1) => Some(Expr::un(Op::Neg, args.pop()?)),
            ("/", 1) => Some(Expr::un(Op::Inv, args.pop()?)),
            ("-", _) => fold(Op::Sub, args),
            ("/", _) => fold(Op::Div, args),
            ("min", n) if n >= 1 => fold(Op::Min, args),
            ("max", n) if n >= 1 => fold(Op::Max, args),
            ("pow", 2) => {
                let b = args.pop()?;
                let a = args.pop()?;
                Some(match b {
                    Expr::Const(2.0) => Expr::un(Op::Square, a),
                    Expr::Const(3.0) => Expr::un(Op::Cube, a),
                    b => Expr::bin(Op::Pow, a, b),
                })
            }
            ("let" | "let*", _) => self.let_form(&items, &head, depth, in_iterate),
            ("loop", _) if !in_iterate => self.loop_form(&items, depth),
            (name, 1) => {
                let op = Op::from_name(name).filter(|o| o.arity() == 1)?;
                Some(Expr::un(op, args.pop()?))
            }
            _ => None,
        }
    }

    fn let_form(&mut self, items: &[DatumId], head: &str, depth: usize, it: bool) -> Option<Expr> {
        let [_, binds, body] = items[..] else {
            return None;
        };
        let mark = self.env.len();
        let mut pending = Vec::new();
        for &b in self.forms.items(binds) {
            let [n, v] = self.forms.items(b)[..] else {
                return None;
            };
            let name = self.sym(n)?.to_string();
            let value = self.expr(v, depth + 1, it)?;
            if head == "let*" {
                self.env.push((name, Bound::Value(value)));
            } else {
                pending.push((name, Bound::Value(value)));
            }
        }
        self.env.extend(pending);
        let out = self.expr(body, depth + 1, it);
        self.env.truncate(mark);
        out
    }

    fn loop_form(&mut self, items: &[DatumId], depth: usize) -> Option<Expr> {
        let f = self.forms;
        let [_, binds, body] = items[..] else {
            return None;
        };
        let [sb, kb] = f.items(binds)[..] else {
            return None;
        };
        let [s_name, s_init] = f.items(sb)[..] else {
            return None;
        };
        let [k_name, k_init] = f.items(kb)[..] else {
            return None;
        };
        let (s, k) = (self.sym(s_name)?.to_string(), self.sym(k_name)?.to_string());
        if !matches!(f.get(k_init).kind, DatumKind::Number(z) if z == 0.0) {
            return None;
        }
        let [if_kw, test, done, next] = f.items(body)[..] else {
            return None;
        };
        if self.sym(if_kw)? != "if" || self.sym(done)? != s {
            return None;
        }
        let [cmp, tk, tn] = f.items(test)[..] else {
            return None;
        };
        if !matches!(self.sym(cmp)?, ">=" | "=") || self.sym(tk)? != k {
            return None;
        }
        let count = match f.get(tn).kind {
            DatumKind::Number(n) if n >= 0.0 && n.fract() == 0.0 && n <= 1e6 => {
                Count::Fixed(n as u32)
            }
            DatumKind::Symbol(_) => {
                let name = self.sym(tn)?;
                let i = self.inputs.iter().position(|n| n == name)? as u16;
                if !self.count_inputs.contains(&i) {
                    return None;
                }
                Count::Input(i)
            }
            _ => return None,
        };
        let [recur, step, bump] = f.items(next)[..] else {
            return None;
        };
        if self.sym(recur)? != "recur" {
            return None;
        }
        let [plus, bk, one] = f.items(bump)[..] else {
            return None;
        };
        let one_ok = matches!(f.get(one).kind, DatumKind::Number(o) if o == 1.0);
        if self.sym(plus)? != "+" || self.sym(bk)? != k || !one_ok {
            return None;
        }
        let init = self.expr(s_init, depth + 1, true)?;
        let mark = self.env.len();
        self.env.push((s, Bound::State));
        // The counter may not be read by the step: shadow it with something unconvertible.
        let step = self.step_without(&k, step, depth);
        self.env.truncate(mark);
        Some(Expr::Iterate(Box::new(Iterate {
            init,
            step: step?,
            count,
        })))
    }

    fn step_without(&mut self, counter: &str, step: DatumId, depth: usize) -> Option<Expr> {
        if mentions(self.forms, self.names, step, counter) {
            return None;
        }
        self.expr(step, depth + 1, true)
    }
}

/// True when the datum `id` mentions the name `name` anywhere.
fn mentions(forms: &Forms, names: &Interner, id: DatumId, name: &str) -> bool {
    let mut stack = vec![id];
    while let Some(d) = stack.pop() {
        if symbol(forms, names, d) == Some(name) {
            return true;
        }
        stack.extend(forms.items(d));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::super::emit::{source, Names};
    use super::*;

    fn inputs() -> Vec<String> {
        vec!["x".into(), "n".into()]
    }

    fn conv(src: &str) -> Option<String> {
        let init: HashMap<String, f64> = [("a".to_string(), 2.0)].into();
        let g = to_genome(src, &inputs(), &[1], &init)?;
        Some(source(&g, &Names::new(&inputs())))
    }

    #[test]
    fn the_papers_candidates_read_as_genomes() {
        assert_eq!(
            conv("(* a (* (exp (* b x)) (sin (* c x))))").unwrap(),
            "(* c0 (* (exp (* c1 x)) (sin (* c2 x))))"
        );
        assert_eq!(
            conv("(loop ((s (* c x)) (k 0)) (if (= k 10) s (recur (+ (* a s) b) (+ k 1))))")
                .unwrap(),
            "(loop ((s (* c0 x)) (k 0)) (if (>= k 10) s (recur (+ (* c1 s) c2) (+ k 1))))"
        );
        assert_eq!(
            conv("(let* ((cx (* c x)) (g (cos cx))) (+ g (pow cx 2)))").unwrap(),
            "(+ (cos (* c0 x)) (pow (* c1 x) 2))"
        );
        assert_eq!(
            conv("(loop ((s x) (k 0)) (if (>= k n) s (recur (sin s) (+ k 1))))").unwrap(),
            "(loop ((s x) (k 0)) (if (>= k n) s (recur (sin s) (+ k 1))))"
        );
        let g = to_genome("(* a x)", &inputs(), &[], &[("a".into(), 2.0)].into()).unwrap();
        assert_eq!(g.constants(), vec![2.0]);
    }

    #[test]
    fn other_programs_do_not() {
        for src in [
            "(vsum [x x])",
            "(if (> x 0) x 0)",
            "(loop ((s x) (k 0)) (if (>= k 3) s (recur (+ s k) (+ k 1))))",
            "(loop ((s x) (k 0)) (if (>= k x) s (recur s (+ k 1))))",
            "(define (f y) y) (f x)",
            "(sin",
        ] {
            assert_eq!(conv(src), None, "{src}");
        }
    }

    #[test]
    fn complexity_counts_nodes_not_syntax() {
        assert_eq!(complexity("(* a (sin x))").unwrap(), 4);
        let it = "(loop ((s x) (k 0)) (if (>= k n) s (recur (sin s) (+ k 1))))";
        assert_eq!(complexity(it).unwrap(), 11);
        assert_eq!(complexity("(let ((t (* x x))) (+ t t))").unwrap(), 6);
        assert!(complexity("(+ 1").is_err());
    }
}
