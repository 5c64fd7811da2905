//! An export tree as a Python function for NumPy, JAX, PyTorch or sympy: one lane's value (a
//! scalar input may be an array of lanes where the program is elementwise). Every primitive is
//! a helper of the target's prelude (written out in the code, so it runs as printed); `if` is
//! the target's `where` (sympy's `Piecewise`); a loop is a Python loop over masks (NumPy,
//! PyTorch, sympy), `lax.fori_loop` when its trip count is a constant, else `lax.while_loop`
//! (JAX).

use super::lower::{is_test, Ex, Lowered};
use super::{ExportError, Target};

/// Iterations a loop may run in NumPy, PyTorch or sympy before the function raises.
pub const MAX_ITERATIONS: u64 = 10_000_000;

const NUMPY: &str = r#"import numpy as np

def _where(c, t, e): return np.where(c, t, e)
def _and(a, b): return np.logical_and(a, b)
def _or(a, b): return np.logical_or(a, b)
def _not(a): return np.logical_not(a)
def _any(m): return bool(np.any(m))
def _all(m): return bool(np.all(m))
def _test(c):
    # Only #f is false: a number (or an array of them) is true.
    return c if isinstance(c, (bool, np.bool_)) or getattr(c, "dtype", None) == bool else True
_go = _any
def _pick(m, a, b):
    if a is None or b is None:
        return b if a is None else a
    if isinstance(a, tuple) or isinstance(b, tuple):
        if not (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)):
            raise TypeError("lanes take branches of different kinds of value")
        return tuple(_pick(m, x, y) for x, y in zip(a, b))
    return np.where(m, a, b)
def _list(*xs): return tuple(xs)
def _cons(a, d):
    if not isinstance(d, tuple):
        raise TypeError("cons onto a value that is not a list (an improper pair) has no export")
    return (a,) + d
def _car(p): return p[0]
def _cdr(p): return p[1:]
def _null(x): return isinstance(x, tuple) and len(x) == 0
def _pair(x): return isinstance(x, tuple) and len(x) > 0
def _eq(a, b): return np.equal(a, b)
def _lt(a, b): return np.less(a, b)
def _gt(a, b): return np.greater(a, b)
def _le(a, b): return np.less_equal(a, b)
def _ge(a, b): return np.greater_equal(a, b)
def _min(a, b): return np.where(b < a, b, a)
def _max(a, b): return np.where(b > a, b, a)
def _pow(a, b): return np.power(np.asarray(a, dtype=float), b)
def _div(a, b): return np.true_divide(a, b)
def _mod(a, b): return np.mod(a, b)
def _rem(a, b): return np.fmod(a, b)
_sin, _cos, _exp, _log, _sqrt, _abs = np.sin, np.cos, np.exp, np.log, np.sqrt, np.abs
def _plog(x): return np.log(np.where(x < 1e-8, 1e-8, x))
def _psqrt(x): return np.sqrt(np.where(x < 1e-8, 1e-8, x))
def _vec(*xs): return np.array(xs, dtype=float)
def _mat(*rows): return np.array(rows, dtype=float).reshape(len(rows), -1)
def _eye(n): return np.eye(int(n))
def _zeros(r, c=None): return np.zeros(int(r) if c is None else (int(r), int(c)))
def _ones(r, c=None): return np.ones(int(r) if c is None else (int(r), int(c)))
def _iota(n): return np.arange(int(n), dtype=float)
def _index(i, n):
    k = int(i)
    if k != i or not 0 <= k < n:
        raise IndexError(f"ref: index {i} is out of range (there are {n}) or not an integer")
    return k
def _ref(v, i, j=None):
    if j is None:
        return v[_index(i, len(v))]
    return v[_index(i, v.shape[0]), _index(j, v.shape[1])]
def _dot(a, b): return np.dot(a, b)
def _vsum(x): return np.sum(x)
def _vlen(x): return float(np.shape(x)[0])
def _norm(x): return np.sqrt(np.sum(np.square(x)))
def _normalize(x): return x / np.sqrt(np.sum(np.square(x)))
def _pnormalize(x): return x / np.maximum(np.sqrt(np.sum(np.square(x))), 1e-8)
def _cross(a, b): return np.cross(a, b)
def _matvec(a, v): return a @ v
def _matmul(a, b): return a @ b
def _transpose(a): return np.transpose(a)
def _trace(a): return np.trace(a[: min(np.shape(a)), : min(np.shape(a))])
def _outer(a, b): return np.outer(a, b)
def _det(a): return np.linalg.det(a) if np.shape(a)[0] else 1.0
def _logdet(a): return np.linalg.slogdet(a)[1]
def _inv(a): return np.linalg.inv(a)
def _solve(a, b): return np.linalg.solve(a, b)
"#;

