//! The primitives of the object language, by name, with their accepted argument counts.

use shared_ir::{BinaryOp, CompareOp, LinalgOp, Shape, UnaryOp};

/// A primitive procedure of the object language.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `+`, variadic.
    Add,
    /// `-`, negation or left fold.
    Sub,
    /// `*`, variadic.
    Mul,
    /// `/`, reciprocal or left fold.
    Div,
    /// `min`, variadic (at least one).
    Min,
    /// `max`, variadic (at least one).
    Max,
    /// `pow`, `modulo`, `remainder`.
    Binary(BinaryOp),
    /// `sin cos exp log sqrt abs` (and their protected forms).
    Unary(UnaryOp),
    /// `= < > <= >=`, chained over two or more arguments.
    Compare(CompareOp),
    /// `not`.
    Not,
    /// `cons`.
    Cons,
    /// `car`.
    Car,
    /// `cdr`.
    Cdr,
    /// `list`.
    List,
    /// `null?`.
    IsNull,
    /// `pair?`.
    IsPair,
    /// `number?`.
    IsNumber,
    /// `boolean?`.
    IsBoolean,
    /// `symbol?`.
    IsSymbol,
    /// `procedure?`.
    IsProcedure,
    /// `eq?`.
    IsEq,
    /// `vec`: a vector from numbers.
    Vec,
    /// `mat`: a matrix from row vectors.
    Mat,
    /// `[...]`: a vector of numbers or a matrix of row vectors.
    Bracket,
    /// `eye n`.
    Eye,
    /// `zeros n` or `zeros r c`.
    Zeros,
    /// `ones n` or `ones r c`.
    Ones,
    /// `iota n`: the vector 0, 1, ..., n-1.
    Iota,
    /// `ref v i`, `ref M i` (a row), `ref M i j`.
    Ref,
    /// `dot`.
    Dot,
    /// `vsum`: sum of all elements.
    Vsum,
    /// `vlen`: number of elements of a vector (rows of a matrix).
    Vlen,
    /// `norm`: Euclidean (Frobenius) norm.
    Norm,
    /// `normalize`.
    Normalize,
    /// `cross`.
    Cross,
    /// `matvec`.
    Matvec,
    /// `matmul`.
    Matmul,
    /// `transpose`.
    Transpose,
    /// `trace`.
    Trace,
    /// `outer`.
    Outer,
    /// `scale s X`.
    Scale,
    /// `det`.
    Det,
    /// `logdet`: log |det A|.
    Logdet,
    /// `inv`.
    Inv,
    /// `solve A b`.
    Solve,
}

/// Accepted argument counts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arity {
    /// Exactly n.
    Exactly(usize),
    /// n or more.
    AtLeast(usize),
    /// Between the two, inclusive.
    Range(usize, usize),
}

impl Arity {
    /// Whether `n` arguments are accepted.
    pub fn accepts(self, n: usize) -> bool {
        match self {
            Arity::Exactly(k) => n == k,
            Arity::AtLeast(k) => n >= k,
            Arity::Range(lo, hi) => (lo..=hi).contains(&n),
        }
    }

    /// The accepted counts, in words.
    pub fn describe(self) -> String {
        match self {
            Arity::Exactly(k) => format!("{k}"),
            Arity::AtLeast(k) => format!("at least {k}"),
            Arity::Range(lo, hi) => format!("{lo} to {hi}"),
        }
    }
}

