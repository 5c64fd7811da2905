// The empty kernel: one invocation that does nothing. `runtime-gpu` dispatches it to measure the
// fixed cost of a dispatch round trip (encode, submit, wait) on the selected adapter.

@compute @workgroup_size(1)
fn main() {
}