const JAX: &str = r#"import jax
import jax.numpy as jnp
from jax import lax

def _where(c, t, e): return jnp.where(c, t, e)
def _and(a, b): return jnp.logical_and(a, b)
def _or(a, b): return jnp.logical_or(a, b)
def _not(a): return jnp.logical_not(a)
def _any(m): return jnp.any(m)
def _pick(m, a, b): return jax.tree_util.tree_map(lambda x, y: jnp.where(m, x, y), a, b)
def _test(c):
    # Only #f is false: a number (or an array of them) is true.
    return c if isinstance(c, bool) or getattr(c, "dtype", None) == bool else True
def _list(*xs): return tuple(xs)
def _cons(a, d):
    if not isinstance(d, tuple):
        raise TypeError("cons onto a value that is not a list (an improper pair) has no export")
    return (a,) + d
def _car(p): return p[0]
def _cdr(p): return p[1:]
def _null(x): return isinstance(x, tuple) and len(x) == 0
def _pair(x): return isinstance(x, tuple) and len(x) > 0
def _float(x): return jnp.asarray(x, dtype=jnp.result_type(float))
def _eq(a, b): return jnp.equal(a, b)
def _lt(a, b): return jnp.less(a, b)
def _gt(a, b): return jnp.greater(a, b)
def _le(a, b): return jnp.less_equal(a, b)
def _ge(a, b): return jnp.greater_equal(a, b)
def _min(a, b): return jnp.where(b < a, b, a)
def _max(a, b): return jnp.where(b > a, b, a)
def _pow(a, b): return jnp.power(_float(a), b)
def _div(a, b): return jnp.true_divide(a, b)
def _mod(a, b): return jnp.mod(a, b)
def _rem(a, b): return jnp.fmod(a, b)
_sin, _cos, _exp, _log, _sqrt, _abs = jnp.sin, jnp.cos, jnp.exp, jnp.log, jnp.sqrt, jnp.abs
def _plog(x): return jnp.log(jnp.where(x < 1e-8, 1e-8, x))
def _psqrt(x): return jnp.sqrt(jnp.where(x < 1e-8, 1e-8, x))
def _vec(*xs): return jnp.stack([_float(x) for x in xs]) if xs else jnp.zeros(0)
def _mat(*rows): return jnp.stack([_float(r) for r in rows]) if rows else jnp.zeros((0, 0))
def _eye(n): return jnp.eye(int(n))
def _zeros(r, c=None): return jnp.zeros(int(r) if c is None else (int(r), int(c)))
def _ones(r, c=None): return jnp.ones(int(r) if c is None else (int(r), int(c)))
def _iota(n): return jnp.arange(int(n), dtype=jnp.result_type(float))
def _ref(v, i, j=None):
    v, i = jnp.asarray(v), jnp.asarray(i).astype(int)
    return v[i] if j is None else v[i, jnp.asarray(j).astype(int)]
def _dot(a, b): return jnp.dot(a, b)
def _vsum(x): return jnp.sum(x)
def _vlen(x): return float(jnp.shape(x)[0])
def _norm(x): return jnp.sqrt(jnp.sum(jnp.square(x)))
def _normalize(x): return x / jnp.sqrt(jnp.sum(jnp.square(x)))
def _pnormalize(x): return x / jnp.maximum(jnp.sqrt(jnp.sum(jnp.square(x))), 1e-8)
def _cross(a, b): return jnp.cross(a, b)
def _matvec(a, v): return a @ v
def _matmul(a, b): return a @ b
def _transpose(a): return jnp.transpose(a)
def _trace(a): return jnp.trace(a[: min(jnp.shape(a)), : min(jnp.shape(a))])
def _outer(a, b): return jnp.outer(a, b)
def _det(a): return jnp.linalg.det(a) if jnp.shape(a)[0] else 1.0
def _logdet(a): return jnp.linalg.slogdet(a)[1]
def _inv(a): return jnp.linalg.inv(a)
def _solve(a, b): return jnp.linalg.solve(a, b)
"#;

