//! The oracle's own reader: text to [`Datum`] trees, and trees back to text.
//!
//! Written from the lexical syntax of `docs/language.md` (section 2) and nothing else: comments
//! (`;`, nested `#| |#`, `#;` datum comments), `( )` lists, `[ ]` constructor calls, `'`
//! quotes, booleans, decimal numbers and names.

use std::fmt::{self, Write as _};
use std::rc::Rc;

/// One datum of program text.
#[derive(Clone, Debug, PartialEq)]
pub enum Datum {
    /// A number.
    Num(f64),
    /// `#t` or `#f`.
    Bool(bool),
    /// A name.
    Sym(Rc<str>),
    /// `( ... )`.
    List(Vec<Datum>),
    /// `[ ... ]`: a call of the vector/matrix constructor.
    Brackets(Vec<Datum>),
}

impl Datum {
    /// A symbol datum.
    pub fn sym(name: &str) -> Datum {
        Datum::Sym(name.into())
    }

    /// The name, if this is a symbol.
    pub fn as_sym(&self) -> Option<&str> {
        match self {
            Datum::Sym(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Num(x) => f.write_str(&number_text(*x)),
            Datum::Bool(b) => f.write_str(if *b { "#t" } else { "#f" }),
            Datum::Sym(s) => f.write_str(s),
            Datum::List(items) => {
                if let [Datum::Sym(q), d] = items.as_slice() {
                    if &**q == "quote" {
                        return write!(f, "'{d}");
                    }
                }
                write_seq(f, '(', ')', items)
            }
            Datum::Brackets(items) => write_seq(f, '[', ']', items),
        }
    }
}

fn write_seq(f: &mut fmt::Formatter<'_>, open: char, close: char, items: &[Datum]) -> fmt::Result {
    f.write_char(open)?;
    for (i, d) in items.iter().enumerate() {
        if i > 0 {
            f.write_char(' ')?;
        }
        write!(f, "{d}")?;
    }
    f.write_char(close)
}

/// A number as program text that reads back to the same `f64` (infinities as `1e400` and
/// `-1e400`; NaN has no literal and is written as `0`).
pub fn number_text(x: f64) -> String {
    if x.is_nan() {
        "0".into()
    } else if x.is_infinite() {
        if x > 0.0 { "1e400" } else { "-1e400" }.into()
    } else {
        format!("{x}")
    }
}

/// A reading error with its byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// Byte offset in the text.
    pub at: usize,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "read error at byte {}: {}", self.at, self.message)
    }
}

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

fn is_delim(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'(' | b')' | b'[' | b']' | b';' | b'\'' | b'"')
}

