//! The outside proposer: a process that speaks JSON lines (docs/search.md). A writer thread
//! feeds its input and a reader thread drains its output, so neither side can block the other
//! on a full pipe. A line that is no candidate is answered with its error; a proposer that
//! exits, closes its output or stays silent too long is given up and reported, and the search
//! goes on without it.

use super::candidate::{Candidate, Origin};
use super::engine::Engine;
use super::feed::{Answer, Feed, Incoming};
use super::front::Member;
use super::report;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Messages to the proposer that wait for it to read them, at least.
const OUTBOX: usize = 4096;

enum Event {
    Line(String),
    /// A line longer than the cap, dropped as it was read: its length in bytes.
    TooLong(u64),
    Closed,
}

/// How much of the proposer's output is held at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamLimits {
    /// The longest line read, in bytes; a longer one is dropped as it is read and answered
    /// with an error.
    pub max_line: usize,
    /// Lines read ahead of the search at most; past them the proposer's writes block (the
    /// pipe fills), so a fast proposer waits for the search instead of filling memory.
    pub queue: usize,
}

impl Default for StreamLimits {
    fn default() -> Self {
        StreamLimits {
            max_line: 1 << 20,
            queue: 1024,
        }
    }
}

/// How the proposer fared.
#[derive(Clone, Debug, PartialEq)]
pub struct ProposerStatus {
    /// Lines it sent that were read.
    pub lines: u64,
    /// Of those, lines that were no candidate (not JSON, no `src`, not a program, too long).
    pub bad: u64,
    /// Of the bad lines, those longer than the cap.
    pub too_long: u64,
    /// Answers sent (to candidates and to bad lines).
    pub answered: u64,
    /// Lines read but neither answered nor taken in when the search ended.
    pub unanswered: u64,
    /// Why it stopped being heard.
    pub ended: String,
}

impl ProposerStatus {
    /// As JSON.
    pub fn json(&self) -> Value {
        json!({
            "lines": self.lines,
            "bad_lines": self.bad,
            "too_long": self.too_long,
            "answered": self.answered,
            "unanswered": self.unanswered,
            "ended": self.ended,
        })
    }

    /// For people.
    pub fn describe(&self) -> String {
        let long = if self.too_long > 0 {
            format!(" ({} too long)", self.too_long)
        } else {
            String::new()
        };
        format!(
            "{} lines, {} of them bad{long}; {} answered, {} left unanswered; {}",
            self.lines, self.bad, self.answered, self.unanswered, self.ended
        )
    }
}

/// A line of the proposer's output as the stream reads it.
pub enum Raw {
    /// A line (without its end).
    Line(String),
    /// A line longer than the cap, dropped as it was read: its length in bytes.
    TooLong(u64),
}

/// A running outside process that speaks JSON lines: its input and output on threads of their
/// own, bounded both ways, with its silence timed and its lines counted. What its lines mean is
/// its user's ([`Outside`] for the search's candidates, the ODE search's systems).
pub struct Stream {
    child: Child,
    to: Option<SyncSender<String>>,
    from: Receiver<Event>,
    timeout: Duration,
    last_heard: Instant,
    limits: StreamLimits,
    lines: u64,
    bad: u64,
    too_long: u64,
    answered: u64,
    unanswered: u64,
    /// Only this proposer proposes (`--proposer-only`): the search ends when it does.
    only: bool,
    ended: Option<String>,
    interrupt: Arc<AtomicBool>,
}

/// A running outside proposer of the search's candidates.
pub struct Outside {
    stream: Stream,
    inputs: Vec<String>,
}

/// Splits a command line into words: whitespace separates, single and double quotes group,
/// a backslash escapes the next character.
pub fn words(cmd: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.get_or_insert_with(String::new);
            }
            (q, '\\') if q != Some('\'') => {
                let next = chars.next().ok_or("a command ending in a backslash")?;
                cur.get_or_insert_with(String::new).push(next);
            }
            (None, c) if c.is_whitespace() => {
                if let Some(w) = cur.take() {
                    out.push(w);
                }
            }
            (_, c) => cur.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("--proposer {cmd}: an unclosed quote"));
    }
    out.extend(cur);
    if out.is_empty() {
        return Err("--proposer: an empty command".into());
    }
    Ok(out)
}

