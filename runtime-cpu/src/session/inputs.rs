//! Where a run's inputs are among its bindings.

use super::Input;
use crate::bindings::Bindings;
use crate::code::Code;
use crate::error::{Error, Result};

/// The program's inputs in `bindings`, into `inputs` (overwritten in place: where the previous
/// run's binding of the same place is bound to the same name, that is the binding, one
/// comparison and no search); cleared when one is unbound.
pub(super) fn resolve(code: &Code, bindings: &Bindings, inputs: &mut Vec<Input>) -> Result<()> {
    let mut k = 0;
    for (g, info) in code.globals.iter().enumerate() {
        if !info.is_input {
            continue;
        }
        let name = code.symbol_names[info.name.0 as usize].as_str();
        let hint = inputs.get(k).map(|i| i.binding as usize);
        let found = match hint {
            Some(b) if bindings.name_at(b) == Some(name) => Some(b),
            _ => bindings.index_of(name),
        };
        let Some(binding) = found else {
            inputs.clear();
            return Err(Error::UnboundName {
                name: name.to_string(),
                span: info.span,
            });
        };
        let input = Input {
            global: g as u32,
            binding: binding as u32,
            grad: None,
        };
        match inputs.get_mut(k) {
            Some(slot) => *slot = input,
            None => inputs.push(input),
        }
        k += 1;
    }
    inputs.truncate(k);
    Ok(())
}