impl Reader<'_> {
    fn err<T>(&self, message: impl Into<String>) -> Result<T, ReadError> {
        Err(ReadError {
            at: self.i,
            message: message.into(),
        })
    }

    /// Skips whitespace and comments (datum comments included).
    fn skip(&mut self) -> Result<(), ReadError> {
        loop {
            while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
            if self.i >= self.s.len() {
                return Ok(());
            }
            match (self.s[self.i], self.s.get(self.i + 1)) {
                (b';', _) => {
                    while self.i < self.s.len() && self.s[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                (b'#', Some(b'|')) => {
                    let start = self.i;
                    self.i += 2;
                    let mut depth = 1;
                    while depth > 0 {
                        if self.i + 1 >= self.s.len() {
                            self.i = start;
                            return self.err("block comment is never closed");
                        }
                        match (self.s[self.i], self.s[self.i + 1]) {
                            (b'|', b'#') => {
                                depth -= 1;
                                self.i += 2;
                            }
                            (b'#', b'|') => {
                                depth += 1;
                                self.i += 2;
                            }
                            _ => self.i += 1,
                        }
                    }
                }
                (b'#', Some(b';')) => {
                    self.i += 2;
                    self.skip()?;
                    if self.i >= self.s.len() || matches!(self.s[self.i], b')' | b']') {
                        return self.err("`#;` with no datum");
                    }
                    self.datum()?;
                }
                _ => return Ok(()),
            }
        }
    }

    fn datum(&mut self) -> Result<Datum, ReadError> {
        self.skip()?;
        let Some(&c) = self.s.get(self.i) else {
            return self.err("unexpected end of text");
        };
        match c {
            b'(' | b'[' => {
                let close = if c == b'(' { b')' } else { b']' };
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    self.skip()?;
                    match self.s.get(self.i) {
                        None => return self.err("unclosed bracket"),
                        Some(&d) if d == close => {
                            self.i += 1;
                            break;
                        }
                        Some(b')' | b']') => return self.err("mismatched bracket"),
                        Some(_) => items.push(self.datum()?),
                    }
                }
                Ok(if c == b'(' {
                    Datum::List(items)
                } else {
                    Datum::Brackets(items)
                })
            }
            b')' | b']' => self.err("closer without an opener"),
            b'\'' => {
                self.i += 1;
                self.skip()?;
                if self.i >= self.s.len() || matches!(self.s[self.i], b')' | b']') {
                    return self.err("quote with no datum");
                }
                let d = self.datum()?;
                Ok(Datum::List(vec![Datum::sym("quote"), d]))
            }
            b'"' => self.err("strings are not supported"),
            _ => {
                let start = self.i;
                while self.i < self.s.len() && !is_delim(self.s[self.i]) {
                    self.i += 1;
                }
                let tok = std::str::from_utf8(&self.s[start..self.i]).expect("ASCII delimiters");
                token(tok).ok_or_else(|| ReadError {
                    at: start,
                    message: format!("unknown token `{tok}`"),
                })
            }
        }
    }
}

/// Classifies one token: boolean, number or name; `None` when it is none of them.
fn token(tok: &str) -> Option<Datum> {
    match tok {
        "#t" | "#true" => return Some(Datum::Bool(true)),
        "#f" | "#false" => return Some(Datum::Bool(false)),
        _ => {}
    }
    if tok.starts_with('#') {
        return None;
    }
    let b = tok.as_bytes();
    let body = if matches!(b[0], b'+' | b'-') {
        &b[1..]
    } else {
        b
    };
    let numeric = match body {
        [d, ..] if d.is_ascii_digit() => true,
        [b'.', d, ..] if d.is_ascii_digit() => true,
        _ => false,
    };
    if numeric {
        return tok.parse::<f64>().ok().map(Datum::Num);
    }
    if tok
        .chars()
        .any(|c| matches!(c, '{' | '}' | '|' | '\\' | ',' | '`'))
    {
        return None;
    }
    Some(Datum::Sym(tok.into()))
}

/// Reads every top-level datum of `text`.
pub fn read_all(text: &str) -> Result<Vec<Datum>, ReadError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut r = Reader {
        s: text.as_bytes(),
        i: 0,
    };
    let mut out = Vec::new();
    loop {
        r.skip()?;
        if r.i >= r.s.len() {
            return Ok(out);
        }
        out.push(r.datum()?);
    }
}

/// The top-level data of a program as text, one form per line.
pub fn program_text(forms: &[Datum]) -> String {
    let mut s = String::new();
    for f in forms {
        let _ = writeln!(s, "{f}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_prints_round_trip() {
        let src =
            "(define (f x) (* x 2.5)) ; c\n#| a #| b |# |# [1 -2 .5] '(a #t) #;(skip me) (f 1e-3)";
        let forms = read_all(src).unwrap();
        assert_eq!(forms.len(), 4);
        let text = program_text(&forms);
        assert_eq!(read_all(&text).unwrap(), forms);
        assert_eq!(
            forms[1],
            Datum::Brackets(vec![Datum::Num(1.0), Datum::Num(-2.0), Datum::Num(0.5)])
        );
    }

    #[test]
    fn rejects_what_the_language_rejects() {
        for bad in ["(1x)", "(a", "(a]", ")", "\"s\"", "#T", "'", "#| open"] {
            assert!(read_all(bad).is_err(), "{bad}");
        }
        assert_eq!(read_all("...").unwrap(), vec![Datum::sym("...")]);
    }
}