impl Stream {
    /// Starts `cmd` and sends it `task`, its first line; waiting for it ends early once
    /// `interrupt` is set.
    pub fn start(
        cmd: &str,
        task: &Value,
        timeout: Duration,
        limits: StreamLimits,
        interrupt: Arc<AtomicBool>,
    ) -> Result<Stream, String> {
        let argv = words(cmd)?;
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("--proposer: cannot start `{}`: {e}", argv[0]))?;
        let mut stdin = child.stdin.take().ok_or("--proposer: no standard input")?;
        let stdout = child
            .stdout
            .take()
            .ok_or("--proposer: no standard output")?;
        // Messages wait for the proposer to read them up to a bound: one that stops reading
        // its input is given up rather than buffered for without end.
        let (to, lines) = mpsc::sync_channel::<String>(OUTBOX.max(limits.queue));
        std::thread::spawn(move || {
            for line in lines {
                if stdin
                    .write_all(line.as_bytes())
                    .and_then(|()| stdin.write_all(b"\n"))
                    .and_then(|()| stdin.flush())
                    .is_err()
                {
                    break;
                }
            }
        });
        // A bounded channel: once `queue` lines wait, the reader blocks, the pipe fills and
        // the proposer's writes wait in turn.
        let (tx, from) = mpsc::sync_channel(limits.queue.max(1));
        let max_line = limits.max_line.max(1);
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(event) = read_line(&mut r, max_line) {
                if tx.send(event).is_err() {
                    return;
                }
            }
            let _ = tx.send(Event::Closed);
        });
        let _ = to.send(task.to_string());
        Ok(Stream {
            child,
            to: Some(to),
            from,
            timeout,
            last_heard: Instant::now(),
            limits,
            lines: 0,
            bad: 0,
            too_long: 0,
            answered: 0,
            unanswered: 0,
            only: false,
            ended: None,
            interrupt,
        })
    }

    /// Marks this proposer as the only one (`--proposer-only`), for what it is told.
    pub fn only(mut self, only: bool) -> Stream {
        self.only = only;
        self
    }

    fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed)
    }

    /// Sends `v` as a line; a proposer that stopped reading its input is given up.
    pub fn send(&mut self, v: Value) {
        if let Some(to) = &self.to {
            if let Err(mpsc::TrySendError::Full(_)) = to.try_send(v.to_string()) {
                self.end(format!(
                    "stopped reading its input ({} messages waiting for it)",
                    OUTBOX.max(self.limits.queue)
                ));
            }
        }
    }

    /// Gives the proposer up: stops it and records why.
    fn end(&mut self, why: String) {
        self.end_as(why, false);
    }

    /// [`Stream::end`]; `at_end` when the search itself is over (nothing to warn of).
    fn end_as(&mut self, why: String, at_end: bool) {
        if self.ended.is_some() {
            return;
        }
        self.to = None;
        // A proposer that closed its output is usually exiting: give it a moment to say how.
        let mut status = self.child.try_wait();
        if why.starts_with("closed") {
            let until = Instant::now() + Duration::from_secs(2);
            while matches!(status, Ok(None)) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
                status = self.child.try_wait();
            }
        }
        let why = match status {
            Ok(Some(status)) if why.starts_with("closed") => format!("exited ({status})"),
            _ => why,
        };
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !at_end {
            if self.only {
                log::warn!("outside proposer: {why}; the search ends with it (--proposer-only)");
            } else {
                log::warn!("outside proposer: {why}; the search goes on without it");
            }
        }
        self.ended = Some(why);
    }

    /// Stops the proposer at the end of the search and says how it fared.
    pub fn finish(&mut self) -> ProposerStatus {
        self.end_as("stopped at the end of the search".into(), true);
        // What was read but never taken in is counted, not lost without a word.
        while let Ok(e) = self.from.try_recv() {
            if matches!(e, Event::Line(ref l) if !l.trim().is_empty())
                || matches!(e, Event::TooLong(_))
            {
                self.lines += 1;
                self.unanswered += 1;
            }
        }
        ProposerStatus {
            lines: self.lines,
            bad: self.bad,
            too_long: self.too_long,
            answered: self.answered,
            unanswered: self.unanswered,
            ended: self.ended.clone().unwrap_or_default(),
        }
    }

    fn event(&mut self, e: Event, out: &mut Vec<Raw>) -> bool {
        match e {
            Event::Line(l) => {
                self.last_heard = Instant::now();
                if !l.trim().is_empty() {
                    self.lines += 1;
                    out.push(Raw::Line(l));
                }
            }
            Event::TooLong(bytes) => {
                self.last_heard = Instant::now();
                self.lines += 1;
                self.bad += 1;
                self.too_long += 1;
                out.push(Raw::TooLong(bytes));
            }
            Event::Closed => return false,
        }
        true
    }

    /// Counts a line its user found to be no candidate.
    pub fn bad_line(&mut self) {
        self.bad += 1;
    }

    /// The error that answers a line longer than the cap.
    pub fn too_long_error(&self, bytes: u64) -> String {
        format!(
            "a line of {bytes} bytes, longer than the {} the search reads (--proposer-max-line)",
            self.limits.max_line
        )
    }

    /// Sends an answer to a line.
    pub fn answer(&mut self, v: Value) {
        self.answered += 1;
        self.send(v);
    }

    /// Restarts the silence clock: the time the search spent on its own work is not the
    /// proposer's.
    pub fn heard(&mut self) {
        self.last_heard = Instant::now();
    }

    /// False once the proposer has exited, closed its output or gone silent.
    pub fn alive(&self) -> bool {
        self.ended.is_none()
    }

    /// The lines that came since the last call; with `wait`, blocks until at least one comes,
    /// the proposer is found gone or silent, or that instant. At most a queue's worth a call.
    pub fn take(&mut self, wait: Option<Instant>) -> Vec<Raw> {
        let mut out = Vec::new();
        if self.ended.is_some() {
            return out;
        }
        // At most a queue's worth a batch: a proposer faster than the search waits.
        let most = self.limits.queue.max(1);
        while out.len() < most {
            match self.from.try_recv() {
                Ok(e) => {
                    if !self.event(e, &mut out) {
                        self.end("closed its output".into());
                        return out;
                    }
                }
                Err(TryRecvError::Disconnected) => {
                    self.end("closed its output".into());
                    return out;
                }
                Err(TryRecvError::Empty) => break,
            }
        }
        if !out.is_empty() {
            return out;
        }
        if let Some(until) = wait {
            let silent_at = self.last_heard.checked_add(self.timeout).unwrap_or(until);
            let limit = silent_at.min(until);
            // In slices, so that Ctrl-C is seen while waiting.
            while out.is_empty() && Instant::now() < limit && !self.interrupted() {
                let slice = limit
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(100));
                match self.from.recv_timeout(slice) {
                    Ok(e) => {
                        let mut open = self.event(e, &mut out);
                        // Whatever else came with it joins the batch.
                        while open && out.len() < most {
                            match self.from.try_recv() {
                                Ok(e) => open = self.event(e, &mut out),
                                Err(_) => break,
                            }
                        }
                        if !open {
                            self.end("closed its output".into());
                            break;
                        }
                    }
                    Err(RecvTimeoutError::Disconnected) => {
                        self.end("closed its output".into());
                        break;
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                }
            }
        }
        if out.is_empty() && self.ended.is_none() && self.last_heard.elapsed() >= self.timeout {
            self.end(format!(
                "sent nothing for {:.1} s (--proposer-timeout)",
                self.timeout.as_secs_f64()
            ));
        }
        out
    }
}

