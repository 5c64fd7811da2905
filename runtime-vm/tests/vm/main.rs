//! Tests of the bytecode VM on its own: the assembler's errors, execution (blocks, divergence,
//! shapes, limits) and a property test that no assembly text makes the VM panic or hang.

mod asm;
mod exec;
mod props;

use runtime_cpu::Bindings;
use runtime_vm::{Error, Grad, Options, Outcome, Program, Vm};

/// Assembles and runs `src` with gradients of every input.
pub fn run(src: &str, b: &Bindings) -> Result<Outcome, Error> {
    let prog = Program::parse(src)?;
    let opts = Options {
        grad: Grad::All,
        ..Default::default()
    };
    Vm::<f64>::new().run(&prog, b, &opts).cloned()
}

/// The assembler's error for `src`: (line, column, message).
pub fn syntax_error(src: &str) -> (u32, u32, String) {
    match Program::parse(src) {
        Err(Error::Syntax { pos, message, .. }) => (pos.line, pos.col, message),
        other => panic!("expected a syntax error for {src:?}, got {other:?}"),
    }
}
