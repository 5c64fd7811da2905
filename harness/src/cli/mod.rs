//! The `ndvm` subcommands.

pub mod bench_cmd;
pub mod calibrate;
pub mod cosearch;
pub mod devices;
pub mod export;
pub mod fuzz;
pub mod inputs;
pub mod output;
pub mod report;
pub mod run;
pub mod search;
pub mod table;
pub mod vm;
