//! The decoded form of a program: a flat tree of nodes over resolved primitives, lexical
//! addresses and constant slots. The evaluator dispatches on [`Node`] and never sees a name.

use crate::builtin::Builtin;
use crate::syntax::{Span, Symbol};
use crate::value::Value;
use shared_ir::{BinaryOp, CompareOp, LinalgOp, Shape, UnaryOp};

/// Index of a node in [`Code::nodes`].
pub type NodeId = u32;

/// The absent operand of a node (the column of a two-argument `ref`).
pub const NO_NODE: NodeId = NodeId::MAX;

/// A run of node ids in [`Code::lists`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct List {
    /// First index.
    pub start: u32,
    /// Count.
    pub len: u32,
}

/// One decoded form.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Node {
    /// A constant: a literal number (a constant slot), boolean, quoted datum or primitive.
    Const(Value),
    /// A variable of the current frame.
    Local(u32),
    /// A variable captured by the current closure.
    Capture(u32),
    /// A top-level definition or a program input.
    Global(u32),
    /// `(if test then else)`; `cond`, `when`, `unless`, `and`, `or` decode to this.
    If {
        /// The test.
        test: NodeId,
        /// Taken where the test is not `#f`.
        then: NodeId,
        /// Taken where the test is `#f`.
        other: NodeId,
    },
    /// `(begin e...)`: all but the last for effect.
    Seq(List),
    /// Binds one local: evaluates `init` into frame slot `slot`, then `body`.
    Bind {
        /// Frame slot.
        slot: u32,
        /// The value.
        init: NodeId,
        /// The scope.
        body: NodeId,
    },
    /// Parallel `let`: evaluates every init, then stores them in slots `slot..`.
    Let {
        /// First frame slot.
        slot: u32,
        /// The values.
        inits: List,
        /// The scope.
        body: NodeId,
    },
    /// `letrec` and internal `define`s: inits run in order into slots `slot..`, then closures
    /// created by the inits are re-filled so they see every binding.
    Letrec {
        /// First frame slot.
        slot: u32,
        /// The values.
        inits: List,
        /// The scope.
        body: NodeId,
    },
    /// `(lambda ...)`: creates a closure of lambda `id`.
    Lambda(u32),
    /// A call of a computed procedure.
    Call {
        /// The procedure.
        f: NodeId,
        /// The arguments.
        args: List,
    },
    /// An elementwise unary primitive.
    Unary(UnaryOp, NodeId),
    /// An elementwise binary primitive.
    Binary(BinaryOp, NodeId, NodeId),
    /// A two-argument comparison.
    Compare(CompareOp, NodeId, NodeId),
    /// A vector or matrix op called with its operands (`b` is `a` for the ops of one).
    Linalg(LinalgOp, NodeId, NodeId),
    /// `(eye n)`, `(zeros ...)`, `(ones ...)` or `(iota n)` whose sizes are literal: the
    /// tensor of this shape, made fresh at each evaluation without evaluating the sizes.
    Tensor(Builtin, Shape),
    /// `(scale s X)`: a number times a tensor.
    Scale(NodeId, NodeId),
    /// `(ref x i)`, or `(ref M i j)` when the last is not [`NO_NODE`].
    Ref(NodeId, NodeId, NodeId),
    /// Any other primitive call, with its arguments.
    Prim(Builtin, List),
    /// `(loop ((v init)...) body)`: loop variables live in slots `slot..`.
    Loop {
        /// First frame slot of the loop variables.
        slot: u32,
        /// Initial values.
        inits: List,
        /// The body.
        body: NodeId,
    },
    /// `(recur e...)` in tail position of the innermost loop, whose variables start at `slot`.
    Recur {
        /// First frame slot of the loop variables.
        slot: u32,
        /// New values.
        args: List,
    },
    /// Top-level `(define name e)`: stores into a global, evaluates to the name as a symbol.
    Define {
        /// Global index.
        global: u32,
        /// The value.
        init: NodeId,
    },
}

/// How a lambda captures one variable from the context that creates it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CaptureFrom {
    /// A slot of the creating frame.
    Local(u32),
    /// A capture of the creating closure.
    Capture(u32),
}

/// A decoded lambda.
#[derive(Clone, Debug, PartialEq)]
pub struct LambdaInfo {
    /// Its name, when it is bound by `define` or `letrec`/`let`.
    pub name: Option<Symbol>,
    /// Number of parameters.
    pub params: u32,
    /// Frame size: parameters and every local of the body.
    pub frame: u32,
    /// The body.
    pub body: NodeId,
    /// What to copy into the closure when it is created.
    pub captures: Vec<CaptureFrom>,
    /// The lambda form.
    pub span: Span,
}

/// A global: a top-level definition or a program input.
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalInfo {
    /// The name.
    pub name: Symbol,
    /// True for a free variable that the caller must bind.
    pub is_input: bool,
    /// Its first use (inputs) or its definition.
    pub span: Span,
}

/// The decoded program.
#[derive(Clone, Debug, Default)]
pub struct Code {
    /// All nodes.
    pub nodes: Vec<Node>,
    /// Source span of each node.
    pub spans: Vec<Span>,
    /// Node lists.
    pub lists: Vec<NodeId>,
    /// Lambdas.
    pub lambdas: Vec<LambdaInfo>,
    /// Globals.
    pub globals: Vec<GlobalInfo>,
    /// Constant numbers; `Node::Const(Value::Num(Slot(i)))` refers to `consts[i]`.
    pub consts: Vec<f64>,
    /// The top-level forms in order; the program's value is the last one's.
    pub top: NodeId,
    /// Frame size of the top level.
    pub top_frame: u32,
    /// Names of the symbols in quoted data, indexed by symbol.
    pub symbol_names: Vec<String>,
    /// The variable each `Local`, `Capture` and `Global` node reads, in node order.
    pub var_names: Vec<(NodeId, Symbol)>,
    /// `sqrt`, `log` and `normalize` clamp like the artifact runtime.
    pub protected_ops: bool,
}

impl Code {
    /// The node ids of a list.
    #[inline(always)]
    pub fn list(&self, l: List) -> &[NodeId] {
        &self.lists[l.start as usize..(l.start + l.len) as usize]
    }

    /// The node with this id.
    #[inline(always)]
    pub fn node(&self, id: NodeId) -> Node {
        self.nodes[id as usize]
    }

    /// The name a variable node reads.
    pub fn var_name(&self, id: NodeId) -> Option<&str> {
        let i = self.var_names.binary_search_by_key(&id, |&(n, _)| n).ok()?;
        Some(&self.symbol_names[self.var_names[i].1 .0 as usize])
    }

    /// The span of the node with this id.
    #[inline]
    pub fn span(&self, id: NodeId) -> Span {
        self.spans[id as usize]
    }
}