const TORCH: &str = r#"import torch

def _t(x):
    if isinstance(x, torch.Tensor):
        return x
    return torch.tensor(x) if isinstance(x, bool) else torch.tensor(x, dtype=torch.float64)
def _where(c, t, e): return torch.where(_t(c).bool(), _t(t), _t(e))
def _and(a, b): return torch.logical_and(_t(a), _t(b))
def _or(a, b): return torch.logical_or(_t(a), _t(b))
def _not(a): return torch.logical_not(_t(a))
def _any(m): return bool(torch.any(_t(m)))
def _all(m): return bool(torch.all(_t(m)))
def _test(c):
    # Only #f is false: a number (or a tensor of them) is true.
    return c if isinstance(c, bool) or getattr(c, "dtype", None) == torch.bool else True
_go = _any
def _pick(m, a, b):
    if a is None or b is None:
        return b if a is None else a
    if isinstance(a, tuple) or isinstance(b, tuple):
        if not (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)):
            raise TypeError("lanes take branches of different kinds of value")
        return tuple(_pick(m, x, y) for x, y in zip(a, b))
    return _where(m, a, b)
def _list(*xs): return tuple(xs)
def _cons(a, d):
    if not isinstance(d, tuple):
        raise TypeError("cons onto a value that is not a list (an improper pair) has no export")
    return (a,) + d
def _car(p): return p[0]
def _cdr(p): return p[1:]
def _null(x): return isinstance(x, tuple) and len(x) == 0
def _pair(x): return isinstance(x, tuple) and len(x) > 0
def _eq(a, b): return torch.eq(_t(a), _t(b))
def _lt(a, b): return torch.lt(_t(a), _t(b))
def _gt(a, b): return torch.gt(_t(a), _t(b))
def _le(a, b): return torch.le(_t(a), _t(b))
def _ge(a, b): return torch.ge(_t(a), _t(b))
def _min(a, b): return torch.where(_t(b) < _t(a), _t(b), _t(a))
def _max(a, b): return torch.where(_t(b) > _t(a), _t(b), _t(a))
def _pow(a, b): return torch.pow(_t(a), _t(b))
def _div(a, b): return _t(a) / _t(b)
def _mod(a, b): return torch.remainder(_t(a), _t(b))
def _rem(a, b): return torch.fmod(_t(a), _t(b))
def _sin(x): return torch.sin(_t(x))
def _cos(x): return torch.cos(_t(x))
def _exp(x): return torch.exp(_t(x))
def _log(x): return torch.log(_t(x))
def _sqrt(x): return torch.sqrt(_t(x))
def _abs(x): return torch.abs(_t(x))
def _plog(x): return torch.log(torch.clamp(_t(x), min=1e-8))
def _psqrt(x): return torch.sqrt(torch.clamp(_t(x), min=1e-8))
def _vec(*xs): return torch.stack([_t(x) for x in xs]) if xs else torch.zeros(0, dtype=torch.float64)
def _mat(*rows): return torch.stack([_t(r) for r in rows]) if rows else torch.zeros((0, 0), dtype=torch.float64)
def _eye(n): return torch.eye(int(n), dtype=torch.float64)
def _zeros(r, c=None): return torch.zeros(int(r) if c is None else (int(r), int(c)), dtype=torch.float64)
def _ones(r, c=None): return torch.ones(int(r) if c is None else (int(r), int(c)), dtype=torch.float64)
def _iota(n): return torch.arange(int(n), dtype=torch.float64)
def _index(i, n):
    k = int(i)
    if k != i or not 0 <= k < n:
        raise IndexError(f"ref: index {i} is out of range (there are {n}) or not an integer")
    return k
def _ref(v, i, j=None):
    if j is None:
        return v[_index(i, len(v))]
    return v[_index(i, v.shape[0]), _index(j, v.shape[1])]
def _dot(a, b): return torch.dot(_t(a), _t(b))
def _vsum(x): return torch.sum(_t(x))
def _vlen(x): return float(_t(x).shape[0])
def _norm(x): return torch.sqrt(torch.sum(_t(x) ** 2))
def _normalize(x): return _t(x) / torch.sqrt(torch.sum(_t(x) ** 2))
def _pnormalize(x): return _t(x) / torch.clamp(torch.sqrt(torch.sum(_t(x) ** 2)), min=1e-8)
def _cross(a, b): return torch.linalg.cross(_t(a), _t(b))
def _matvec(a, v): return _t(a) @ _t(v)
def _matmul(a, b): return _t(a) @ _t(b)
def _transpose(a): return _t(a).T
def _trace(a):
    a = _t(a)
    n = min(a.shape)
    return torch.trace(a[:n, :n])
