//! Export (`ndvm export`, `Program.to_numpy()` and the others): a program of the object
//! language as code of another system, to run at full speed in the user's own code once a
//! search has settled it. One translation ([`lower`]) reads the program as an expression tree
//! with its names resolved; [`python`] writes it as a Python function for NumPy, JAX, PyTorch or
//! sympy, and [`latex`] as math. What a target cannot express (recursion, symbols, lists in
//! sympy, an `if` without an else) is an [`ExportError`] naming the form and its line, never a
//! wrong function.

pub mod latex;
pub mod lower;
pub mod python;

use std::fmt;

/// A target of `ndvm export --to`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// A NumPy function.
    Numpy,
    /// A JAX function (`jax.jit` and `jax.grad` apply).
    Jax,
    /// A PyTorch function (autograd applies).
    Torch,
    /// A function building a sympy expression.
    Sympy,
}

/// Why a program cannot be exported: the offending form, where it is, and what about it.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportError {
    /// The form's text (at most 60 characters).
    pub form: String,
    /// Its line (1-based).
    pub line: Option<usize>,
    /// Its column (1-based).
    pub column: Option<usize>,
    /// What cannot be exported.
    pub message: String,
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(
                f,
                "line {l}, column {c}: {} (`{}`)",
                self.message, self.form
            ),
            _ => write!(f, "{}", self.message),
        }
    }
}

/// A program exported as Python: the code (a prelude, then `def program(...)`) and the
/// program's inputs, each with its name in the code.
#[derive(Clone, Debug, PartialEq)]
pub struct PythonExport {
    /// The module's text.
    pub code: String,
    /// `(input, python_name)`, in order of first use.
    pub inputs: Vec<(String, String)>,
}

/// `source` as a Python function for `target`; with `protected`, `log`, `sqrt` and
/// `normalize` clamp as under `--protected-ops`.
pub fn to_python(
    source: &str,
    target: Target,
    protected: bool,
) -> Result<PythonExport, ExportError> {
    deep(|| {
        let tree = lower::lower(source)?;
        Ok(PythonExport {
            code: python::code(&tree, target, protected)?,
            inputs: tree.inputs,
        })
    })
}

/// `source` as LaTeX math ([`latex`]).
pub fn to_latex(source: &str) -> Result<String, ExportError> {
    deep(|| latex::to_latex(source))
}

/// Runs an export on a thread of its own with a stack for the deepest program the reader lets
/// through (forms nested [`runtime_cpu::decode::NESTING_LIMIT`] deep, each level a few
/// frames of the recursive lowering and printing): the stack is reserved, not used, until a
/// program needs it.
fn deep<T: Send>(f: impl FnOnce() -> Result<T, ExportError> + Send) -> Result<T, ExportError> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("ndvm-export".into())
            .stack_size(1 << 30)
            .spawn_scoped(s, f)
            .map_err(|e| ExportError {
                form: String::new(),
                line: None,
                column: None,
                message: format!("cannot start the export's thread: {e}"),
            })?
            .join()
            .unwrap_or_else(|_| {
                Err(ExportError {
                    form: String::new(),
                    line: None,
                    column: None,
                    message: "internal error: the export panicked (a bug of ndvm; please \
                              report this program)"
                        .into(),
                })
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_python_identifiers_and_forms_are_refused_by_line() {
        let out = to_python(
            "(let ((lambda-1 2)) (* lambda-1 x-y))",
            Target::Numpy,
            false,
        )
        .expect("exports");
        assert!(out.code.contains("def program(**inputs):"), "{}", out.code);
        assert_eq!(out.inputs, vec![("x-y".to_string(), "x_y".to_string())]);
        let e = to_python("(+ 1\n   (eq? x 'a))", Target::Numpy, false).unwrap_err();
        assert_eq!((e.line, e.column), (Some(2), Some(4)), "{e}");
        assert!(e.message.contains("`eq?`"), "{e}");
        assert!(to_python("(car (list x 2))", Target::Numpy, false).is_ok());
        assert!(to_python("(car (list x 2))", Target::Sympy, false).is_err());
        let e = to_python(
            "(define (f n) (if (= n 0) 1 (f (- n 1))))\n(f x)",
            Target::Jax,
            false,
        )
        .unwrap_err();
        assert!(e.message.contains("recursion"), "{e}");
        assert!(to_python("(if x 1)", Target::Torch, false).is_err());
        assert!(to_python("(let loop ((i 0)) (loop i))", Target::Torch, false).is_err());
    }

    #[test]
    fn a_counted_loop_is_a_fori_loop_in_jax() {
        let src = "(loop ((k 0) (s x)) (if (= k 10) s (let ((t (* s 2))) (recur (+ k 1) t))))";
        let jax = to_python(src, Target::Jax, false).unwrap().code;
        assert!(jax.contains("lax.fori_loop(0, 10,"), "{jax}");
        let open = "(loop ((s x)) (if (> s 1) (recur (/ s 2)) s))";
        let jax = to_python(open, Target::Jax, false).unwrap().code;
        assert!(jax.contains("lax.while_loop("), "{jax}");
        let np = to_python(open, Target::Numpy, false).unwrap().code;
        assert!(np.contains("for _ in range(10000000):"), "{np}");
    }

    #[test]
    fn latex_of_a_formula() {
        let t = latex::to_latex("(/ (* a (sqrt x_1)) (+ b 1))").unwrap();
        assert_eq!(t, "\\frac{a \\cdot \\sqrt{x_{1}}}{b + 1}");
        assert!(latex::to_latex("(loop ((i 0)) (if (> i 2) i (recur (+ i 1))))").is_err());
    }
}
