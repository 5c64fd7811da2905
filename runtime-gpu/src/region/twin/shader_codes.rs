//! The shader's switch codes against the ops' codes: each `case` of `unary_f`, `unary_d`,
//! `binary_f`, `binary_d`, `linalg_f`, `linalg_r`, `forward_op` and `reverse_op` in
//! `region.wgsl` names its ops in a comment (`case 4u: { return exp(x); } // Exp`), and the
//! codes the shader tests by number (`spreads`, `two`) are read from its text.

use super::forward::spreads;
use shared_ir::region::{shares_elements, Opcode};
use shared_ir::{BinaryOp, LinalgOp, UnaryOp};

/// The body of WGSL function `name` in `src`: from its head to the next function or entry.
fn body<'s>(src: &'s str, name: &str) -> &'s str {
    let head = format!("\nfn {name}(");
    let from = src.find(&head).unwrap_or_else(|| panic!("no fn {name}")) + 1;
    let rest = &src[from + head.len()..];
    let to = ["\nfn ", "\n@compute"]
        .iter()
        .filter_map(|t| rest.find(t))
        .min()
        .unwrap_or(rest.len());
    &src[from..from + head.len() + to]
}

/// The cases of a switch: each `case N[u], ...:` (None for `default:`) with the op names of
/// its `// Name, ...` comment.
fn cases_of(body: &str) -> Vec<(Option<Vec<u32>>, Vec<String>)> {
    let names = |line: &str| -> Vec<String> {
        let c = line
            .split("//")
            .nth(1)
            .unwrap_or_else(|| panic!("unnamed: {line}"));
        c.split(',').map(|s| s.trim().to_string()).collect()
    };
    let mut out = Vec::new();
    for line in body.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("case ") {
            let codes = rest.split(':').next().expect("a colon");
            let codes = codes
                .split(',')
                .map(|c| c.trim().trim_end_matches('u').parse().expect("a code"))
                .collect();
            out.push((Some(codes), names(line)));
        } else if line.starts_with("default:") {
            out.push((None, names(line)));
        }
    }
    out
}

/// Checks that each op of `ops` (name and code) names exactly one case of the switch in
/// function `func`, with its own code, the last op the `default`.
fn check_switch(src: &str, func: &str, ops: &[(String, u32)]) {
    let cases = cases_of(body(src, func));
    let mut seen = Vec::new();
    for (codes, names) in &cases {
        match codes {
            Some(codes) => {
                assert_eq!(codes.len(), names.len(), "{func}: {codes:?} {names:?}");
                for (code, name) in codes.iter().zip(names) {
                    let op = ops.iter().find(|o| &o.0 == name);
                    assert_eq!(op.map(|o| o.1), Some(*code), "{func}: case {code} {name}");
                    seen.push(name.clone());
                }
            }
            None => {
                let last = ops.iter().max_by_key(|o| o.1).expect("ops");
                assert_eq!(names, std::slice::from_ref(&last.0), "{func}: default");
                seen.push(last.0.clone());
            }
        }
    }
    seen.sort();
    let mut want: Vec<String> = ops.iter().map(|o| o.0.clone()).collect();
    want.sort();
    assert_eq!(seen, want, "{func}: every op once");
}

#[test]
fn the_shaders_switch_codes_are_the_ops_codes() {
    let src = shaders::REGION_FORWARD.source;
    let named = |v: Vec<(String, u32)>| v;
    let unary = named(
        UnaryOp::ALL
            .iter()
            .map(|o| (format!("{o:?}"), o.code()))
            .collect(),
    );
    let binary = named(
        BinaryOp::ALL
            .iter()
            .map(|o| (format!("{o:?}"), o.code()))
            .collect(),
    );
    let linalg = named(
        LinalgOp::ALL
            .iter()
            .map(|o| (format!("{o:?}"), o.code()))
            .collect(),
    );
    let opcodes = [
        Opcode::Unary,
        Opcode::Binary,
        Opcode::Select,
        Opcode::Pack,
        Opcode::Extract,
        Opcode::Linalg,
    ];
    let opcodes: Vec<(String, u32)> = opcodes
        .iter()
        .map(|o| (format!("{o:?}"), *o as u32))
        .collect();
    for (func, ops) in [
        ("unary_f", &unary),
        ("unary_d", &unary),
        ("binary_f", &binary),
        ("binary_d", &binary),
        ("linalg_f", &linalg),
        ("linalg_r", &linalg),
        ("forward_op", &opcodes),
        ("reverse_op", &opcodes),
    ] {
        check_switch(src, func, ops);
    }
    // The codes the shader tests by number: the products it spreads over a lane's
    // invocations, and the linalg ops of two operands.
    let codes = |text: &str| -> Vec<u32> {
        text.split(|c: char| !c.is_ascii_alphanumeric())
            .filter_map(|w| w.strip_suffix('u')?.parse().ok())
            .collect()
    };
    let spread = codes(body(src, "spreads"));
    let two_line = body(src, "linalg_r")
        .lines()
        .find(|l| l.contains("let two ="))
        .expect("two");
    let two = codes(two_line);
    for op in LinalgOp::ALL {
        let c = op.code();
        let shares = shares_elements(Opcode::Linalg, c, false);
        assert_eq!(spread.contains(&c), shares, "shader spreads {op:?}");
        assert_eq!(spreads(c), shares, "twin spreads {op:?}");
        assert_eq!(
            two.contains(&c),
            op.binary(),
            "shader: {op:?} of two operands"
        );
    }
}