def _outer(a, b): return torch.outer(_t(a), _t(b))
def _det(a): return torch.linalg.det(_t(a)) if _t(a).shape[0] else _t(1.0)
def _logdet(a): return torch.linalg.slogdet(_t(a))[1]
def _inv(a): return torch.linalg.inv(_t(a))
def _solve(a, b): return torch.linalg.solve(_t(a), _t(b))
"#;

const SYMPY: &str = r#"import sympy

def _where(c, t, e):
    if c in (True, sympy.true):
        return t
    if c in (False, sympy.false):
        return e
    return sympy.Piecewise((t, c), (e, True))
def _and(a, b): return sympy.And(a, b)
def _or(a, b): return sympy.Or(a, b)
def _not(a): return sympy.Not(a)
def _any(m): return m is not False and m is not sympy.false
def _all(m): return m is True or m is sympy.true
def _go(m): return bool(m)
def _test(c):
    # Only #f is false: a number is true.
    return c if isinstance(c, (bool, sympy.logic.boolalg.Boolean)) else True
def _pick(m, a, b): return b if a is None else a if b is None else _where(m, a, b)
def _eq(a, b): return sympy.Eq(a, b)
def _lt(a, b): return sympy.Lt(a, b)
def _gt(a, b): return sympy.Gt(a, b)
def _le(a, b): return sympy.Le(a, b)
def _ge(a, b): return sympy.Ge(a, b)
def _min(a, b): return sympy.Min(a, b)
def _max(a, b): return sympy.Max(a, b)
def _pow(a, b): return sympy.Pow(a, b)
def _div(a, b): return sympy.sympify(a) / b
def _mod(a, b): return sympy.Mod(a, b)
def _rem(a, b): return a - b * sympy.sign(a / b) * sympy.floor(sympy.Abs(a / b))
_sin, _cos, _exp, _log, _sqrt, _abs = sympy.sin, sympy.cos, sympy.exp, sympy.log, sympy.sqrt, sympy.Abs
def _plog(x): return sympy.log(sympy.Max(x, sympy.Float(1e-8)))
def _psqrt(x): return sympy.sqrt(sympy.Max(x, sympy.Float(1e-8)))
def _vec(*xs): return sympy.Matrix(list(xs))
def _mat(*rows): return sympy.Matrix([list(r) for r in rows])
def _eye(n): return sympy.eye(int(n))
def _zeros(r, c=None): return sympy.zeros(int(r), 1 if c is None else int(c))
def _ones(r, c=None): return sympy.ones(int(r), 1 if c is None else int(c))
def _iota(n): return sympy.Matrix(list(range(int(n))))
def _ref(v, i, j=None):
    if j is not None:
        return v[int(i), int(j)]
    return v[int(i)] if v.shape[1] == 1 else v.row(int(i)).T
def _dot(a, b): return a.dot(b)
def _vsum(x): return sum(x)
def _vlen(x): return x.shape[0]
def _norm(x): return x.norm()
def _normalize(x): return x / x.norm()
def _pnormalize(x): return x / sympy.Max(x.norm(), sympy.Float(1e-8))
def _cross(a, b): return a.cross(b)
def _matvec(a, v): return a * v
def _matmul(a, b): return a * b
def _transpose(a): return a.T
def _trace(a):
    n = min(a.shape)
    return a[:n, :n].trace()
def _outer(a, b): return a * b.T
def _det(a): return a.det()
def _logdet(a): return sympy.log(sympy.Abs(a.det()))
def _inv(a): return a.inv()
def _solve(a, b): return a.LUsolve(b)
"#;

/// The prelude of a target's code.
pub fn prelude(target: Target) -> &'static str {
    match target {
        Target::Numpy => NUMPY,
        Target::Jax => JAX,
        Target::Torch => TORCH,
        Target::Sympy => SYMPY,
    }
}

struct Emit {
    lines: Vec<String>,
    indent: usize,
    target: Target,
    protected: bool,
    temps: usize,
}