/// The next line of `r` (without its end), or [`Event::TooLong`] for a line of more than
/// `max` bytes, read and dropped in pieces so that it never fills memory; `None` at the end.
fn read_line(r: &mut impl BufRead, max: usize) -> Option<Event> {
    let mut line = Vec::new();
    let mut dropped: u64 = 0;
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        if buf.is_empty() {
            // The end: a last line without its newline still counts.
            return match (dropped, line.is_empty()) {
                (0, true) => None,
                (0, false) => Some(Event::Line(text_of(&line))),
                _ => Some(Event::TooLong(dropped)),
            };
        }
        let (piece, ends) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if dropped == 0 && line.len() + piece.len() <= max {
            line.extend_from_slice(piece);
        } else {
            dropped += (line.len() + piece.len()) as u64;
            line = Vec::new();
        }
        let used = ends.unwrap_or(buf.len());
        r.consume(used);
        if ends.is_some() {
            return Some(if dropped > 0 {
                Event::TooLong(dropped)
            } else {
                Event::Line(text_of(&line))
            });
        }
    }
}

/// A line's text: not UTF-8 is answered as a bad line, not fatal.
fn text_of(line: &[u8]) -> String {
    String::from_utf8_lossy(line)
        .trim_end_matches('\r')
        .to_string()
}