const TABLE: &[(&str, Builtin)] = &[
    ("+", Builtin::Add),
    ("-", Builtin::Sub),
    ("*", Builtin::Mul),
    ("/", Builtin::Div),
    ("min", Builtin::Min),
    ("max", Builtin::Max),
    ("pow", Builtin::Binary(BinaryOp::Pow)),
    ("expt", Builtin::Binary(BinaryOp::Pow)),
    ("modulo", Builtin::Binary(BinaryOp::Modulo)),
    ("remainder", Builtin::Binary(BinaryOp::Remainder)),
    ("sin", Builtin::Unary(UnaryOp::Sin)),
    ("cos", Builtin::Unary(UnaryOp::Cos)),
    ("exp", Builtin::Unary(UnaryOp::Exp)),
    ("log", Builtin::Unary(UnaryOp::Log)),
    ("sqrt", Builtin::Unary(UnaryOp::Sqrt)),
    ("abs", Builtin::Unary(UnaryOp::Abs)),
    ("=", Builtin::Compare(CompareOp::Eq)),
    ("<", Builtin::Compare(CompareOp::Lt)),
    (">", Builtin::Compare(CompareOp::Gt)),
    ("<=", Builtin::Compare(CompareOp::Le)),
    (">=", Builtin::Compare(CompareOp::Ge)),
    ("not", Builtin::Not),
    ("cons", Builtin::Cons),
    ("car", Builtin::Car),
    ("cdr", Builtin::Cdr),
    ("list", Builtin::List),
    ("null?", Builtin::IsNull),
    ("pair?", Builtin::IsPair),
    ("number?", Builtin::IsNumber),
    ("boolean?", Builtin::IsBoolean),
    ("symbol?", Builtin::IsSymbol),
    ("procedure?", Builtin::IsProcedure),
    ("eq?", Builtin::IsEq),
    ("vec", Builtin::Vec),
    ("mat", Builtin::Mat),
    ("eye", Builtin::Eye),
    ("zeros", Builtin::Zeros),
    ("ones", Builtin::Ones),
    ("iota", Builtin::Iota),
    ("ref", Builtin::Ref),
    ("dot", Builtin::Dot),
    ("vsum", Builtin::Vsum),
    ("vlen", Builtin::Vlen),
    ("norm", Builtin::Norm),
    ("normalize", Builtin::Normalize),
    ("cross", Builtin::Cross),
    ("matvec", Builtin::Matvec),
    ("matmul", Builtin::Matmul),
    ("transpose", Builtin::Transpose),
    ("trace", Builtin::Trace),
    ("outer", Builtin::Outer),
    ("scale", Builtin::Scale),
    ("det", Builtin::Det),
    ("logdet", Builtin::Logdet),
    ("inv", Builtin::Inv),
    ("solve", Builtin::Solve),
];

impl Builtin {
    /// The primitive a name denotes, if any.
    pub fn lookup(name: &str) -> Option<Builtin> {
        TABLE.iter().find(|(n, _)| *n == name).map(|&(_, b)| b)
    }

    /// Every primitive name of the language.
    pub fn names() -> impl Iterator<Item = &'static str> {
        TABLE.iter().map(|&(n, _)| n)
    }

    /// The name the user wrote for this primitive.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Bracket => "[...]",
            Builtin::Unary(UnaryOp::LogProtected) => "log",
            Builtin::Unary(UnaryOp::SqrtProtected) => "sqrt",
            Builtin::Unary(UnaryOp::Neg) => "-",
            Builtin::Unary(UnaryOp::Recip) => "/",
            _ => TABLE
                .iter()
                .find(|&&(_, b)| b == self)
                .map_or("?", |&(n, _)| n),
        }
    }

    /// The vector or matrix op of this primitive (with `protected`, the clamped
    /// `normalize`), if it is one.
    pub fn linalg(self, protected: bool) -> Option<LinalgOp> {
        Some(match self {
            Builtin::Dot => LinalgOp::Dot,
            Builtin::Vsum => LinalgOp::Vsum,
            Builtin::Norm => LinalgOp::Norm,
            Builtin::Normalize if protected => LinalgOp::NormalizeProtected,
            Builtin::Normalize => LinalgOp::Normalize,
            Builtin::Cross => LinalgOp::Cross,
            Builtin::Matvec => LinalgOp::Matvec,
            Builtin::Matmul => LinalgOp::Matmul,
            Builtin::Transpose => LinalgOp::Transpose,
            Builtin::Trace => LinalgOp::Trace,
            Builtin::Outer => LinalgOp::Outer,
            Builtin::Det => LinalgOp::Det,
            Builtin::Logdet => LinalgOp::Logdet,
            Builtin::Inv => LinalgOp::Inv,
            Builtin::Solve => LinalgOp::Solve,
            _ => return None,
        })
    }

    /// The argument counts the primitive accepts.
    pub fn arity(self) -> Arity {
        use Builtin::*;
        match self {
            Add | Mul | List | Vec | Mat | Bracket => Arity::AtLeast(0),
            Sub | Div | Min | Max => Arity::AtLeast(1),
            Compare(_) => Arity::AtLeast(2),
            Binary(_) | Cons | IsEq | Dot | Cross | Matvec | Matmul | Outer | Scale | Solve => {
                Arity::Exactly(2)
            }
            Unary(_) | Not | Car | Cdr | IsNull | IsPair | IsNumber | IsBoolean | IsSymbol
            | IsProcedure | Eye | Iota | Vsum | Vlen | Norm | Normalize | Transpose | Trace
            | Det | Logdet | Inv => Arity::Exactly(1),
            Zeros | Ones => Arity::Range(1, 2),
            Ref => Arity::Range(2, 3),
        }
    }
}

/// True when a constant tensor of `shape` (`eye`, `zeros`, `ones`, `iota`) may be made: at
/// most 2^28 numbers, and fewer than 2^28 columns (what a slot's description holds).
pub(crate) fn tensor_fits(shape: Shape) -> bool {
    shape.len() <= (1 << 28) && !matches!(shape, Shape::Matrix(_, c) if c >= 1 << 28)
}
