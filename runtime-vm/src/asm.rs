//! The assembler: text to a [`Program`], one instruction per line, with the stack discipline
//! checked before anything runs (no instruction can find too few operands, a loop body leaves
//! the stack as deep as it found it, both branches leave it equally deep, the program leaves
//! exactly one value). The syntax is documented in `docs/vm.md`.

use crate::error::{Error, Pos, Result};
use crate::op::{Const, Op, Program};
use shared_ir::{BinaryOp, Shape, UnaryOp};

/// A block still open at the current line.
enum Open {
    Loop {
        pc: usize,
        pos: Pos,
        depth: usize,
        low: usize,
    },
    Branch {
        pc: usize,
        pos: Pos,
        depth: usize,
        low: usize,
        /// The `else` (index and the depth the then block left), once seen.
        other: Option<(usize, usize)>,
    },
}

impl Open {
    fn low_mut(&mut self) -> &mut usize {
        match self {
            Open::Loop { low, .. } | Open::Branch { low, .. } => low,
        }
    }
}

struct Asm<'t> {
    prog: Program,
    open: Vec<Open>,
    depth: usize,
    line: &'t str,
    line_no: u32,
}

/// One whitespace-separated word of a line (a `[...]` vector literal is one word).
struct Token<'t> {
    col: u32,
    text: &'t str,
}

/// Assembles a program.
pub fn assemble(text: &str) -> Result<Program> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut a = Asm {
        prog: Program {
            ops: Vec::new(),
            pos: Vec::new(),
            consts: Vec::new(),
            inputs: Vec::new(),
            input_pos: Vec::new(),
            max_depth: 0,
        },
        open: Vec::new(),
        depth: 0,
        line: "",
        line_no: 0,
    };
    let mut last = None;
    for (i, line) in text.lines().enumerate() {
        a.line = line;
        a.line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let tokens = tokens(line).map_err(|(col, m)| a.error(col, m))?;
        let Some((first, rest)) = tokens.split_first() else {
            continue;
        };
        a.instruction(first, rest)?;
        last = Some((a.line_no, line));
    }
    if let Some(block) = a.open.pop() {
        let (pos, what) = match block {
            Open::Loop { pos, .. } => (pos, "loop"),
            Open::Branch { pos, .. } => (pos, "branch"),
        };
        let line = text.lines().nth(pos.line as usize - 1).unwrap_or("");
        return Err(syntax(
            pos,
            format!("`{what}` is never closed (add `end`)"),
            line,
        ));
    }
    let Some((line_no, line)) = last else {
        return Err(syntax(
            Pos { line: 1, col: 1 },
            "the program has no instructions".into(),
            text.lines().next().unwrap_or(""),
        ));
    };
    if a.depth != 1 {
        let message = format!(
            "the program must leave exactly one value (its result) on the stack, but leaves {}",
            a.depth
        );
        return Err(syntax(
            Pos {
                line: line_no,
                col: 1,
            },
            message,
            line,
        ));
    }
    Ok(a.prog)
}

fn syntax(pos: Pos, message: String, line: &str) -> Error {
    Error::Syntax {
        pos,
        message,
        text: line.to_string(),
    }
}

/// The words of a line, comments (from `;` or `#`) removed; an error is (column, message).
fn tokens(line: &str) -> std::result::Result<Vec<Token<'_>>, (u32, String)> {
    let mut out = Vec::new();
    let mut chars = line.char_indices().peekable();
    let mut col = 0u32;
    while let Some(&(start, c)) = chars.peek() {
        if c == ';' || c == '#' {
            break;
        }
        if c.is_whitespace() {
            chars.next();
            col += 1;
            continue;
        }
        let first_col = col + 1;
        let mut end = start;
        let bracket = c == '[';
        let mut closed = false;
        while let Some(&(i, c)) = chars.peek() {
            if !bracket && (c.is_whitespace() || c == ';' || c == '#') {
                break;
            }
            chars.next();
            col += 1;
            end = i + c.len_utf8();
            if bracket && c == ']' {
                closed = true;
                break;
            }
        }
        if bracket && !closed {
            return Err((first_col, "`[` is never closed (add `]`)".into()));
        }
        out.push(Token {
            col: first_col,
            text: &line[start..end],
        });
    }
    Ok(out)
}

