//! The search (`ndvm search`): programs and their constants discovered from a user's data.
//!
//! One loop ([`engine`]): propose (the built-in evolutionary proposer's islands, and an outside
//! proposer's candidates) -> simplify and deduplicate (a skeleton seen before reuses its decode
//! and fitted constants) -> fit the new candidates over the cores, the data rows as lanes ->
//! score -> update the islands and the Pareto front -> answer the outside proposer. The built-in
//! proposer's programs are expression trees over the inputs, constants and operators, with an
//! `iterate` form (a state updated a per-row number of times) and `let`-shared subexpressions.
//!
//! | file | what |
//! | --- | --- |
//! | `options.rs` | every setting and its default |
//! | `dataset.rs` | the CSV as an `ndarray` table: inputs, target, test sets, clear errors |
//! | `ops.rs` | the operators of `--ops` |
//! | `expr.rs` | the genome: trees, `iterate`, `let`, paths and scopes |
//! | `emit.rs` | a genome as a program of the object language, and as infix math |
//! | `constraints.rs` | each operator's complexity, argument sizes and nesting limits |
//! | `units.rs` | dimensional analysis: the inputs' and target's SI units, balanced or not |
//! | `simplify.rs` | constant folding, cancellations, flattened chains |
//! | `generate.rs` | the grammar and random programs of it |
//! | `mutate.rs` | the variation operators and their weights |
//! | `population.rs` | an island: tournament selection, age-regularised replacement |
//! | `front.rs` | the hall of fame and its Pareto front |
//! | `candidate.rs` | a candidate and its fit (Levenberg-Marquardt, restarts as lane groups) |
//! | `convert.rs` | programs given as text read as genomes; complexity of any program |
//! | `cache.rs` | the skeleton cache |
//! | `engine.rs` | the search loop, migration, checkpoints |
//! | `batch.rs` | one generation: every island's batch, planned, fitted and taken in |
//! | `shard.rs` | one island's state: population, hall of fame, cache, counters |
//! | `feed.rs` | the outside proposer as the loop sees it: its lines and their answers |
//! | `fnv.rs` | FNV-1a over 128 bits: data fingerprints, cache keys, seeds drawn from content |
//! | `finish.rs` | test scores, the final pruning and refit of the front |
//! | `proposer.rs` | the outside proposer's process and its JSON-lines protocol |
//! | `prune.rs` | a front member's top-level terms, one at a time left out |
//! | `select.rs` | the model chosen from the front (`--select`), and `--early-stop` |
//! | `report.rs` | the summary and the front as JSON, table, CSV and SVG |

mod batch;
pub mod cache;
pub mod candidate;
pub mod constraints;
pub mod convert;
pub mod dataset;
pub mod emit;
pub mod engine;
pub mod expr;
pub mod feed;
mod finish;
pub mod fnv;
pub mod front;
pub mod generate;
pub mod mutate;
pub mod ops;
pub mod options;
pub mod population;
pub mod proposer;
pub mod prune;
pub mod report;
pub mod select;
pub mod shard;
pub mod simplify;
pub mod units;
