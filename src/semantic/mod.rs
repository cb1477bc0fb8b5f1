//! The semantic channel (CORE's SimHash-plus-embeddings design), feature `semantic`: sentence embeddings beside the
//! text fingerprints, indexed in the background, searched by cosine ≥ β.
//!
//! Its files, what each holds and the invariants: ARCHITECTURE.md, "`src/semantic/`".
//!
//! docs/semantic.md has the design and the measurements; docs/format.md the byte layouts.

mod calibration;
mod channel;
mod config;
mod error;
mod indexer;
mod model;
pub mod queue;
mod search;
mod store;
#[doc(hidden)]
pub mod testkit;
mod vector;

pub use calibration::{
    calibrate, calibrated_min_cosine, false_rate, grid_beta, Calibration, BETA_STEP, CALIBRATIONS, HARD_NEGATIVE_TARGET,
};
pub use channel::{SemanticChannel, COLUMN_FAMILIES};
pub use config::{
    check_beta, embed_text, embed_text_owned, BackfillReport, Groups, SearchMode, SemanticConfig, SemanticOptions, TextBackfill,
};
pub use error::{Result, SemanticError, FETCH_SCRIPT};
pub use indexer::{Corpus, Indexer, IndexerOptions, IndexerState, Scan, SemanticStatus};
pub use model::{
    lower_priority, normalize, Embedder, EmbedderOptions, ModelInfo, Pooling, BACKGROUND_NICE, DEFAULT_MAX_TOKENS, FAILPOINT_EMBED,
};
pub use search::{radius_for, SemanticHit, VectorSet, MISS_TARGET};
pub use store::{
    aside_key, queued, read_aside, read_cursor, read_floor, read_spec, scan_queue, stage_aside, stage_delete, stage_dequeue, stage_floor,
    stage_queue, stage_spec, stage_unaside, stage_unqueue, Aside, CheckReport, SemanticSpec, CF_SEMANTIC, CF_SEMANTIC_QUEUE,
    DEFAULT_MIN_COSINE, META_SEMANTIC_ASIDE, META_SEMANTIC_CURSOR, META_SEMANTIC_FLOOR, META_SEMANTIC_SPEC, SPEC_VERSION,
};
pub use vector::{
    cosine_from, decode, dot_i8, encode, quantize, Hyperplanes, StoredVector, DEFAULT_CODE_SEED, DEFAULT_CODE_WORDS, VECTOR_FORMAT,
};
