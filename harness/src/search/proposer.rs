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
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

enum Event {
    Line(String),
    Closed,
}

/// How the proposer fared.
#[derive(Clone, Debug, PartialEq)]
pub struct ProposerStatus {
    /// Lines it sent.
    pub lines: u64,
    /// Of those, lines that were no candidate (not JSON, no `src`, not a program).
    pub bad: u64,
    /// Why it stopped being heard.
    pub ended: String,
}

impl ProposerStatus {
    /// As JSON.
    pub fn json(&self) -> Value {
        json!({"lines": self.lines, "bad_lines": self.bad, "ended": self.ended})
    }

    /// For people.
    pub fn describe(&self) -> String {
        format!(
            "{} lines, {} of them bad; {}",
            self.lines, self.bad, self.ended
        )
    }
}

/// A running outside proposer.
pub struct Outside {
    child: Child,
    to: Option<Sender<String>>,
    from: Receiver<Event>,
    inputs: Vec<String>,
    timeout: Duration,
    last_heard: Instant,
    lines: u64,
    bad: u64,
    ended: Option<String>,
    interrupt: Arc<AtomicBool>,
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

impl Outside {
    /// Starts `cmd` and sends it the task line; waiting for it ends early once `interrupt` is
    /// set.
    pub fn start(
        cmd: &str,
        engine: &Engine,
        timeout: Duration,
        interrupt: Arc<AtomicBool>,
    ) -> Result<Outside, String> {
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
        let (to, lines) = mpsc::channel::<String>();
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
        let (tx, from) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match r.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        // A line that is not UTF-8 is answered as a bad line, not fatal.
                        let text = String::from_utf8_lossy(&line);
                        let l = text.trim_end_matches(['\n', '\r']).to_string();
                        if tx.send(Event::Line(l)).is_err() {
                            return;
                        }
                    }
                }
            }
            let _ = tx.send(Event::Closed);
        });
        let d = &engine.data;
        let task = json!({"task": {
            "inputs": d.inputs,
            "target": d.target,
            "rows": d.train.rows(),
            "tests": d.tests.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
            "ops": engine.grammar.ops.names(),
        }});
        let _ = to.send(task.to_string());
        Ok(Outside {
            child,
            to: Some(to),
            from,
            inputs: d.inputs.clone(),
            timeout,
            last_heard: Instant::now(),
            lines: 0,
            bad: 0,
            ended: None,
            interrupt,
        })
    }

    fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed)
    }

    fn send(&mut self, v: Value) {
        if let Some(to) = &self.to {
            let _ = to.send(v.to_string());
        }
    }

    /// Gives the proposer up: stops it and records why.
    fn end(&mut self, why: String) {
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
        log::warn!("outside proposer: {why}; the search goes on without it");
        self.ended = Some(why);
    }

    /// Stops the proposer at the end of the search and says how it fared.
    pub fn finish(&mut self) -> ProposerStatus {
        self.end("stopped at the end of the search".into());
        ProposerStatus {
            lines: self.lines,
            bad: self.bad,
            ended: self.ended.clone().unwrap_or_default(),
        }
    }

    fn incoming(&mut self, line: String, out: &mut Vec<Incoming>) {
        self.last_heard = Instant::now();
        if line.trim().is_empty() {
            return;
        }
        self.lines += 1;
        let item = parse_line(&line, &self.inputs, Origin::Proposer);
        if matches!(item, Incoming::Bad { .. }) {
            self.bad += 1;
        }
        out.push(item);
    }
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

impl Feed for Outside {
    fn take(&mut self, wait: Option<Instant>) -> Vec<Incoming> {
        let mut out = Vec::new();
        if self.ended.is_some() {
            return out;
        }
        loop {
            match self.from.try_recv() {
                Ok(Event::Line(l)) => self.incoming(l, &mut out),
                Ok(Event::Closed) | Err(TryRecvError::Disconnected) => {
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
                    Ok(Event::Line(l)) => {
                        self.incoming(l, &mut out);
                        // Whatever else came with it joins the batch.
                        while let Ok(Event::Line(l)) = self.from.try_recv() {
                            self.incoming(l, &mut out);
                        }
                    }
                    Ok(Event::Closed) | Err(RecvTimeoutError::Disconnected) => {
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

    fn answer(&mut self, a: &Answer) {
        self.send(report::answer_json(a));
    }

    fn front(&mut self, front: &[&Member], engine: &Engine) {
        let members: Vec<Value> = front
            .iter()
            .map(|m| report::member_json(engine, m))
            .collect();
        self.send(json!({ "front": members }));
        // The proposer's silence counts from here: the time ndvm spent fitting its batch is
        // not the proposer's.
        self.last_heard = Instant::now();
    }

    fn alive(&self) -> bool {
        self.ended.is_none()
    }
}

impl Drop for Outside {
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
