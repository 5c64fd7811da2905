//! Property tests over generated and mutated texts for every reader of outside input: the
//! program reader and decoder, export, the proposer protocol's line parser, the two CSV readers
//! and the checkpoint loader. Whatever the text (random bytes, deep nestings of every bracket
//! and quote form, long tokens, mutations of valid inputs), each gives a result or a clear
//! error: no panic, no abort. `PROPTEST_CASES=20000 cargo test -p harness --test
//! hostile_inputs` is the longer run (REPRODUCE.md).

use harness::calibrate::table::Table;
use harness::export::{to_latex, to_python, Target};
use harness::search::candidate::Origin;
use harness::search::dataset::{Columns, Csv, Data, Dataset};
use harness::search::engine::{Checkpoint, Engine};
use harness::search::proposer::parse_line;
use proptest::prelude::*;
use runtime_cpu::{Bindings, Program, RunOptions, Session};

/// Valid texts to mutate.
const PROGRAMS: &[&str] = &[
    "(+ (* a x) (sin (* b v)))",
    "(let ((s (* a x))) (/ s (+ 1 (square s))))",
    "(loop ((i 0) (acc 0.0)) (if (< i 3) (recur (+ i 1) (+ acc x)) acc))",
    "(define (f y) (* y y)) (f '(1 2))",
    "[[1 2] [3 4]]",
    "(matmul (ones 2 2) (eye 2))",
    "#| c |# ; c\n(ref (vec 1 2 3) 1)",
];

/// One mutation of `text`: bytes inserted, removed or replaced, a span repeated.
fn mutate(text: &str, edits: &[(usize, u8, u8)]) -> String {
    let mut b = text.as_bytes().to_vec();
    for &(at, kind, byte) in edits {
        let at = if b.is_empty() { 0 } else { at % b.len() };
        match kind % 4 {
            0 => b.insert(at, byte),
            1 if !b.is_empty() => {
                b.remove(at);
            }
            2 if !b.is_empty() => b[at] = byte,
            _ => {
                let end = (at + 1 + byte as usize % 8).min(b.len());
                let span = b[at..end].to_vec();
                for _ in 0..(byte % 50) {
                    b.splice(at..at, span.iter().copied());
                }
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// Deep nestings of the brackets and quotes, around a token.
fn nested() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["(", "[", "'", "(sin ", "(quote ", "(let ((a ", "#;"]),
        1usize..200_000,
        prop::bool::ANY,
        "[a-z0-9.]{1,8}",
    )
        .prop_map(|(open, depth, closed, token)| {
            let close = match open {
                "[" => "]",
                "'" | "#;" => "",
                "(let ((a " => ")) a)",
                _ => ")",
            };
            let mut s = open.repeat(depth);
            s.push_str(&token);
            if closed {
                s.push_str(&close.repeat(depth));
            }
            s
        })
}

/// Any text: random bytes, a long token, a deep nesting or a mutated program.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..200)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        ("[ -~]{0,3}", 1usize..200_000).prop_map(|(p, n)| format!("({p}{}x)", "a".repeat(n))),
        nested(),
        (
            prop::sample::select(PROGRAMS.to_vec()),
            prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..6)
        )
            .prop_map(|(p, e)| mutate(p, &e)),
    ]
}

fn cases() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(64),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn programs_read_decode_and_run_or_say_why(src in text()) {
        if let Ok(p) = Program::parse(&src) {
            let mut b = Bindings::new();
            for name in p.inputs().map(str::to_string).collect::<Vec<_>>() {
                b = b.scalar(&name, 0.5);
            }
            let mut options = RunOptions::default();
            options.limits.max_steps = 100_000;
            options.limits.max_memory = 64 << 20;
            let _ = Session::<f64>::new().run(&p, &b, &options);
        }
    }

    #[test]
    fn every_nesting_form_at_any_depth_reads_or_is_refused(src in nested()) {
        match Program::parse(&src) {
            Ok(_) => {}
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
        let _ = to_python(&src, Target::Numpy, false);
    }

    #[test]
    fn export_gives_code_or_an_error(src in text()) {
        for target in [Target::Numpy, Target::Jax, Target::Torch, Target::Sympy] {
            let _ = to_python(&src, target, false);
        }
        let _ = to_latex(&src);
    }

    #[test]
    fn proposer_lines_are_candidates_or_answered_errors(
        src in text(),
        junk in prop::collection::vec(any::<u8>(), 0..100),
        shape in 0u8..5,
    ) {
        let inputs = vec!["x".to_string(), "v".to_string()];
        let line = match shape {
            0 => serde_json::json!({"src": src, "init": {"a": 1.5}, "id": 3}).to_string(),
            1 => serde_json::json!({"src": src, "init": src}).to_string(),
            2 => String::from_utf8_lossy(&junk).into_owned(),
            3 => format!("{{\"src\": {}", serde_json::json!(src)),
            _ => serde_json::json!({"src": 1, "init": [src]}).to_string(),
        };
        let _ = parse_line(&line, &inputs, Origin::Proposer);
    }

    #[test]
    fn csv_files_are_tables_or_errors_naming_the_line(
        body in text(),
        base in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..6),
    ) {
        let valid = "x,v,y\n1,2,3\n4,5.5,-6e3\n7,8,9\n";
        for t in [body.clone(), format!("x,y\n{body}"), mutate(valid, &base)] {
            let _ = Csv::parse(&t, "f.csv");
            let _ = Table::parse(&t);
        }
    }
}

/// A small search's checkpoint, its data, and the text of the checkpoint.
fn checkpoint() -> (Data, String) {
    let csv = Csv::parse("x,y\n1,2\n2,4\n3,6.5\n4,8\n", "f.csv").unwrap();
    let cols = Columns {
        target: "y".into(),
        inputs: None,
        weights: None,
    };
    let data = Data::from_csv(&csv, &[], &cols).unwrap();
    let options = harness::search::options::Options {
        islands: 1,
        population: 4,
        offspring: 2,
        ..Default::default()
    };
    let mut engine = Engine::new(options, data.clone(), 1, Vec::new()).unwrap();
    let stop = harness::search::engine::Stop {
        max_evals: Some(8),
        ..Default::default()
    };
    engine.run(&mut harness::search::feed::NoFeed, &stop, &mut |_| {});
    let text = serde_json::to_string(&engine.checkpoint()).unwrap();
    (data, text)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases().cases.min(32), ..cases() })]

    #[test]
    fn checkpoints_resume_or_are_refused(
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..8),
    ) {
        thread_local! {
            static BASE: (Data, String) = checkpoint();
        }
        let (data, text) = BASE.with(|b| b.clone());
        let damaged = mutate(&text, &edits);
        if let Ok(c) = serde_json::from_str::<Checkpoint>(&damaged) {
            let _ = Engine::resume(c, data, 1);
        }
    }
}

#[test]
fn an_intact_checkpoint_resumes_and_other_data_is_refused() {
    let (data, text) = checkpoint();
    let c: Checkpoint = serde_json::from_str(&text).unwrap();
    assert!(Engine::resume(c.clone(), data.clone(), 1).is_ok());
    let mut other = data;
    other.train = Dataset {
        y: other.train.y.mapv(|v| v + 1.0),
        ..other.train
    };
    let e = Engine::resume(c, other, 1).err().expect("refused");
    assert!(e.contains("other data"), "{e}");
}
