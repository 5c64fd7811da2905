//! Tokenizer and parser. The parser keeps an explicit stack, so a file nested millions deep is
//! read without touching the Rust stack, and the data live in one flat arena (no recursive drop).

use super::intern::{Interner, Symbol};
use super::span::Span;
use crate::error::{Error, Result};

/// Index of a datum in [`Forms`].
pub type DatumId = u32;

/// What a datum is.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum DatumKind {
    /// A numeric literal (integers and floats are both numbers).
    Number(f64),
    /// `#t` or `#f`.
    Bool(bool),
    /// A name.
    Symbol(Symbol),
    /// `( ... )`: children `start..start+len` of [`Forms::children`].
    List {
        /// First child index in `children`.
        start: u32,
        /// Number of children.
        len: u32,
    },
    /// `[ ... ]`: a vector (or a matrix of bracketed rows).
    Bracket {
        /// First child index in `children`.
        start: u32,
        /// Number of children.
        len: u32,
    },
    /// `'x`.
    Quote(DatumId),
}

/// One datum and where it came from.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Datum {
    /// The datum.
    pub kind: DatumKind,
    /// Its source range.
    pub span: Span,
}

/// A read program: every datum in one arena, and the top-level forms in order.
#[derive(Debug, Default, Clone)]
pub struct Forms {
    /// All data.
    pub data: Vec<Datum>,
    /// Child lists of `List` and `Bracket` data.
    pub children: Vec<DatumId>,
    /// The top-level forms.
    pub top: Vec<DatumId>,
}

impl Forms {
    /// The datum with this id.
    #[inline]
    pub fn get(&self, id: DatumId) -> &Datum {
        &self.data[id as usize]
    }

    /// The children of a list or bracket datum (empty for atoms).
    pub fn items(&self, id: DatumId) -> &[DatumId] {
        match self.data[id as usize].kind {
            DatumKind::List { start, len } | DatumKind::Bracket { start, len } => {
                &self.children[start as usize..(start + len) as usize]
            }
            _ => &[],
        }
    }
}

enum Open {
    Paren,
    Bracket,
    Quote,
    /// `#;`: the next datum is dropped.
    Skip,
}

struct Frame {
    open: Open,
    start: usize,
    items: Vec<DatumId>,
}