/// Whether `e` builds or takes apart a list.
fn has_list(e: &Ex) -> bool {
    match e {
        Ex::Prim(p, xs) => {
            matches!(*p, "list" | "cons" | "car" | "cdr" | "null?" | "pair?")
                || xs.iter().any(has_list)
        }
        Ex::If(c, t, f) => has_list(c) || has_list(t) || has_list(f),
        Ex::Let(bs, b) => bs.iter().any(|(_, v)| has_list(v)) || has_list(b),
        Ex::Def(_, _, b, r) => has_list(b) || has_list(r),
        Ex::Call(f, xs) => has_list(f) || xs.iter().any(has_list),
        Ex::Loop(vs, b) => vs.iter().any(|(_, v)| has_list(v)) || has_list(b),
        Ex::Recur(xs) => xs.iter().any(has_list),
        Ex::Num(_) | Ex::Bool(_) | Ex::Var(_) => false,
    }
}

/// The Python code of `program`: the prelude, then `def program(...)`. Lists have no sympy
/// counterpart.
pub fn code(program: &Lowered, target: Target, protected: bool) -> Result<String, ExportError> {
    if target == Target::Sympy && has_list(&program.body) {
        return Err(ExportError {
            form: String::new(),
            line: None,
            column: None,
            message: "lists have no sympy counterpart (export to NumPy, JAX or PyTorch, where \
                      a list is a tuple)"
                .into(),
        });
    }
    let mut e = Emit {
        lines: Vec::new(),
        indent: 1,
        target,
        protected,
        temps: 0,
    };
    let plain = program.inputs.iter().all(|(n, py)| n == py);
    let mut out = String::from(prelude(target));
    out.push('\n');
    if plain {
        let names: Vec<&str> = program.inputs.iter().map(|(_, p)| p.as_str()).collect();
        let sig = if names.is_empty() {
            String::new()
        } else {
            format!("*, {}", names.join(", "))
        };
        out.push_str(&format!("\ndef program({sig}):\n"));
    } else {
        out.push_str("\ndef program(**inputs):\n");
        for (n, py) in &program.inputs {
            e.line(format!("{py} = inputs[{n:?}]"));
        }
    }
    let value = e.ex(&program.body);
    e.line(format!("return {value}"));
    for l in e.lines {
        out.push_str(&l);
        out.push('\n');
    }
    Ok(out)
}

fn number(x: f64) -> String {
    if x.is_nan() {
        "float('nan')".into()
    } else if x.is_infinite() {
        if x > 0.0 {
            "float('inf')"
        } else {
            "float('-inf')"
        }
        .into()
    } else {
        format!("{x:?}")
    }
}

impl Emit {
    fn line(&mut self, text: String) {
        self.lines
            .push(format!("{}{}", "    ".repeat(self.indent), text));
    }

    fn temp(&mut self, what: &str) -> String {
        self.temps += 1;
        format!("_{what}{}", self.temps)
    }

    /// An expression's Python text; the statements it needs go to the current block.
    fn ex(&mut self, e: &Ex) -> String {
        match e {
            Ex::Num(x) => number(*x),
            Ex::Bool(b) => if *b { "True" } else { "False" }.into(),
            Ex::Var(v) => v.clone(),
            Ex::Prim("not", xs) if xs.len() == 1 => {
                // Only #f is false: `(not 0)` is #f.
                let t = self.test(&xs[0]);
                format!("_not({t})")
            }
            Ex::Prim(p, xs) => {
                let args: Vec<String> = xs.iter().map(|x| self.ex(x)).collect();
                self.prim(p, args)
            }
            Ex::If(c, t, f) if self.target == Target::Jax => {
                let c = self.test(c);
                let t = self.ex(t);
                let f = self.ex(f);
                format!("_pick({c}, {t}, {f})")
            }
            Ex::If(c, t, f) => {
                // Each branch runs only where some lane takes it.
                let cv = self.test(c);
                let (name, yes, no) = (self.temp("c"), self.temp("t"), self.temp("f"));
                self.line(format!("{name} = {cv}"));
                self.line(format!("{yes} = {no} = None"));
                self.line(format!("if _any({name}):"));
                self.indent += 1;
                let tv = self.ex(t);
                self.line(format!("{yes} = {tv}"));
                self.indent -= 1;
                self.line(format!("if not _all({name}):"));
                self.indent += 1;
                let fv = self.ex(f);
                self.line(format!("{no} = {fv}"));
                self.indent -= 1;
                format!("_pick({name}, {yes}, {no})")
            }
            Ex::Let(bs, body) => {
                for (name, v) in bs {
                    let v = self.ex(v);
                    self.line(format!("{name} = {v}"));
                }
                self.ex(body)
            }
            Ex::Def(name, params, body, rest) => {
                self.line(format!("def {name}({}):", params.join(", ")));
                self.indent += 1;
                let v = self.ex(body);
                self.line(format!("return {v}"));
                self.indent -= 1;
                self.ex(rest)
            }
            Ex::Call(f, xs) => {
                let f = self.ex(f);
                let args: Vec<String> = xs.iter().map(|x| self.ex(x)).collect();
                format!("{f}({})", args.join(", "))
            }
            Ex::Loop(vars, body) => self.loop_(vars, body),
            Ex::Recur(_) => "None".into(),
        }
    }

