//! A region device that fails after it has taken regions, on the CPU alone: the results a
//! device keeps are read back only when the host needs them, so a device that fails later
//! holds numbers the walk still needs. Under `auto` (the device falls back) the walk runs
//! again on the CPU and gives the CPU's results exactly; otherwise every lane fails with the
//! device's message.

use runtime_cpu::{Bindings, Error, GradSpec, Outcome, Program, RunOptions, Session};
use shared_ir::region::{DeviceResult, MaskBits, Region, RegionDevice, RegionStats};
use std::ops::Range;

/// Takes every region and "runs" it without computing anything; fails the `fail_forward`-th
/// forward call (from 1; 0 never) and every read back.
#[derive(Debug)]
struct Failing {
    fail_forward: usize,
    forwards: usize,
    falls_back: bool,
    fell_back: bool,
}

impl Failing {
    fn new(fail_forward: usize, falls_back: bool) -> Self {
        Failing {
            fail_forward,
            forwards: 0,
            falls_back,
            fell_back: false,
        }
    }
}

impl RegionDevice<f32> for Failing {
    fn describe(&self) -> String {
        "a failing device".into()
    }
    fn defer_at(&mut self, _lanes: usize) -> bool {
        !self.fell_back
    }
    fn wants(&mut self, _stats: &RegionStats) -> bool {
        !self.fell_back
    }
    fn fall_back(&mut self, _error: &str) -> bool {
        self.fell_back = self.falls_back;
        self.falls_back
    }
    fn forward(
        &mut self,
        _region: &Region,
        _masks: &MaskBits,
        _data: &[f32],
        _upload: &[Range<usize>],
    ) -> DeviceResult<()> {
        self.forwards += 1;
        if self.forwards == self.fail_forward {
            return Err("the device was lost".into());
        }
        Ok(())
    }
    fn read(&mut self, _from: usize, _out: &mut [f32]) -> DeviceResult<()> {
        Err("the device was lost".into())
    }
    fn reverse(
        &mut self,
        _region: &Region,
        _masks: &MaskBits,
        _data: &[f32],
        _upload: &[Range<usize>],
        _adj_len: usize,
        _seed: (usize, &[f32]),
        _read: usize,
    ) -> DeviceResult<Vec<f32>> {
        Err("the device was lost".into())
    }
}

/// Two regions: the comparison on lane data ends the first.
const PROGRAM: &str = "(let ((y (* x (exp x)))) (if (> y 1.0) (* y (sin x)) (- y (cos x))))";

fn run(device: Option<Failing>) -> Outcome {
    let program = Program::parse(PROGRAM).expect("parses");
    let x: Vec<f64> = (0..64).map(|i| -1.0 + 0.03 * i as f64).collect();
    let bindings = Bindings::new().lanes("x", x).expect("lanes");
    let options = RunOptions {
        grad: GradSpec::Some(vec!["x".into()]),
        ..Default::default()
    };
    let mut session = Session::<f32>::new();
    session.set_device(device.map(|d| Box::new(d) as Box<dyn RegionDevice<f32>>));
    session
        .run(&program, &bindings, &options)
        .cloned()
        .expect("bound")
}

fn numbers(out: &Outcome) -> Vec<u32> {
    let mut v = Vec::new();
    for l in 0..out.lanes {
        let x = out.values[l].as_ref().expect("a value").as_number();
        v.push((x.expect("a number") as f32).to_bits());
        v.push((out.grads[0].per_lane[l] as f32).to_bits());
    }
    v
}

#[test]
fn a_device_that_cannot_read_back_under_auto_reruns_the_walk_on_the_cpu() {
    let want = numbers(&run(None));
    let got = run(Some(Failing::new(0, true)));
    assert_eq!(numbers(&got), want);
    assert_eq!(got.walks, 2, "one walk on the device, one again on the CPU");
}

#[test]
fn a_device_failing_its_second_region_under_auto_reruns_the_walk_on_the_cpu() {
    // The first region's results are on the device only when the second fails.
    let want = numbers(&run(None));
    let got = run(Some(Failing::new(2, true)));
    assert_eq!(numbers(&got), want);
}

#[test]
fn a_device_failing_its_first_region_under_auto_goes_on_on_the_cpu() {
    // Nothing is on the device yet: the walk goes on where it is.
    let want = numbers(&run(None));
    let got = run(Some(Failing::new(1, true)));
    assert_eq!(numbers(&got), want);
    assert_eq!(got.walks, 1);
}

#[test]
fn without_fall_back_every_lane_fails_with_the_devices_message() {
    for fail in [0, 1, 2] {
        let got = run(Some(Failing::new(fail, false)));
        for v in &got.values {
            match v {
                Err(Error::Device { message }) => {
                    assert!(message.contains("the device was lost"), "{message}")
                }
                other => {
                    panic!("failing forward call {fail}: expected a device error, got {other:?}")
                }
            }
        }
    }
}
