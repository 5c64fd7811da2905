//! naga validation of every shader, without a device.
//!
//! Each source is parsed, validated with every check naga has, specialised with its override
//! values, translated to SPIR-V in process and, where the tools are installed, checked again
//! offline (`naga` CLI, `spirv-val`). Only the offline tools are optional; a missing one is
//! reported on stderr and skipped.

use crate::{Shader, ALL, CEILING};
use naga::back::{pipeline_constants, spv, PipelineConstants};
use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};
use naga::{AddressSpace, Module, ShaderStage};
use std::path::PathBuf;
use std::process::Command;

/// Parses and validates `source`; errors read `path:line:column: message`.
fn validate_source(path: &str, source: &str) -> Result<(Module, ModuleInfo), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| {
        located(
            path,
            e.location(source),
            &e.emit_to_string_with_path(source, path),
        )
    })?;
    let info = Validator::new(ValidationFlags::all(), Capabilities::default())
        .validate(&module)
        .map_err(|e| {
            let location = e.location(source);
            located(path, location, &e.emit_to_string_with_path(source, path))
        })?;
    Ok((module, info))
}

/// `path:line:column: ` in front of naga's report, so the first line names the place.
fn located(path: &str, at: Option<naga::SourceLocation>, report: &str) -> String {
    match at {
        Some(at) => format!("{path}:{}:{}: {report}", at.line_number, at.line_position),
        None => format!("{path}: {report}"),
    }
}

/// The module with its overrides replaced by the shader's test values, and its SPIR-V.
fn specialise(shader: &Shader) -> Result<(Module, ModuleInfo, Vec<u32>), String> {
    let (module, info) = validate_source(shader.path, shader.source)?;
    let mut constants = PipelineConstants::default();
    for &(name, value) in shader.overrides {
        constants.insert(name.to_string(), value);
    }
    let (module, info) = pipeline_constants::process_overrides(
        &module,
        &info,
        Some((ShaderStage::Compute, shader.entry_point)),
        &constants,
    )
    .map_err(|e| format!("{}: overrides: {e}", shader.path))?;
    let pipeline = spv::PipelineOptions {
        shader_stage: ShaderStage::Compute,
        entry_point: shader.entry_point.to_string(),
    };
    let words = spv::write_vec(&module, &info, &spv::Options::default(), Some(&pipeline))
        .map_err(|e| format!("{}: SPIR-V: {e}", shader.path))?;
    Ok((module.into_owned(), info.into_owned(), words))
}

/// Bytes of workgroup memory the specialised module declares.
fn workgroup_bytes(module: &Module) -> u32 {
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).expect("layout");
    module
        .global_variables
        .iter()
        .filter(|(_, var)| var.space == AddressSpace::WorkGroup)
        .map(|(_, var)| layouter[var.ty].size)
        .sum()
}

/// Runs `tool` with `args`; `None` when the tool is not installed.
fn run_tool(tool: &str, args: &[&std::ffi::OsStr]) -> Option<std::process::Output> {
    Command::new(tool).args(args).output().ok()
}

#[test]
fn every_shader_validates_and_translates_to_spirv() {
    for shader in ALL {
        let (module, _, words) = specialise(shader).unwrap_or_else(|e| panic!("{e}"));
        assert!(words.len() > 5, "{}: empty SPIR-V", shader.path);
        assert!(
            module
                .entry_points
                .iter()
                .any(|ep| ep.name == shader.entry_point && ep.stage == ShaderStage::Compute),
            "{}: no compute entry point `{}`",
            shader.path,
            shader.entry_point
        );
    }
}

#[test]
fn an_invalid_shader_fails_with_file_and_line() {
    let broken = "@compute @workgroup_size(1)\nfn main() {\n    let x: f32 = 1u;\n}\n";
    let err = validate_source("wgsl/broken.wgsl", broken).expect_err("must not validate");
    eprintln!("{err}");
    assert!(err.starts_with("wgsl/broken.wgsl:3:"), "{err}");
    let unparsable = "fn main( {\n";
    let err = validate_source("wgsl/unparsable.wgsl", unparsable).expect_err("must not parse");
    assert!(err.starts_with("wgsl/unparsable.wgsl:1:"), "{err}");
}

#[test]
fn ceiling_workgroup_memory_fits_the_smallest_adapter_limit() {
    // Two DMAX x DMAX f32 arrays; lavapipe (and many GPUs) give a workgroup 32 KiB.
    let (module, _, _) = specialise(&CEILING).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(workgroup_bytes(&module), 2 * 64 * 64 * 4);
    assert!(workgroup_bytes(&module) <= 32 * 1024);
}

#[test]
fn ceiling_specialises_for_every_capacity_and_workgroup_size_the_host_uses() {
    for dmax in [8.0, 16.0, 32.0, 64.0] {
        for wg in [16.0, 32.0, 64.0, 256.0] {
            let overrides: &'static [(&'static str, f64)] =
                Box::leak(vec![("DMAX", dmax), ("WG", wg)].into_boxed_slice());
            let shader = Shader {
                overrides,
                ..CEILING
            };
            let (module, _, _) = specialise(&shader).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(workgroup_bytes(&module) as f64, 2.0 * dmax * dmax * 4.0);
        }
    }
}

#[test]
fn ceiling_params_block_is_32_bytes() {
    let (module, _) = validate_source(CEILING.path, CEILING.source).expect("valid");
    let params = module
        .global_variables
        .iter()
        .find(|(_, v)| v.name.as_deref() == Some("params"))
        .map(|(_, v)| v.ty)
        .expect("params");
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).expect("layout");
    assert_eq!(
        u64::from(layouter[params].size),
        crate::CEILING_PARAMS_BYTES
    );
}

/// The optional offline checks: the `naga` command-line validator on the WGSL, and
/// `spirv-val` on the SPIR-V naga produced. Each is skipped, with a note, where not installed.
#[test]
fn offline_tools_accept_every_shader() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("ndvm-shaders-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("temp dir");
    for shader in ALL {
        let wgsl = dir.join(shader.path);
        match run_tool("naga", &[wgsl.as_os_str()]) {
            Some(o) => assert!(
                o.status.success(),
                "{}: naga CLI: {}{}",
                shader.path,
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
            None => eprintln!("note: `naga` CLI not installed; skipped only that optional check"),
        }
        let (_, _, words) = specialise(shader).unwrap_or_else(|e| panic!("{e}"));
        let spv_path = out.join(format!("{}.spv", shader.name));
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(&spv_path, bytes).expect("write SPIR-V");
        match run_tool("spirv-val", &[spv_path.as_os_str()]) {
            Some(o) => assert!(
                o.status.success(),
                "{}: spirv-val: {}",
                shader.path,
                String::from_utf8_lossy(&o.stderr)
            ),
            None => eprintln!("note: `spirv-val` not installed; skipped only that optional check"),
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}
