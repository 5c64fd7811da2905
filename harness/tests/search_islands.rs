//! A search's islands run apart, an epoch at a time, with the migrations computed from their
//! states by a driver, give the front of the same search run in one process: the contract
//! `ndvm.ray.search` rests on. One island is also lost mid-search and started again from its
//! last checkpoint, and the front is still the same.

use harness::search::candidate::{Candidate, Origin};
use harness::search::dataset::{Columns, Data};
use harness::search::engine::{Engine, Stop};
use harness::search::feed::NoFeed;
use harness::search::front::Member;
use harness::search::options::Options;
use harness::search::shard::{Arrival, ShardState};
use std::path::Path;

fn data() -> Data {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/sr/llm-sr/oscillator1");
    let cols = Columns {
        target: "a".into(),
        inputs: None,
        weights: None,
    };
    Data::read(&dir.join("train.csv"), &[], &cols).expect("the shipped data reads")
}

fn options() -> Options {
    let mut o = Options::default();
    for s in [
        "islands=3",
        "population=24",
        "offspring=12",
        "migration_interval=2",
        "fit_rows=200",
        "seed=7",
    ] {
        o.set(s).expect("a setting");
    }
    o
}

fn seed() -> Vec<Candidate> {
    let c = Candidate {
        origin: Origin::Seed,
        genome: None,
        src: "(* c0 x)".into(),
        params: vec!["c0".into()],
        init: vec![1.0],
        complexity: 3,
        perturbed: false,
        id: None,
        parent_score: None,
    };
    vec![c.clone(), c]
}

/// A front as compared: complexity, program, fitted values and the loss's bits.
type Front = Vec<(usize, String, Vec<f64>, u64)>;

fn front(e: &mut Engine) -> Front {
    e.polish(None, &Default::default());
    let f: Vec<Member> = e.hall.front().into_iter().cloned().collect();
    f.into_iter()
        .map(|m| (m.complexity, m.src, m.values, m.loss.to_bits()))
        .collect()
}

/// The islands run apart, driven as `ndvm.ray.search` drives them; `lose` names an island
/// lost (its engine dropped) after that many epochs, started again from its checkpoint.
fn apart(stop: &Stop, lose: Option<(usize, u64)>) -> (Front, u64) {
    let o = options();
    let k = o.islands;
    let interval = o.migration_interval;
    let start = |i: usize, checkpoint: Option<&ShardState>| {
        let mut e = Engine::island(o.clone(), data(), 1, seed(), i).expect("an island");
        if let Some(c) = checkpoint {
            e.load_states(vec![c.clone()])
                .expect("its checkpoint loads");
        }
        e
    };
    let mut islands: Vec<Engine> = (0..k).map(|i| start(i, None)).collect();
    let mut checkpoints: Vec<Option<ShardState>> = vec![None; k];
    let mut driver = Engine::new(o.clone(), data(), 1, Vec::new()).expect("the driver");
    let mut arrivals: Vec<Vec<Arrival>> = vec![Vec::new(); k];
    let mut epochs = 0;
    loop {
        let mut states = Vec::new();
        let mut reports = Vec::new();
        for i in 0..k {
            if lose == Some((i, epochs)) {
                // The worker is gone: its island starts again from its last checkpoint and
                // runs this epoch again.
                islands[i] = start(i, checkpoints[i].as_ref());
            }
            let report = islands[i].epoch(arrivals[i].clone(), stop);
            let s = &islands[i].shards[0];
            // What goes over the wire is JSON.
            let text = serde_json::to_string(&s.state(true)).unwrap();
            checkpoints[i] = Some(serde_json::from_str(&text).unwrap());
            states.push(s.state(false));
            reports.push(report);
        }
        driver.load_states(states).expect("the states load");
        epochs += 1;
        arrivals = if reports.iter().any(|r| r.steps == interval) {
            let a = driver.arrivals();
            driver.migrated(a.clone());
            a
        } else {
            vec![Vec::new(); k]
        };
        if !reports.iter().any(|r| r.live) {
            break;
        }
    }
    (front(&mut driver), driver.counters.evaluations)
}

#[test]
fn islands_apart_give_the_front_of_one_process() {
    let stop = Stop {
        max_evals: Some(500),
        ..Stop::default()
    };
    let mut together = Engine::new(options(), data(), 2, seed()).expect("a search");
    together.run(&mut NoFeed, &stop, &mut |_| {});
    let evals = together.counters.evaluations;
    assert_eq!(evals, 500);
    assert!(together.epoch >= 3, "it migrated: {}", together.epoch);
    let one = front(&mut together);
    assert!(one.len() >= 2, "{one:?}");
    let (two, evals_apart) = apart(&stop, None);
    assert_eq!(evals_apart, evals);
    assert_eq!(one, two, "islands apart find the front of one process");
    let (three, _) = apart(&stop, Some((1, 2)));
    assert_eq!(
        one, three,
        "an island started again from its checkpoint loses nothing"
    );
}