    /// A condition: a test as it is, any other value through `_test` (only `#f` is false).
    fn test(&mut self, c: &Ex) -> String {
        let v = self.ex(c);
        if is_test(c) {
            v
        } else {
            format!("_test({v})")
        }
    }

    fn prim(&mut self, p: &str, a: Vec<String>) -> String {
        let fold = |op: &str, unit: &str, a: &[String]| -> String {
            if a.is_empty() {
                return unit.to_string();
            }
            format!("({})", a.join(&format!(" {op} ")))
        };
        let chain = |f: &str, a: &[String]| -> String {
            let pairs: Vec<String> = a
                .windows(2)
                .map(|w| format!("_{f}({}, {})", w[0], w[1]))
                .collect();
            pairs
                .into_iter()
                .reduce(|x, y| format!("_and({x}, {y})"))
                .unwrap_or_else(|| "True".into())
        };
        let left = |f: &str, a: &[String]| -> String {
            a.iter()
                .cloned()
                .reduce(|x, y| format!("_{f}({x}, {y})"))
                .unwrap_or_default()
        };
        match p {
            "+" => fold("+", "0.0", &a),
            "*" => fold("*", "1.0", &a),
            "-" if a.len() == 1 => format!("(-{})", a[0]),
            "-" => fold("-", "0.0", &a),
            "/" if a.len() == 1 => format!("_div(1.0, {})", a[0]),
            "/" => left("div", &a),
            "min" | "max" => left(p, &a),
            "pow" | "expt" => format!("_pow({}, {})", a[0], a[1]),
            "modulo" => format!("_mod({}, {})", a[0], a[1]),
            "remainder" => format!("_rem({}, {})", a[0], a[1]),
            "=" => chain("eq", &a),
            "<" => chain("lt", &a),
            ">" => chain("gt", &a),
            "<=" => chain("le", &a),
            ">=" => chain("ge", &a),
            "and" | "or" => left(p, &a),
            "log" | "sqrt" if self.protected => format!("_p{p}({})", a[0]),
            "normalize" if self.protected => format!("_pnormalize({})", a[0]),
            "scale" => format!("({} * {})", a[0], a[1]),
            "null?" => format!("_null({})", a[0]),
            "pair?" => format!("_pair({})", a[0]),
            _ => format!("_{p}({})", a.join(", ")),
        }
    }

    /// A loop as a nested function called with the initial values.
    fn loop_(&mut self, vars: &[(String, Ex)], body: &Ex) -> String {
        let inits: Vec<String> = vars.iter().map(|(_, v)| self.ex(v)).collect();
        let names: Vec<&str> = vars.iter().map(|(n, _)| n.as_str()).collect();
        let f = self.temp("loop");
        self.line(format!("def {f}({}):", names.join(", ")));
        self.indent += 1;
        if self.target == Target::Jax {
            self.jax_loop(&names, vars, body);
        } else {
            self.python_loop(&names, body);
        }
        self.indent -= 1;
        format!("{f}({})", inits.join(", "))
    }