impl Asm<'_> {
    fn error(&self, col: u32, message: String) -> Error {
        syntax(
            Pos {
                line: self.line_no,
                col,
            },
            message,
            self.line,
        )
    }

    fn emit(&mut self, op: Op, col: u32) -> usize {
        self.prog.ops.push(op);
        self.prog.pos.push(Pos {
            line: self.line_no,
            col,
        });
        self.prog.ops.len() - 1
    }

    /// Takes `n` values off the stack, or explains why there are too few.
    fn pop(&mut self, n: usize, name: &str, col: u32) -> Result<()> {
        self.need(n, name, col)?;
        self.depth -= n;
        if let Some(b) = self.open.last_mut() {
            let low = b.low_mut();
            *low = (*low).min(self.depth);
        }
        Ok(())
    }

    /// Checks that `n` values are on the stack, or explains why there are too few.
    fn need(&self, n: usize, name: &str, col: u32) -> Result<()> {
        if self.depth < n {
            let have = match self.depth {
                0 => "the stack is empty here".to_string(),
                1 => "there is only 1 here".to_string(),
                d => format!("there are only {d} here"),
            };
            let what = if n == 1 { "a value" } else { "2 values" };
            return Err(self.error(
                col,
                format!("`{name}` needs {what} on the stack, but {have}"),
            ));
        }
        Ok(())
    }

    fn push(&mut self) {
        self.depth += 1;
        self.prog.max_depth = self.prog.max_depth.max(self.depth);
    }

    fn instruction(&mut self, first: &Token<'_>, rest: &[Token<'_>]) -> Result<()> {
        let name = first.text.to_ascii_lowercase();
        let col = first.col;
        let takes_operand = matches!(name.as_str(), "push" | "load" | "loop");
        if takes_operand {
            if rest.is_empty() {
                let what = match name.as_str() {
                    "push" => "a number or a vector such as [1 2 3]",
                    "load" => "an input name",
                    _ => "a trip count",
                };
                return Err(self.error(col, format!("`{name}` needs {what}")));
            }
            if let Some(extra) = rest.get(1) {
                return Err(self.error(
                    extra.col,
                    format!(
                        "`{name}` takes one operand; `{}` is one too many",
                        extra.text
                    ),
                ));
            }
        } else if let Some(extra) = rest.first() {
            if is_mnemonic(&name) {
                return Err(self.error(
                    extra.col,
                    format!(
                        "`{name}` takes no operand (found `{}`; write one instruction per line)",
                        extra.text
                    ),
                ));
            }
        }
        match name.as_str() {
            "push" => {
                let c = self.constant(&rest[0])?;
                let k = self.prog.consts.len() as u32;
                self.prog.consts.push(c);
                self.emit(Op::Push(k), col);
                self.push();
            }
            "load" => {
                let k = self.input(&rest[0])?;
                self.emit(Op::Load(k), col);
                self.push();
            }
            "add" | "sub" | "mul" | "div" => {
                let op = match name.as_str() {
                    "add" => BinaryOp::Add,
                    "sub" => BinaryOp::Sub,
                    "mul" => BinaryOp::Mul,
                    _ => BinaryOp::Div,
                };
                self.pop(2, &name, col)?;
                self.emit(Op::Binary(op), col);
                self.push();
            }
            "neg" | "exp" | "log" | "sin" | "cos" => {
                let op = match name.as_str() {
                    "neg" => UnaryOp::Neg,
                    "exp" => UnaryOp::Exp,
                    "log" => UnaryOp::Log,
                    "sin" => UnaryOp::Sin,
                    _ => UnaryOp::Cos,
                };
                self.pop(1, &name, col)?;
                self.emit(Op::Unary(op), col);
                self.push();
            }
            "dup" => {
                self.need(1, &name, col)?;
                self.emit(Op::Dup, col);
                self.push();
            }
            "dot" => {
                self.pop(2, &name, col)?;
                self.emit(Op::Dot, col);
                self.push();
            }
            "loop" => {
                let t = &rest[0];
                let count: u32 = t.text.parse().map_err(|_| {
                    self.error(
                        t.col,
                        format!(
                            "`{}` is not a trip count (a whole number from 0 to {})",
                            t.text,
                            u32::MAX
                        ),
                    )
                })?;
                let pc = self.emit(Op::Loop { count, end: 0 }, col);
                self.open.push(Open::Loop {
                    pc,
                    pos: self.pos(col),
                    depth: self.depth,
                    low: self.depth,
                });
            }
            "branch" => {
                self.pop(1, &name, col)?;
                let pc = self.emit(Op::Branch { other: 0, reach: 0 }, col);
                self.open.push(Open::Branch {
                    pc,
                    pos: self.pos(col),
                    depth: self.depth,
                    low: self.depth,
                    other: None,
                });
            }
            "else" => self.else_(col)?,
            "end" => self.end(col)?,
            _ => {
                return Err(self.error(
                    col,
                    format!(
                        "unknown instruction `{}` (the instructions: push, load, add, sub, mul, \
                         div, neg, exp, log, sin, cos, dup, dot, loop, branch, else, end)",
                        first.text
                    ),
                ))
            }
        }
        Ok(())
    }

    fn pos(&self, col: u32) -> Pos {
        Pos {
            line: self.line_no,
            col,
        }
    }

    fn else_(&mut self, col: u32) -> Result<()> {
        let pc = self.prog.ops.len();
        match self.open.last_mut() {
            Some(Open::Branch {
                other: other @ None,
                depth,
                ..
            }) => {
                *other = Some((pc, self.depth));
                self.depth = *depth;
            }
            Some(Open::Branch {
                other: Some(_),
                pos,
                ..
            }) => {
                let line = pos.line;
                return Err(self.error(
                    col,
                    format!("a second `else` for the `branch` on line {line}"),
                ));
            }
            _ => return Err(self.error(col, "`else` without an open `branch`".into())),
        }
        self.emit(Op::Else { end: 0 }, col);
        Ok(())
    }

    fn end(&mut self, col: u32) -> Result<()> {
        let Some(block) = self.open.pop() else {
            return Err(self.error(col, "`end` without an open `loop` or `branch`".into()));
        };
        let low = match block {
            Open::Loop {
                pc,
                pos,
                depth,
                low,
            } => {
                if self.depth != depth {
                    let d = self.depth as i64 - depth as i64;
                    return Err(self.error(
                        col,
                        format!(
                            "the body of the `loop` on line {} must leave the stack as deep as \
                             it found it, but changes its depth by {d:+}",
                            pos.line
                        ),
                    ));
                }
                let end = self.emit(Op::EndLoop { start: pc as u32 }, col) as u32;
                if let Op::Loop { end: e, .. } = &mut self.prog.ops[pc] {
                    *e = end;
                }
                low
            }
            Open::Branch {
                pc,
                pos,
                depth,
                low,
                other,
            } => {
                let (other, then_depth) = match other {
                    Some(o) => o,
                    None => {
                        // No `else`: an empty one, written where `end` is.
                        let o = (self.prog.ops.len(), self.depth);
                        self.emit(Op::Else { end: 0 }, col);
                        self.depth = depth;
                        o
                    }
                };
                if then_depth != self.depth {
                    let (t, e) = (
                        then_depth as i64 - depth as i64,
                        self.depth as i64 - depth as i64,
                    );
                    return Err(self.error(
                        col,
                        format!(
                            "the two blocks of the `branch` on line {} must leave the stack \
                             equally deep, but the first changes its depth by {t:+} and the \
                             second by {e:+}",
                            pos.line
                        ),
                    ));
                }
                let end = self.emit(Op::EndBranch, col) as u32;
                self.prog.ops[pc] = Op::Branch {
                    other: other as u32,
                    reach: (depth - low) as u32,
                };
                self.prog.ops[other] = Op::Else { end };
                low
            }
        };
        if let Some(parent) = self.open.last_mut() {
            let l = parent.low_mut();
            *l = (*l).min(low);
        }
        Ok(())
    }

    fn constant(&self, t: &Token<'_>) -> Result<Const> {
        if let Some(inner) = t.text.strip_prefix('[') {
            let inner = inner.strip_suffix(']').unwrap_or(inner);
            let mut data = Vec::new();
            for word in inner.split(|c: char| c.is_whitespace() || c == ',') {
                if word.is_empty() {
                    continue;
                }
                let x = number(word).ok_or_else(|| {
                    self.error(t.col, format!("`{word}` in `{}` is not a number", t.text))
                })?;
                data.push(x);
            }
            if data.is_empty() {
                return Err(self.error(t.col, "an empty vector `[]` holds no numbers".into()));
            }
            let n = u32::try_from(data.len())
                .map_err(|_| self.error(t.col, "the vector is too long".into()))?;
            return Ok(Const {
                shape: Shape::Vector(n),
                data,
            });
        }
        let x = number(t.text).ok_or_else(|| {
            self.error(
                t.col,
                format!(
                    "`{}` is not a number (nor a vector such as [1 2 3])",
                    t.text
                ),
            )
        })?;
        Ok(Const {
            shape: Shape::Scalar,
            data: vec![x],
        })
    }

    fn input(&mut self, t: &Token<'_>) -> Result<u32> {
        let ok = t
            .text
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && t.text.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !ok {
            return Err(self.error(
                t.col,
                format!(
                    "`{}` is not an input name (a letter or `_`, then letters, digits or `_`)",
                    t.text
                ),
            ));
        }
        if let Some(k) = self.prog.inputs.iter().position(|n| n == t.text) {
            return Ok(k as u32);
        }
        self.prog.inputs.push(t.text.to_string());
        self.prog.input_pos.push(self.pos(t.col));
        Ok((self.prog.inputs.len() - 1) as u32)
    }
}

fn is_mnemonic(name: &str) -> bool {
    matches!(
        name,
        "add"
            | "sub"
            | "mul"
            | "div"
            | "neg"
            | "exp"
            | "log"
            | "sin"
            | "cos"
            | "dup"
            | "dot"
            | "branch"
            | "else"
            | "end"
    )
}

/// A number as Rust reads an `f64` (`1`, `-2.5e-3`, `inf`, `nan`).
fn number(s: &str) -> Option<f64> {
    s.parse().ok()
}