/// Reads all top-level forms of `source`, interning names into `interner`.
pub fn read(source: &str, interner: &mut Interner) -> Result<Forms> {
    let bytes = source.as_bytes();
    let mut forms = Forms::default();
    // A byte-order mark at the start is not part of the program.
    let start = if source.starts_with('\u{feff}') { 3 } else { 0 };
    // `'x` reads as `(quote x)`; the decoder needs the name even when the text never spells it.
    interner.intern("quote");
    let mut stack: Vec<Frame> = Vec::new();
    let mut pos = start;
    loop {
        pos = skip_atmosphere(bytes, pos)?;
        if pos >= bytes.len() {
            break;
        }
        let c = bytes[pos];
        let produced: Option<Datum> = match c {
            b'(' | b'[' => {
                stack.push(Frame {
                    open: if c == b'(' {
                        Open::Paren
                    } else {
                        Open::Bracket
                    },
                    start: pos,
                    items: Vec::new(),
                });
                pos += 1;
                None
            }
            b')' | b']' => {
                let close = c as char;
                let span = Span::new(pos, pos + 1);
                let frame = match stack.pop() {
                    Some(f) => f,
                    None => return Err(Error::UnexpectedClose { close, span }),
                };
                let (is_paren, expected) = match frame.open {
                    Open::Paren => (true, ')'),
                    Open::Bracket => (false, ']'),
                    Open::Quote | Open::Skip => {
                        let what = if matches!(frame.open, Open::Quote) {
                            "'"
                        } else {
                            "#;"
                        };
                        return Err(Error::BadForm {
                            form: if what == "'" { "quote" } else { "#;" },
                            message: format!("`{what}` must be followed by a datum, not `{close}`"),
                            span: Span::new(frame.start, pos + 1),
                        });
                    }
                };
                if close != expected {
                    return Err(Error::MismatchedClose {
                        expected,
                        found: close,
                        span,
                    });
                }
                pos += 1;
                let start = forms.children.len() as u32;
                let len = frame.items.len() as u32;
                forms.children.extend_from_slice(&frame.items);
                let kind = if is_paren {
                    DatumKind::List { start, len }
                } else {
                    DatumKind::Bracket { start, len }
                };
                Some(Datum {
                    kind,
                    span: Span::new(frame.start, pos),
                })
            }
            b'\'' => {
                stack.push(Frame {
                    open: Open::Quote,
                    start: pos,
                    items: Vec::new(),
                });
                pos += 1;
                None
            }
            b'#' if bytes.get(pos + 1) == Some(&b';') => {
                stack.push(Frame {
                    open: Open::Skip,
                    start: pos,
                    items: Vec::new(),
                });
                pos += 2;
                None
            }
            _ => {
                let end = token_end(bytes, pos);
                let text = &source[pos..end];
                let span = Span::new(pos, end);
                pos = end;
                Some(Datum {
                    kind: atom(text, span, interner)?,
                    span,
                })
            }
        };
        let Some(mut datum) = produced else { continue };
        // Deliver the datum to the innermost open frame, closing any quotes it completes.
        loop {
            match stack.last_mut() {
                None => {
                    let id = push(&mut forms, datum);
                    forms.top.push(id);
                    break;
                }
                Some(frame) => match frame.open {
                    Open::Paren | Open::Bracket => {
                        let id = push(&mut forms, datum);
                        frame.items.push(id);
                        break;
                    }
                    Open::Quote => {
                        let start = frame.start;
                        stack.pop();
                        let inner = push(&mut forms, datum);
                        datum = Datum {
                            kind: DatumKind::Quote(inner),
                            span: Span::new(start, forms.data[inner as usize].span.end as usize),
                        };
                    }
                    Open::Skip => {
                        stack.pop();
                        break;
                    }
                },
            }
        }
    }
    if let Some(frame) = stack.pop() {
        return Err(match frame.open {
            Open::Paren => Error::Unclosed {
                open: '(',
                span: Span::new(frame.start, frame.start + 1),
            },
            Open::Bracket => Error::Unclosed {
                open: '[',
                span: Span::new(frame.start, frame.start + 1),
            },
            Open::Quote => Error::BadForm {
                form: "quote",
                message: "the file ends before the quoted datum".into(),
                span: Span::new(frame.start, frame.start + 1),
            },
            Open::Skip => Error::BadForm {
                form: "#;",
                message: "the file ends before the datum `#;` comments out".into(),
                span: Span::new(frame.start, frame.start + 2),
            },
        });
    }
    Ok(forms)
}

fn push(forms: &mut Forms, d: Datum) -> DatumId {
    forms.data.push(d);
    (forms.data.len() - 1) as DatumId
}

/// Skips whitespace and comments (`;` lines, nested `#| |#` blocks).
fn skip_atmosphere(bytes: &[u8], mut pos: usize) -> Result<usize> {
    loop {
        while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if pos < bytes.len() && bytes[pos] == b';' {
            while pos < bytes.len() && bytes[pos] != b'\n' {
                pos += 1;
            }
            continue;
        }
        if bytes.get(pos) == Some(&b'#') && bytes.get(pos + 1) == Some(&b'|') {
            let start = pos;
            let mut depth = 1usize;
            pos += 2;
            while depth > 0 {
                if pos + 1 >= bytes.len() {
                    return Err(Error::BadForm {
                        form: "#|",
                        message: "block comment is never closed with `|#`".into(),
                        span: Span::new(start, start + 2),
                    });
                }
                if bytes[pos] == b'|' && bytes[pos + 1] == b'#' {
                    depth -= 1;
                    pos += 2;
                } else if bytes[pos] == b'#' && bytes[pos + 1] == b'|' {
                    depth += 1;
                    pos += 2;
                } else {
                    pos += 1;
                }
            }
            continue;
        }
        return Ok(pos);
    }
}

fn is_delimiter(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'(' | b')' | b'[' | b']' | b';' | b'\'' | b'"')
}

fn token_end(bytes: &[u8], pos: usize) -> usize {
    if bytes[pos] == b'"' {
        return pos + 1;
    }
    let mut end = pos;
    while end < bytes.len() && !is_delimiter(bytes[end]) {
        end += 1;
    }
    // A non-ASCII character is one token character; make sure we end on a char boundary.
    end.max(pos + 1)
}