    /// The body's tree: the statements for every lane, then each leaf with its lanes' mask.
    fn tree(&mut self, e: &Ex, mask: Option<String>, leaves: &mut Leaves) {
        match e {
            Ex::Let(bs, rest) => {
                for (name, v) in bs {
                    let v = self.ex(v);
                    self.line(format!("{name} = {v}"));
                }
                self.tree(rest, mask, leaves);
            }
            Ex::Def(..) if has_recur(e) => {
                let Ex::Def(name, params, fbody, rest) = e else {
                    unreachable!()
                };
                self.line(format!("def {name}({}):", params.join(", ")));
                self.indent += 1;
                let v = self.ex(fbody);
                self.line(format!("return {v}"));
                self.indent -= 1;
                self.tree(rest, mask, leaves);
            }
            Ex::If(c, t, f) if has_recur(t) || has_recur(f) => {
                let cv = self.test(c);
                let name = self.temp("c");
                self.line(format!("{name} = {cv}"));
                let (yes, no) = match &mask {
                    Some(m) => (
                        format!("_and({m}, {name})"),
                        format!("_and({m}, _not({name}))"),
                    ),
                    None => (name.clone(), format!("_not({name})")),
                };
                let (my, mn) = (self.temp("m"), self.temp("m"));
                self.line(format!("{my}, {mn} = {yes}, {no}"));
                leaves.masks.extend([my.clone(), mn.clone()]);
                self.branch(t, my, leaves);
                self.branch(f, mn, leaves);
            }
            Ex::Recur(args) => {
                let mut temps = Vec::new();
                for a in args {
                    let v = self.ex(a);
                    let t = self.temp("r");
                    self.line(format!("{t} = {v}"));
                    temps.push(t);
                }
                leaves.recur.push((mask, temps));
            }
            _ => {
                let v = self.ex(e);
                let t = self.temp("v");
                self.line(format!("{t} = {v}"));
                leaves.value.push((mask, t));
            }
        }
    }

    /// A branch of a loop body's tree, run (outside JAX) only where some lane takes it.
    fn branch(&mut self, e: &Ex, mask: String, leaves: &mut Leaves) {
        if self.target == Target::Jax {
            return self.tree(e, Some(mask), leaves);
        }
        self.line(format!("if _any({mask}):"));
        self.indent += 1;
        let at = self.lines.len();
        self.tree(e, Some(mask), leaves);
        if self.lines.len() == at {
            self.line("pass".into());
        }
        self.indent -= 1;
    }

    fn leaves(&mut self, names: &[&str], body: &Ex) -> (String, Vec<String>, String) {
        let mut leaves = Leaves::default();
        let start = self.lines.len();
        self.tree(body, None, &mut leaves);
        // A leaf whose branch no lane took has no value (None); `_pick` passes over it.
        let temps: Vec<&String> = leaves
            .recur
            .iter()
            .flat_map(|(_, t)| t.iter())
            .chain(leaves.value.iter().map(|(_, t)| t))
            .collect();
        if self.target != Target::Jax && !temps.is_empty() {
            let pad = "    ".repeat(self.indent);
            let names: Vec<&str> = temps.iter().map(|t| t.as_str()).collect();
            self.lines
                .insert(start, format!("{pad}{} = None", names.join(" = ")));
        }
        // A branch no lane took this iteration leaves its inner masks all false.
        if self.target != Target::Jax && !leaves.masks.is_empty() {
            let pad = "    ".repeat(self.indent);
            let line = format!("{pad}{} = False", leaves.masks.join(" = "));
            self.lines.insert(start, line);
        }
        let go = leaves
            .recur
            .iter()
            .map(|(m, _)| m.clone().unwrap_or_else(|| "True".into()))
            .reduce(|a, b| format!("_or({a}, {b})"))
            .unwrap_or_else(|| "False".into());
        let mut next: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        for (m, args) in &leaves.recur {
            for (j, a) in args.iter().enumerate() {
                next[j] = match m {
                    Some(m) => format!("_pick({m}, {a}, {})", next[j]),
                    None => a.clone(),
                };
            }
        }
        let mut value: Option<String> = None;
        for (m, v) in leaves.value.iter().rev() {
            value = Some(match (m, value) {
                (Some(m), Some(acc)) => format!("_pick({m}, {v}, {acc})"),
                (_, _) => v.clone(),
            });
        }
        (go, next, value.unwrap_or_else(|| "float('nan')".into()))
    }

    fn python_loop(&mut self, names: &[&str], body: &Ex) {
        self.line(format!("for _ in range({MAX_ITERATIONS}):"));
        self.indent += 1;
        let (go, next, value) = self.leaves(names, body);
        let g = self.temp("go");
        self.line(format!("{g} = {go}"));
        self.line(format!("if not _go({g}):"));
        self.line(format!("    return {value}"));
        if !names.is_empty() {
            self.line(format!("{} = {}", names.join(", "), next.join(", ")));
        }
        self.indent -= 1;
        self.line(format!(
            "raise RuntimeError('a loop ran {MAX_ITERATIONS} iterations without ending')"
        ));
    }

