//! `--device cpu|gpu|auto` end to end: the GPU region path gives the CPU's results, `gpu`
//! without a usable adapter or in f64 is a usage error, and `auto` falls back to the CPU.

use runtime_gpu::testing::gpu_or_skip;
use serde_json::Value;
use std::process::{Command, Output};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");

fn ndvm(args: &[&str], env: &[(&str, &str)]) -> Output {
    let cache = std::env::temp_dir().join(format!("ndvm-cli-device-{}", std::process::id()));
    let mut c = Command::new(env!("CARGO_BIN_EXE_ndvm"));
    c.args(args).env("NDVM_CACHE_DIR", &cache);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the ndvm binary runs")
}

/// A lanes CSV of `n` (q, r) pairs.
fn lanes_csv(n: usize) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("ndvm-cli-device-{}-{n}.csv", std::process::id()));
    let mut text = String::from("q,r\n");
    for i in 0..n {
        let t = i as f64 / n as f64;
        text.push_str(&format!("{},{}\n", 0.01 + 0.09 * t, 0.2 - 0.15 * t));
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn kalman(device: &str, precision: &str, lanes: &str, env: &[(&str, &str)]) -> Output {
    let prog = format!("{EXAMPLES}/kalman2d_T80.scm");
    let obs = format!("obs=@{EXAMPLES}/kalman2d_obs.csv");
    ndvm(
        &[
            "run",
            &prog,
            "--bind",
            &obs,
            "--lanes",
            lanes,
            "--grad",
            "q,r",
            "--precision",
            precision,
            "--device",
            device,
            "--format",
            "json",
        ],
        env,
    )
}

/// The JSON a run that exited 0 printed (its error output in the failure message otherwise).
fn json_of(out: Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn the_gpu_region_path_gives_the_cpu_results() {
    if gpu_or_skip("the_gpu_region_path_gives_the_cpu_results").is_none() {
        return;
    }
    let csv = lanes_csv(64);
    let csv = csv.to_str().unwrap();
    let run = |d: &str| json_of(kalman(d, "f32", csv, &[]));
    let (cpu, gpu) = (run("cpu"), run("gpu"));
    for key in ["value"] {
        for (a, b) in numbers(&gpu[key]).iter().zip(numbers(&cpu[key])) {
            assert!((a - b).abs() <= 2e-3 * (1.0 + b.abs()), "{key}: {a} vs {b}");
        }
    }
    for g in ["q", "r"] {
        let (a, b) = (numbers(&gpu["grad"][g]), numbers(&cpu["grad"][g]));
        assert_eq!(a.len(), 64);
        for (x, y) in a.iter().zip(&b) {
            assert!(
                (x - y).abs() <= 2e-3 * (1.0 + y.abs()),
                "d/d{g}: {x} vs {y}"
            );
        }
    }
}

#[test]
fn gpu_in_f64_is_a_usage_error() {
    let csv = lanes_csv(4);
    let out = kalman("gpu", "f64", csv.to_str().unwrap(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--precision f32"));
}

#[test]
fn without_an_adapter_gpu_fails_and_auto_runs_on_the_cpu() {
    let csv = lanes_csv(600);
    let csv = csv.to_str().unwrap();
    let none = [("NDVM_ADAPTER", "no-such-adapter-anywhere")];
    let out = kalman("gpu", "f32", csv, &none);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--device gpu") && err.contains("no-such-adapter-anywhere"),
        "{err}"
    );
    let auto = kalman("auto", "f32", csv, &none);
    assert_eq!(
        auto.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&auto.stderr)
    );
    let cpu = kalman("cpu", "f32", csv, &[]);
    assert_eq!(
        auto.stdout, cpu.stdout,
        "auto on the CPU gives the CPU's bytes"
    );
}

#[test]
fn devices_measures_the_cost_model_and_caches_it() {
    if gpu_or_skip("devices_measures_the_cost_model_and_caches_it").is_none() {
        return;
    }
    let json = |args: &[&str]| json_of(ndvm(args, &[]));
    let measured = json(&["devices", "--measure", "--format", "json"]);
    let costs = &measured["region_costs"];
    for key in ["device_ns_per_work", "device_step_ns", "cpu_ns_per_work"] {
        let x = costs[key].as_f64().unwrap_or(f64::NAN);
        assert!(x.is_finite() && x > 0.0, "{key} = {x}: {measured}");
    }
    // The probes: the first at 4096 lanes gives one step's latency, the last the throughput.
    let probes = measured["region_probes"].as_array().unwrap();
    assert!(!probes.is_empty(), "{measured}");
    assert_eq!(probes[0]["lanes"], 4096);
    let last = probes.last().unwrap();
    let per_number = last["device_seconds"].as_f64().unwrap() * 1e9
        / (last["lanes"].as_f64().unwrap() * last["ops"].as_f64().unwrap());
    let ns = costs["device_ns_per_work"].as_f64().unwrap();
    assert!((per_number - ns).abs() <= 1e-9 * ns.max(1.0), "{measured}");
    let step = probes[0]["device_seconds"].as_f64().unwrap() * 1e9 / 64.0;
    assert!((step - costs["device_step_ns"].as_f64().unwrap()).abs() <= 1e-6 * step.max(1.0));
    // A later run reads the same terms from the cache, without timing anything.
    let cached = json(&["devices", "--format", "json"]);
    assert_eq!(cached["region_costs"], measured["region_costs"]);
    assert_eq!(cached["region_probes"], Value::Array(Vec::new()));
}

/// `--device auto` makes no GPU instance for a run that will not use the GPU: in f64, or with
/// fewer lanes than a lane block in f32 (so the driver cannot print anything either).
#[test]
fn auto_makes_no_gpu_instance_where_it_will_not_use_one() {
    let dir = std::env::temp_dir().join(format!("ndvm-cli-device-auto-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("p.scm");
    std::fs::write(&prog, "(* x (sin x))").unwrap();
    let lanes = |n: usize| {
        let path = dir.join(format!("x{n}.csv"));
        let rows: String = (0..n).map(|i| format!("{}\n", i as f64 / 7.0)).collect();
        std::fs::write(&path, format!("x\n{rows}")).unwrap();
        path
    };
    let (few, many) = (lanes(4), lanes(300));
    // A cache of its own: the run that may use the GPU measures and caches the cost model,
    // which must not race with the test of that cache.
    let cache = dir.join("cache");
    let log = [
        ("RUST_LOG", "runtime_gpu=debug"),
        ("NDVM_CACHE_DIR", cache.to_str().unwrap()),
    ];
    let run = |csv: &std::path::Path, precision: &str| {
        let out = ndvm(
            &[
                "run",
                prog.to_str().unwrap(),
                "--lanes",
                csv.to_str().unwrap(),
                "--precision",
                precision,
                "--device",
                "auto",
            ],
            &log,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    for (csv, precision) in [(&many, "f64"), (&few, "f64"), (&few, "f32")] {
        let err = run(csv, precision);
        assert!(err.is_empty(), "{precision}: {err}");
    }
    // The check can fail: a run that may use the GPU does make one.
    let err = run(&many, "f32");
    assert!(err.contains("creating a wgpu instance"), "{err}");
}
