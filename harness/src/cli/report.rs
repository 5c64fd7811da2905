//! Errors of a program, shown against its source: `error: MESSAGE`, ` --> FILE:LINE:COL`, the
//! offending line and carets under the span.

use codespan_reporting::term::termcolor::{
    Buffer, BufferWriter, Color, ColorChoice, ColorSpec, WriteColor,
};
use runtime_cpu::{Error, Span};
use std::cell::OnceCell;
use std::io::{IsTerminal, Write};
use std::ops::Range;

/// A program's source text with its file name, and an index of its lines built on first use.
pub struct Source<'a> {
    name: String,
    text: &'a str,
    line_starts: OnceCell<Vec<usize>>,
}

impl<'a> Source<'a> {
    /// The source `text` of the file called `name`.
    pub fn new(name: String, text: &'a str) -> Source<'a> {
        Source {
            name,
            text,
            line_starts: OnceCell::new(),
        }
    }

    /// The file name as shown in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The 1-based line and column of `span`'s start, as [`Span::line_col`] gives them, in
    /// logarithmic time once the line index is built.
    pub fn line_col(&self, span: Span) -> (usize, usize) {
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        let start = floor_boundary(self.text, span.start as usize);
        let line = starts.partition_point(|&s| s <= start);
        let line_start = starts[line - 1];
        (line, self.text[line_start..start].chars().count() + 1)
    }

    /// The span's byte range if it points into the source, widened to at least one character
    /// (a zero-width span at the very start is no location: the runtime uses it for "nowhere").
    fn range(&self, error: &Error) -> Option<Range<usize>> {
        let span = error.span()?;
        if span == Span::default() {
            return None;
        }
        let start = floor_boundary(self.text, span.start as usize);
        let mut end = floor_boundary(self.text, (span.end as usize).max(start));
        if end == start {
            end = self.text[start..]
                .chars()
                .next()
                .map_or(start, |c| start + c.len_utf8());
        }
        Some(start..end)
    }

    /// Where `error` points, as `(line, column)`, if it points anywhere.
    pub fn location(&self, error: &Error) -> Option<(usize, usize)> {
        self.range(error)
            .map(|r| self.line_col(Span::new(r.start, r.end)))
    }

    /// Prints `error` to stderr against this source, coloured when stderr is a terminal, with
    /// `notes` after it. Long lines are cropped around the span.
    pub fn emit(&self, error: &Error, notes: &[String]) {
        let choice = if std::io::stderr().is_terminal() {
            ColorChoice::Auto
        } else {
            ColorChoice::Never
        };
        let writer = BufferWriter::stderr(choice);
        let mut buf = writer.buffer();
        // Writing into a memory buffer cannot fail.
        let _ = self.render(&mut buf, error, notes);
        let _ = writer.print(&buf);
    }

    fn render(&self, w: &mut Buffer, error: &Error, notes: &[String]) -> std::io::Result<()> {
        let red = ColorSpec::new()
            .set_fg(Some(Color::Red))
            .set_bold(true)
            .clone();
        let blue = ColorSpec::new()
            .set_fg(Some(Color::Blue))
            .set_bold(true)
            .clone();
        w.set_color(&red)?;
        write!(w, "error")?;
        w.set_color(ColorSpec::new().set_bold(true))?;
        writeln!(w, ": {error}")?;
        w.reset()?;
        let Some(range) = self.range(error) else {
            w.set_color(&blue)?;
            write!(w, " --> ")?;
            w.reset()?;
            writeln!(w, "{}", self.name)?;
            return self.render_notes(w, 1, notes);
        };
        let (line, col) = self.line_col(Span::new(range.start, range.end));
        let snippet = Snippet::new(self.text, range);
        let gutter = line.to_string().len();
        let pad = " ".repeat(gutter);
        w.set_color(&blue)?;
        write!(w, "{pad}--> ")?;
        w.reset()?;
        writeln!(w, "{}:{line}:{col}", self.name)?;
        w.set_color(&blue)?;
        writeln!(w, "{pad} |")?;
        write!(w, "{line} | ")?;
        w.reset()?;
        writeln!(w, "{}", snippet.text)?;
        w.set_color(&blue)?;
        write!(w, "{pad} | ")?;
        w.reset()?;
        write!(w, "{}", snippet.indent)?;
        w.set_color(&red)?;
        writeln!(w, "{}", "^".repeat(snippet.carets))?;
        w.reset()?;
        self.render_notes(w, gutter, notes)
    }

    fn render_notes(&self, w: &mut Buffer, gutter: usize, notes: &[String]) -> std::io::Result<()> {
        for note in notes {
            write!(w, "{} = ", " ".repeat(gutter))?;
            w.set_color(ColorSpec::new().set_bold(true))?;
            write!(w, "note")?;
            w.reset()?;
            writeln!(w, ": {note}")?;
        }
        Ok(())
    }
}

/// Characters of a line shown at most; longer lines are cropped around the span.
const SHOWN: usize = 120;
/// Characters shown before the span's start when a line is cropped.
const BEFORE: usize = 40;

/// The line holding a span's start, cropped to [`SHOWN`] characters, and where its carets go.
struct Snippet {
    text: String,
    indent: String,
    carets: usize,
}

impl Snippet {
    fn new(text: &str, range: Range<usize>) -> Snippet {
        let line_start = text[..range.start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[range.start..]
            .find('\n')
            .map_or(text.len(), |i| range.start + i);
        let line = text[line_start..line_end].trim_end_matches('\r');
        let col = text[line_start..range.start].chars().count();
        let first = col.saturating_sub(BEFORE);
        let mut shown = String::new();
        let mut indent = String::new();
        let mut carets = 0;
        if first > 0 {
            shown.push_str("...");
            indent.push_str("   ");
        }
        let span_end = range.end.min(line_start + line.len());
        let mut cropped = false;
        for (k, (i, c)) in line.char_indices().enumerate().skip(first) {
            if k >= first + SHOWN {
                cropped = true;
                break;
            }
            let c = if c.is_control() && c != '\t' { ' ' } else { c };
            shown.push(c);
            let at = line_start + i;
            if at < range.start {
                indent.push(if c == '\t' { '\t' } else { ' ' });
            } else if at < span_end {
                carets += 1;
            }
        }
        if cropped {
            shown.push_str("...");
        }
        Snippet {
            text: shown,
            indent,
            carets: carets.max(1),
        }
    }
}

fn floor_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_agrees_with_the_runtime() {
        let text = "(+ 1\n  (é x)\n\n   y)\nlast";
        let src = Source::new("t.scm".into(), text);
        for (i, _) in text.char_indices().chain([(text.len(), ' ')]) {
            let span = Span::new(i, i + 1);
            assert_eq!(src.line_col(span), span.line_col(text), "at byte {i}");
        }
    }
}
