//! Closures: making one from a lambda and the current context, calling one in a nested walk,
//! and `letrec`, whose closures may capture bindings made after them.

use super::{Ctx, EResult, Machine, Stop};
use crate::code::NodeId;
use crate::error::Error;
use crate::heap::Closure;
use crate::value::Value;
use shared_ir::Real;

impl<R: Real> Machine<'_, R> {
    /// Calls closure `c` with arguments at `base..base+nargs` in a nested walk.
    pub(crate) fn call_nested(
        &mut self,
        clo: Closure,
        c: u32,
        base: usize,
        nargs: usize,
    ) -> EResult<Value> {
        let lam = &self.code.lambdas[clo.lambda as usize];
        let _ = nargs;
        self.s
            .stack
            .resize(base + lam.frame as usize, Value::Unassigned);
        let r = self.eval(lam.body, Ctx { fp: base, clo: c });
        self.s.stack.truncate(base);
        r
    }

    #[cold]
    pub(crate) fn arity_error(&self, clo: Closure, got: usize, node: NodeId) -> Stop {
        let lam = &self.code.lambdas[clo.lambda as usize];
        let name = lam
            .name
            .map(|s| self.code.symbol_names[s.0 as usize].clone())
            .unwrap_or_else(|| "lambda".to_string());
        self.fail(Error::ArityMismatch {
            name,
            expected: lam.params.to_string(),
            got,
            span: self.span(node),
        })
    }

    /// Creates a closure of lambda `id`, copying its captures from the current context.
    pub(crate) fn make_closure(&mut self, id: u32, ctx: Ctx) -> Value {
        let lam = &self.code.lambdas[id as usize];
        let start = self.s.heap.captured.len() as u32;
        for cap in &lam.captures {
            let v = match *cap {
                crate::code::CaptureFrom::Local(s) => self.s.stack[ctx.fp + s as usize],
                crate::code::CaptureFrom::Capture(i) => self.s.heap.capture(ctx.clo, i),
            };
            self.s.heap.captured.push(v);
        }
        self.s.heap.closures.push(Closure {
            lambda: id,
            start,
            len: lam.captures.len() as u32,
            home: ctx.fp as u32,
        });
        Value::Closure((self.s.heap.closures.len() - 1) as u32)
    }

    /// `letrec`: slots start unassigned and inits run in order. A closure made in this frame
    /// while the inits ran copied a still-unassigned binding; once every init has run, such
    /// captures of this `letrec`'s variables are completed.
    pub(crate) fn letrec(&mut self, slot: u32, inits: crate::code::List, ctx: Ctx) -> EResult<()> {
        let code = self.code;
        let first = ctx.fp + slot as usize;
        let ids = code.list(inits);
        let vars = slot..slot + ids.len() as u32;
        for i in 0..ids.len() {
            self.s.stack[first + i] = Value::Unassigned;
        }
        let made_from = self.s.heap.closures.len();
        for (i, &init) in ids.iter().enumerate() {
            let v = self.eval(init, ctx)?;
            self.s.stack[first + i] = v;
        }
        for c in made_from..self.s.heap.closures.len() {
            let clo = self.s.heap.closures[c];
            if clo.home != ctx.fp as u32 {
                continue;
            }
            let lam = &code.lambdas[clo.lambda as usize];
            for (k, cap) in lam.captures.iter().enumerate() {
                let at = clo.start as usize + k;
                if let crate::code::CaptureFrom::Local(s) = *cap {
                    if vars.contains(&s) && self.s.heap.captured[at] == Value::Unassigned {
                        self.s.heap.captured[at] = self.s.stack[ctx.fp + s as usize];
                    }
                }
            }
        }
        Ok(())
    }
}