    fn jax_loop(&mut self, names: &[&str], vars: &[(String, Ex)], body: &Ex) {
        let state = format!(
            "({}{})",
            names.join(", "),
            if names.len() == 1 { "," } else { "" }
        );
        self.line("def _step(_s):".into());
        self.indent += 1;
        self.line(format!("{state} = _s"));
        let (go, next, value) = self.leaves(names, body);
        let tuple = format!(
            "({}{})",
            next.join(", "),
            if next.len() == 1 { "," } else { "" }
        );
        self.line(format!("return {go}, {tuple}, {value}"));
        self.indent -= 1;
        self.line(format!("_s = tuple(_float(v) for v in {state})"));
        match static_trips(vars, body) {
            Some(n) => self.line(format!(
                "_s = lax.fori_loop(0, {n}, lambda _i, _s: _step(_s)[1], _s)"
            )),
            None => self.line(
                "_s = lax.while_loop(lambda _s: _any(_step(_s)[0]), lambda _s: _step(_s)[1], _s)"
                    .into(),
            ),
        }
        self.line("return _step(_s)[2]".into());
    }
}

#[derive(Default)]
struct Leaves {
    recur: Vec<(Option<String>, Vec<String>)>,
    value: Vec<(Option<String>, String)>,
    masks: Vec<String>,
}

/// Whether `e` continues its loop somewhere (a `recur` not inside an inner loop).
fn has_recur(e: &Ex) -> bool {
    match e {
        Ex::Recur(_) => true,
        Ex::If(_, t, f) => has_recur(t) || has_recur(f),
        Ex::Let(_, body) => has_recur(body),
        Ex::Def(_, _, _, rest) => has_recur(rest),
        _ => false,
    }
}

/// The arguments of the one `recur` `e` ends in, through `let`s and definitions.
fn only_recur(e: &Ex) -> Option<&[Ex]> {
    match e {
        Ex::Recur(args) => Some(args),
        Ex::Let(_, body) => only_recur(body),
        Ex::Def(_, _, _, rest) => only_recur(rest),
        _ => None,
    }
}

/// The trip count of a loop whose body is `(if (= k N) value (recur ... (+ k c) ...))` (or
/// `>=`, or `<` with the branches swapped) over a counter `k` starting at a constant: a
/// constant, so JAX can run it as `fori_loop` (which it differentiates in reverse).
fn static_trips(vars: &[(String, Ex)], body: &Ex) -> Option<u64> {
    let Ex::If(c, t, f) = body else {
        return None;
    };
    let Ex::Prim(op, args) = c.as_ref() else {
        return None;
    };
    let (Ex::Var(k), Ex::Num(n)) = (args.first()?, args.get(1)?) else {
        return None;
    };
    if args.len() != 2 {
        return None;
    }
    let (exit, go) = match *op {
        "=" | ">=" | ">" => (t, f),
        "<" | "<=" => (f, t),
        _ => return None,
    };
    if has_recur(exit) {
        return None;
    }
    let next = only_recur(go)?;
    let j = vars.iter().position(|(name, _)| name == k)?;
    let Ex::Num(start) = vars[j].1 else {
        return None;
    };
    let step = match &next[j] {
        Ex::Prim("+", xs) => match xs.as_slice() {
            [Ex::Var(v), Ex::Num(s)] | [Ex::Num(s), Ex::Var(v)] if v == k => *s,
            _ => return None,
        },
        _ => return None,
    };
    if step <= 0.0 || step.fract() != 0.0 || start.fract() != 0.0 || n.fract() != 0.0 {
        return None;
    }
    // The first t >= 0 with start + t * step meeting the exit test.
    let exits = |t: f64| {
        let k = start + t * step;
        match *op {
            "=" => k == *n,
            ">=" => k >= *n,
            ">" => k > *n,
            "<" => k >= *n,
            "<=" => k > *n,
            _ => false,
        }
    };
    let guess = ((n - start) / step).floor().max(0.0);
    (0..3)
        .map(|d| guess + d as f64)
        .find(|&t| exits(t))
        .filter(|&t| t < 1e9 && (*op != "=" || start + t * step == *n))
        .map(|t| t as u64)
}