/// A proposer's (or a seed file's) line as a candidate from `origin`, or why it is not one.
pub fn parse_line(line: &str, inputs: &[String], origin: Origin) -> Incoming {
    let v: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return Incoming::Bad {
                id: None,
                src: None,
                error: format!("not a JSON line: {e}"),
            }
        }
    };
    let id = v.get("id").cloned();
    let Some(src) = v.get("src").and_then(Value::as_str) else {
        return Incoming::Bad {
            id,
            src: None,
            error:
                "no `src` (a candidate is {\"src\": \"<program>\", \"init\": {...}, \"id\": ...})"
                    .into(),
        };
    };
    let mut init = HashMap::new();
    if let Some(m) = v.get("init") {
        let Some(m) = m.as_object() else {
            return Incoming::Bad {
                id,
                src: Some(src.into()),
                error: "`init` is not an object of parameter values".into(),
            };
        };
        for (k, x) in m {
            match x.as_f64() {
                Some(x) => {
                    init.insert(k.clone(), x);
                }
                None => {
                    return Incoming::Bad {
                        id,
                        src: Some(src.into()),
                        error: format!("`init.{k}` is not a number"),
                    }
                }
            }
        }
    }
    match Candidate::from_source(src, &init, inputs, origin, id.clone()) {
        Ok(c) => Incoming::Program(c),
        Err(error) => Incoming::Bad {
            id,
            src: Some(src.into()),
            error,
        },
    }
}

impl Outside {
    /// Starts `cmd` and sends it the search's task; waiting for it ends early once `interrupt`
    /// is set.
    pub fn start(
        cmd: &str,
        engine: &Engine,
        timeout: Duration,
        limits: StreamLimits,
        interrupt: Arc<AtomicBool>,
    ) -> Result<Outside, String> {
        let d = &engine.data;
        let task = json!({"task": {
            "inputs": d.inputs,
            "target": d.target,
            "rows": d.train.rows(),
            "tests": d.tests.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
            "ops": engine.grammar.ops.names(),
        }});
        Ok(Outside {
            stream: Stream::start(cmd, &task, timeout, limits, interrupt)?,
            inputs: d.inputs.clone(),
        })
    }

    /// Marks this proposer as the only one (`--proposer-only`), for what it is told.
    pub fn only(mut self, only: bool) -> Outside {
        self.stream = self.stream.only(only);
        self
    }

    /// Stops the proposer at the end of the search and says how it fared.
    pub fn finish(&mut self) -> ProposerStatus {
        self.stream.finish()
    }
}

impl Feed for Outside {
    fn take(&mut self, wait: Option<Instant>) -> Vec<Incoming> {
        let raw = self.stream.take(wait);
        raw.into_iter()
            .map(|r| match r {
                Raw::Line(l) => {
                    let item = parse_line(&l, &self.inputs, Origin::Proposer);
                    if matches!(item, Incoming::Bad { .. }) {
                        self.stream.bad_line();
                    }
                    item
                }
                Raw::TooLong(bytes) => Incoming::Bad {
                    id: None,
                    src: None,
                    error: self.stream.too_long_error(bytes),
                },
            })
            .collect()
    }

    fn answer(&mut self, a: &Answer) {
        self.stream.answer(report::answer_json(a));
    }

    fn front(&mut self, front: &[&Member], engine: &Engine) {
        let members: Vec<Value> = front
            .iter()
            .map(|m| report::member_json(engine, m))
            .collect();
        self.stream.send(json!({ "front": members }));
        // The proposer's silence counts from here: the time ndvm spent fitting its batch is
        // not the proposer's.
        self.stream.heard();
    }

    fn alive(&self) -> bool {
        self.stream.alive()
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.ended.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_words() {
        assert_eq!(
            words("python3 p.py --n 3").unwrap(),
            ["python3", "p.py", "--n", "3"]
        );
        assert_eq!(
            words(r#"a "b c" 'd e' f\ g"#).unwrap(),
            ["a", "b c", "d e", "f g"]
        );
        assert!(words("a 'b").is_err());
        assert!(words("  ").is_err());
    }

    #[test]
    fn lines_that_are_no_candidates_say_why() {
        let inputs = vec!["x".to_string()];
        let bad = |l: &str| match parse_line(l, &inputs, Origin::Proposer) {
            Incoming::Bad { error, .. } => error,
            Incoming::Program(c) => panic!("{l} gave {c:?}"),
        };
        assert!(bad("hello").contains("not a JSON line"));
        assert!(bad(r#"{"id": 3}"#).contains("no `src`"));
        assert!(bad(r#"{"src": "(+ a x"}"#).contains("does not parse"));
        assert!(bad(r#"{"src": "(* a x)", "init": {"a": "one"}}"#).contains("init.a"));
        match parse_line(
            r#"{"src": "(* a (exp (* b x)))", "init": {"a": 2}, "id": "q"}"#,
            &inputs,
            Origin::Proposer,
        ) {
            Incoming::Program(c) => {
                assert_eq!(c.params, ["a", "b"]);
                assert_eq!(c.init, [2.0, 1.0]);
                assert_eq!(c.id, Some(json!("q")));
            }
            other => panic!("{other:?}"),
        }
    }
}
