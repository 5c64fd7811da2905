//! The assembler: what it accepts, and a clear error (line, column, the offending line) for
//! everything it does not.

use super::syntax_error;
use runtime_vm::{Error, Op, Program};

#[test]
fn accepts_comments_case_blank_lines_and_vectors() {
    let p = Program::parse(
        "\u{feff}; a comment\n\n  PUSH [1, 2 3]   # another\nLoad v\ndot\n  \nloop 0\nend\n",
    )
    .unwrap();
    assert_eq!(p.inputs().collect::<Vec<_>>(), ["v"]);
    assert_eq!(p.consts()[0].data, [1.0, 2.0, 3.0]);
    assert_eq!(p.max_depth(), 2);
    assert!(matches!(p.ops()[0], Op::Push(0)));
}

#[test]
fn an_omitted_else_is_an_empty_block() {
    let p = Program::parse("load x\nload g\nbranch\nneg\nend").unwrap();
    let names: Vec<&str> = p.ops().iter().map(|o| o.name()).collect();
    assert_eq!(names, ["load", "load", "branch", "neg", "else", "end"]);
    assert!(matches!(p.ops()[2], Op::Branch { other: 4, reach: 1 }));
}

#[test]
fn errors_point_at_the_line_and_column() {
    let cases: &[(&str, u32, u32, &str)] = &[
        ("", 1, 1, "no instructions"),
        ("; only a comment\n", 1, 1, "no instructions"),
        ("load x\nmull", 2, 1, "unknown instruction `mull`"),
        (
            "push 1\n  add",
            2,
            3,
            "`add` needs 2 values on the stack, but there is only 1",
        ),
        ("neg", 1, 1, "the stack is empty"),
        ("push", 1, 1, "`push` needs a number"),
        ("push 1x", 1, 6, "`1x` is not a number"),
        ("push [1 z]", 1, 6, "`z` in `[1 z]` is not a number"),
        ("push []", 1, 6, "empty vector"),
        ("push [1 2", 1, 6, "`[` is never closed"),
        ("push 1 2", 1, 8, "one too many"),
        ("load", 1, 1, "needs an input name"),
        ("load 2x", 1, 6, "not an input name"),
        ("push 1\nadd 3", 2, 5, "takes no operand"),
        ("push 1\nloop -1\nend", 2, 6, "not a trip count"),
        ("push 1\nloop 4294967296\nend", 2, 6, "not a trip count"),
        ("push 1\nloop 3\ndup\nend", 4, 1, "changes its depth by +1"),
        ("push 1\nend", 2, 1, "`end` without an open"),
        ("push 1\nelse", 2, 1, "`else` without an open `branch`"),
        (
            "push 1\nloop 2\nelse\nend",
            3,
            1,
            "`else` without an open `branch`",
        ),
        (
            "push 1\npush 1\nbranch\nelse\nelse\nend",
            5,
            1,
            "a second `else`",
        ),
        (
            "push 1\npush 1\nbranch\ndup\nelse\nend",
            6,
            1,
            "first changes its depth by +1",
        ),
        ("push 1\nloop 2\n", 2, 1, "`loop` is never closed"),
        ("push 1\nbranch\npush 2\n", 2, 1, "`branch` is never closed"),
        ("push 1\npush 2", 2, 1, "leaves 2"),
        ("push 1\nbranch\nelse\nend", 4, 1, "leaves 0"),
    ];
    for &(src, line, col, fragment) in cases {
        let (l, c, m) = syntax_error(src);
        assert_eq!((l, c), (line, col), "{src:?}: {m}");
        assert!(m.contains(fragment), "{src:?}: `{m}` lacks `{fragment}`");
    }
}

#[test]
fn the_message_shows_the_offending_line() {
    let e = Program::parse("load x\n  exp  ; e\nmull x").unwrap_err();
    assert!(matches!(e, Error::Syntax { .. }));
    let text = e.to_string();
    assert!(
        text.starts_with("3:1: unknown instruction `mull`"),
        "{text}"
    );
    assert!(text.ends_with("    3 | mull x"), "{text}");
}

#[test]
fn deep_nesting_assembles_without_recursion() {
    let depth = 50_000;
    let mut src = String::from("push 1\n");
    for _ in 0..depth {
        src.push_str("loop 1\n");
    }
    for _ in 0..depth {
        src.push_str("end\n");
    }
    let p = Program::parse(&src).unwrap();
    assert_eq!(p.ops().len(), 1 + 2 * depth);
}
