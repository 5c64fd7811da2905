//! Randomized differential testing in CI: 8,000 generated programs from every family of the
//! language, each through all six gates (G1 forward vs oracle, G2 gradients vs oracle, G3
//! gradients vs finite differences, G4 lane decomposition, G5 thread counts 1/2/8, G6 f32 vs
//! f64). Run with `-- --nocapture` to see the per-family table and the time.

use ndvm_tests::driver;
use ndvm_tests::gates::Gate;
use ndvm_tests::gen::{Family, GenOptions};
use ndvm_tests::report::Report;
use ndvm_tests::shrink::shrink;
use std::time::{Duration, Instant};

/// Programs in the CI run.
const PROGRAMS: u64 = 8000;
/// The CI run's seed.
const SEED: u64 = 20_260_101;
/// The CI budget for the run (2 cores, dev profile at opt-level 1).
const BUDGET: Duration = Duration::from_secs(180);

#[test]
fn generated_programs_pass_every_gate() {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let start = Instant::now();
    let results = driver::run(SEED, PROGRAMS, &GenOptions::default(), threads, &|_| {});
    let elapsed = start.elapsed();
    let report = Report::new(SEED, &results, elapsed.as_secs_f64());
    println!("{}", report.text());
    println!("{PROGRAMS} programs, all six gates, {threads} threads: {elapsed:.2?}");

    let mut problems = Vec::new();
    for r in results.iter().filter(|r| r.failed.is_some()).take(5) {
        let case = r.failed.as_ref().expect("kept on failure");
        let (gate, message) = r.verdict.first_failure().expect("a failure");
        let small = shrink(case, gate, 500, Duration::from_secs(20));
        problems.push(format!(
            "program {} fails {gate}: {message}\nshrunk ({}): {}\ninputs: {:?}\n{}",
            r.index, small.message, small.case.source, small.case.inputs, case.source
        ));
    }
    assert!(
        report.passed(),
        "{} of {PROGRAMS} programs fail a gate:\n{}",
        report.failures.len(),
        problems.join("\n\n")
    );
    // Every family is reached, in at least 5% of the programs, and every gate ran on each.
    for row in &report.rows {
        assert!(
            row.programs * 20 >= PROGRAMS as usize,
            "family {} is in only {} of {PROGRAMS} programs",
            row.name,
            row.programs
        );
        assert_eq!(row.passes, [row.programs; 6], "family {}", row.name);
    }
    assert_eq!(report.rows.len(), Family::ALL.len() + 1);
    assert!(
        report.fd_checked > 10 * PROGRAMS as usize,
        "G3 compared too little"
    );
    assert!(
        elapsed < BUDGET,
        "the CI run took {elapsed:.1?}, over its budget of {BUDGET:?}"
    );
}

#[test]
fn required_families_are_honoured_and_results_do_not_depend_on_threads() {
    let options = GenOptions {
        require: [Family::Matrix, Family::Trip].into_iter().collect(),
        protected_ops: false,
    };
    let one = driver::run(5, 60, &options, 1, &|_| {});
    let three = driver::run(5, 60, &options, 3, &|_| {});
    for (a, b) in one.iter().zip(&three) {
        assert!(a.families.contains(Family::Matrix) && a.families.contains(Family::Trip));
        assert_eq!(a.index, b.index);
        assert_eq!(a.verdict, b.verdict);
    }
    assert!(one.iter().all(|r| r.verdict.passed()));
    assert!(Gate::ALL
        .iter()
        .all(|g| Gate::from_name(&g.to_string()) == Some(*g)));
}

#[test]
fn protected_ops_pass_every_gate_in_the_oracle_and_the_runtime_alike() {
    let options = GenOptions {
        require: [Family::Math].into_iter().collect(),
        protected_ops: true,
    };
    let results = driver::run(SEED + 1, 500, &options, 2, &|_| {});
    let failures: Vec<String> = results
        .iter()
        .filter_map(|r| {
            r.verdict
                .first_failure()
                .map(|(g, m)| format!("program {} fails {g}: {m}", r.index))
        })
        .take(5)
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
