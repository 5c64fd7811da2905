//! The primitives the oracle knows, with their names and arities (reference section 5).

macro_rules! prims {
    ($($v:ident = $n:literal, $min:literal, $max:expr;)*) => {
        /// A primitive procedure.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Prim { $(#[doc = $n] $v,)* }

        impl Prim {
            /// The primitive named `name`.
            pub fn from_name(name: &str) -> Option<Prim> {
                match name { $($n => Some(Prim::$v),)* _ => None }
            }
            /// Its name.
            pub fn name(self) -> &'static str {
                match self { $(Prim::$v => $n,)* }
            }
            /// Least and most arguments (`usize::MAX`: variadic).
            pub fn arity(self) -> (usize, usize) {
                match self { $(Prim::$v => ($min, $max),)* }
            }
        }
    };
}

const MANY: usize = usize::MAX;

prims! {
    Add = "+", 0, MANY; Sub = "-", 1, MANY; Mul = "*", 0, MANY; Div = "/", 1, MANY;
    Min = "min", 1, MANY; Max = "max", 1, MANY; Pow = "pow", 2, 2; Expt = "expt", 2, 2;
    Modulo = "modulo", 2, 2; Remainder = "remainder", 2, 2;
    Sin = "sin", 1, 1; Cos = "cos", 1, 1; Exp = "exp", 1, 1; Log = "log", 1, 1;
    Sqrt = "sqrt", 1, 1; Abs = "abs", 1, 1;
    NumEq = "=", 2, MANY; Lt = "<", 2, MANY; Gt = ">", 2, MANY; Le = "<=", 2, MANY;
    Ge = ">=", 2, MANY; Not = "not", 1, 1; EqP = "eq?", 2, 2;
    Cons = "cons", 2, 2; Car = "car", 1, 1; Cdr = "cdr", 1, 1; List = "list", 0, MANY;
    NullP = "null?", 1, 1; PairP = "pair?", 1, 1; NumberP = "number?", 1, 1;
    BooleanP = "boolean?", 1, 1; SymbolP = "symbol?", 1, 1; ProcedureP = "procedure?", 1, 1;
    Vec = "vec", 0, MANY; Mat = "mat", 0, MANY; Eye = "eye", 1, 1; Zeros = "zeros", 1, 2;
    Ones = "ones", 1, 2; Iota = "iota", 1, 1; Ref = "ref", 2, 3; Dot = "dot", 2, 2; Vsum = "vsum", 1, 1;
    Vlen = "vlen", 1, 1; Norm = "norm", 1, 1; Normalize = "normalize", 1, 1;
    Cross = "cross", 2, 2; Matvec = "matvec", 2, 2; Matmul = "matmul", 2, 2;
    Transpose = "transpose", 1, 1; Trace = "trace", 1, 1; Outer = "outer", 2, 2;
    Scale = "scale", 2, 2; Det = "det", 1, 1; Logdet = "logdet", 1, 1; Inv = "inv", 1, 1;
    Solve = "solve", 2, 2; Brackets = "[...]", 0, MANY;
}
