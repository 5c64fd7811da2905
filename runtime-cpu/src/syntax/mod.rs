//! The reader: source text to a flat arena of data with spans.
//!
//! | file | what |
//! | --- | --- |
//! | `span.rs` | byte ranges and line/column lookup |
//! | `intern.rs` | symbol interning |
//! | `reader.rs` | tokenizer and parser (iterative: any nesting depth is safe) |

mod intern;
mod reader;
mod span;

pub use intern::{Interner, Symbol};
pub use reader::{read, Datum, DatumId, DatumKind, Forms};
pub use span::Span;