fn atom(text: &str, span: Span, interner: &mut Interner) -> Result<DatumKind> {
    let unknown = |hint| {
        Err(Error::UnknownToken {
            token: text.to_string(),
            hint,
            span,
        })
    };
    match text {
        "#t" | "#true" => return Ok(DatumKind::Bool(true)),
        "#f" | "#false" => return Ok(DatumKind::Bool(false)),
        "+inf.0" => return Ok(DatumKind::Number(f64::INFINITY)),
        "-inf.0" => return Ok(DatumKind::Number(f64::NEG_INFINITY)),
        "+nan.0" | "-nan.0" => return Ok(DatumKind::Number(f64::NAN)),
        "." | "..." => {
            return unknown("dotted pairs and rest parameters are not part of the language")
        }
        _ => {}
    }
    let first = text.as_bytes()[0];
    match first {
        b'"' => return unknown("the language has no strings"),
        b'#' => {
            return unknown("the only `#` tokens are #t, #f, #| |# comments and #; datum comments")
        }
        b'`' | b',' => {
            return unknown("quasiquote is not part of the language; use ' or (list ...)")
        }
        b'{' | b'}' | b'|' | b'\\' => return unknown("this character is not part of the language"),
        _ => {}
    }
    if looks_numeric(text) {
        return match text.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(DatumKind::Number(x)),
            Ok(_) => unknown(
                "the number is outside the range of 64-bit floats (write +inf.0 for infinity)",
            ),
            Err(_) => unknown("not a valid number"),
        };
    }
    if text
        .bytes()
        .any(|b| matches!(b, b'{' | b'}' | b'|' | b'\\' | b'`' | b',' | b'#'))
    {
        return unknown("names cannot contain { } | \\ ` , or #");
    }
    Ok(DatumKind::Symbol(interner.intern(text)))
}

/// True when `text` starts like a number: an optional sign then a digit or `.digit`.
/// Such a token must then parse as a number (so `1x` is an error, not a name).
fn looks_numeric(text: &str) -> bool {
    let b = text.as_bytes();
    let i = usize::from(matches!(b[0], b'+' | b'-'));
    match b.get(i) {
        Some(c) if c.is_ascii_digit() => true,
        Some(b'.') => b.get(i + 1).is_some_and(|c| c.is_ascii_digit()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_ok(src: &str) -> (Forms, Interner) {
        let mut i = Interner::default();
        let f = read(src, &mut i).unwrap();
        (f, i)
    }

    #[test]
    fn reads_lists_brackets_quotes_and_atoms() {
        let (f, i) =
            read_ok("; comment\n(+ 1 2.5e1) [a -3] 'x #t #| block #| nested |# |# #;(ignored) #f");
        assert_eq!(f.top.len(), 5);
        let items = f.items(f.top[0]);
        assert_eq!(f.get(items[1]).kind, DatumKind::Number(1.0));
        assert_eq!(f.get(items[2]).kind, DatumKind::Number(25.0));
        assert!(matches!(
            f.get(f.top[1]).kind,
            DatumKind::Bracket { len: 2, .. }
        ));
        assert!(matches!(f.get(f.top[2]).kind, DatumKind::Quote(_)));
        assert_eq!(f.get(f.top[3]).kind, DatumKind::Bool(true));
        assert_eq!(f.get(f.top[4]).kind, DatumKind::Bool(false));
        assert!(i.get("+").is_some());
        assert!(i.get("ignored").is_some());
    }

    #[test]
    fn signs_alone_are_symbols() {
        let (f, _) = read_ok("(- +)");
        for &d in f.items(f.top[0]) {
            assert!(matches!(f.get(d).kind, DatumKind::Symbol(_)));
        }
    }

    #[test]
    fn deep_nesting_is_read_without_recursion() {
        let depth = 1_000_000;
        let src = format!("{}x{}", "(".repeat(depth), ")".repeat(depth));
        let (f, _) = read_ok(&src);
        assert_eq!(f.top.len(), 1);
    }

    #[test]
    fn reports_unbalanced_and_unknown_tokens() {
        let mut i = Interner::default();
        assert!(matches!(
            read("(+ 1 2", &mut i),
            Err(Error::Unclosed { open: '(', .. })
        ));
        assert!(matches!(
            read("(+ 1 2))", &mut i),
            Err(Error::UnexpectedClose { .. })
        ));
        assert!(matches!(
            read("(+ 1 2]", &mut i),
            Err(Error::MismatchedClose { .. })
        ));
        assert!(matches!(
            read("(+ 1 \"s\")", &mut i),
            Err(Error::UnknownToken { .. })
        ));
        assert!(matches!(
            read("(+ 1x 2)", &mut i),
            Err(Error::UnknownToken { .. })
        ));
        assert!(matches!(
            read("#x", &mut i),
            Err(Error::UnknownToken { .. })
        ));
        assert!(matches!(read("'", &mut i), Err(Error::BadForm { .. })));
    }
}
