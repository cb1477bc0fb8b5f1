//! The engine's pieces that `fpdb.spark` runs inside Spark tasks: fingerprints of a batch of texts,
//! the candidate pairs of one (table, block value) bucket, and exact Jaccard of encoded shingle sets.
//! Each is a thin call into the library (`Fingerprinter`, `Layout::plan`/`seen_earlier`,
//! `for_each_within`, `jaccard`); Python never shingles or compares.
//!
//! Candidates use the layout of `k + 1` equal blocks ([`Layout::new`]): a pair within Hamming
//! distance `k` agrees exactly on at least one block (pigeonhole), so one shuffle key per
//! (table, block value) with no probe replication finds every pair, and the probe plan of that
//! layout has radius 0 on every table. A pair is emitted only from the first table of the plan in
//! which it qualifies (`Layout::seen_earlier`), by its smaller id: each pair once.
//!
//! ## The shingle-set column (one encoder, one decoder: [`encode_set`], [`decode_set`])
//!
//! A document's shingle set travels through the shuffle as one binary value: the set's `u32`
//! shingle hashes (the low 32 bits the engine stores, sorted ascending, no repeats), each as 4
//! bytes little-endian, back to back, no header: `len = 4 × |set|`. An empty text is 0 bytes.
//! A value whose length is not a multiple of 4, or whose hashes are not strictly ascending, is
//! rejected with `InvalidInputError` naming the row and the byte offset.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

// The library items this file needs beyond `crate::api` (named here, in one place).
use fpdb::fingerprint::similarity::{for_each_within, jaccard};
use fpdb::{Fingerprinter, Layout};

use crate::api::Error;
use crate::convert;
use crate::errors;
use crate::types::spec_arg;

/// Largest `k` the candidate layout of `k + 1` blocks supports.
const MAX_SCALE_K: u32 = 31;

fn layout_for(py: Python<'_>, k: u32) -> PyResult<Layout> {
    if k > MAX_SCALE_K {
        return Err(errors::invalid_option(
            py,
            "k",
            format!("the distributed all-pairs cuts fingerprints into k+1 blocks: k must be within 0..={MAX_SCALE_K}, got {k}"),
        ));
    }
    Layout::new(k + 1).ok_or_else(|| errors::invalid_option(py, "k", format!("no layout of {} blocks", k + 1)))
}

/// Encodes a sorted shingle set as the binary column value (4 bytes little-endian per hash).
fn encode_set(set: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(set.len() * 4);
    for h in set {
        out.extend_from_slice(&h.to_le_bytes());
    }
    out
}

/// Decodes a binary column value into `out` (cleared first); `row` names the value in errors.
fn decode_set(bytes: &[u8], row: usize, out: &mut Vec<u32>) -> Result<(), Error> {
    out.clear();
    if !bytes.len().is_multiple_of(4) {
        return Err(Error::InvalidInput {
            key: None,
            message: format!(
                "shingle set of row {row}: {} bytes is not a multiple of 4 (4 bytes little-endian per hash); \
                 pass the `shingles` column that fpdb.spark wrote",
                bytes.len()
            ),
        });
    }
    for (i, c) in bytes.chunks_exact(4).enumerate() {
        let h = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        if out.last().is_some_and(|&p| p >= h) {
            return Err(Error::InvalidInput {
                key: None,
                message: format!(
                    "shingle set of row {row}: hash at byte {} is not above the one before it (sets are sorted, \
                     without repeats); the column was not written by fpdb.spark",
                    i * 4
                ),
            });
        }
        out.push(h);
    }
    Ok(())
}

/// fingerprint_batch(texts, spec=None) -> (simhashes, shingle_sets)
///
/// Fingerprints of many texts under `spec`: the SimHashes as signed 64-bit integers (the same bits
/// as `Fingerprint.simhash`, for engines without unsigned longs) and the shingle sets encoded as
/// the binary column value (4 bytes little-endian per hash, ascending). The GIL is released while
/// hashing.
#[pyfunction]
#[pyo3(signature = (texts, spec = None))]
fn fingerprint_batch<'py>(
    py: Python<'py>,
    texts: Vec<Bound<'py, PyAny>>,
    spec: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Vec<i64>, Vec<Bound<'py, PyBytes>>)> {
    let spec = spec_arg(py, spec)?;
    let owned = texts
        .iter()
        .enumerate()
        .map(|(i, t)| convert::text_arg(py, t, &format!("texts[{i}]"), None))
        .collect::<PyResult<Vec<String>>>()?;
    let (fps, sets) = py.detach(|| {
        let mut fper = Fingerprinter::new(spec);
        let mut fps = Vec::with_capacity(owned.len());
        let mut sets = Vec::with_capacity(owned.len());
        for t in &owned {
            let f = fper.fingerprint(t);
            fps.push(f.simhash as i64);
            sets.push(encode_set(&f.shingles));
        }
        (fps, sets)
    });
    Ok((fps, sets.iter().map(|s| PyBytes::new(py, s)).collect()))
}

/// candidate_blocks(k) -> list[(start, width)]
///
/// The blocks of the candidate layout for distance `k` (k + 1 equal blocks, numbered from the most
/// significant bit): table `t`'s shuffle key of a SimHash `f` is `(t, (f >> (64 - start - width)) &
/// (2**width - 1))`.
#[pyfunction]
fn candidate_blocks(py: Python<'_>, k: u32) -> PyResult<Vec<(u32, u32)>> {
    Ok(layout_for(py, k)?.blocks().iter().map(|b| (b.start, b.width)).collect())
}

/// bucket_pairs(table, k, ids, simhashes, other_ids=None, other_simhashes=None) -> (a, b, hamming)
///
/// The pairs of one bucket of table `table` (documents sharing that table's block value) within
/// distance `k` that qualify first in this table (pairs whose block values differ are not this
/// table's and are left out), as three columns with `a < b` by id. Without
/// `other_*`: every pair inside `ids`; with them: every pair of one document of each side (two
/// sub-buckets of a split bucket). SimHashes are signed 64-bit (as `fingerprint_batch` returns).
#[pyfunction]
#[pyo3(signature = (table, k, ids, simhashes, other_ids = None, other_simhashes = None))]
fn bucket_pairs(
    py: Python<'_>,
    table: usize,
    k: u32,
    ids: Vec<i64>,
    simhashes: Vec<i64>,
    other_ids: Option<Vec<i64>>,
    other_simhashes: Option<Vec<i64>>,
) -> PyResult<(Vec<i64>, Vec<i64>, Vec<u32>)> {
    let layout = layout_for(py, k)?;
    if table >= layout.tables() as usize {
        return Err(errors::invalid_option(
            py,
            "table",
            format!("the layout for k = {k} has {} tables, got table {table}", layout.tables()),
        ));
    }
    let lens = |n: &str, a: usize, b: usize| {
        if a == b {
            Ok(())
        } else {
            Err(errors::invalid_option(py, "simhashes", format!("{n}: {a} ids but {b} simhashes")))
        }
    };
    lens("ids", ids.len(), simhashes.len())?;
    let cross = match (other_ids, other_simhashes) {
        (Some(i), Some(f)) => {
            lens("other_ids", i.len(), f.len())?;
            Some((i, f))
        }
        (None, None) => None,
        _ => {
            return Err(errors::invalid_option(
                py,
                "other_ids",
                "other_ids and other_simhashes go together".to_string(),
            ))
        }
    };
    Ok(py.detach(|| {
        let plan = layout.plan(k);
        let pos = plan.iter().position(|&(t, _)| t == table).unwrap_or(plan.len());
        let fps: Vec<u64> = simhashes.iter().map(|&f| f as u64).collect();
        let (oids, ofps): (&[i64], Vec<u64>) = match &cross {
            Some((i, f)) => (i, f.iter().map(|&x| x as u64).collect()),
            None => (&ids, fps.clone()),
        };
        let (mut a, mut b, mut d) = (Vec::new(), Vec::new(), Vec::new());
        for (n, (&x, &xi)) in fps.iter().zip(&ids).enumerate() {
            // Inside one bucket each unordered pair is visited once (j > n).
            let (from, pool) = if cross.is_some() {
                (0, &ofps[..])
            } else {
                (n + 1, &ofps[(n + 1).min(ofps.len())..])
            };
            for_each_within(pool, x, k, |j, dist| {
                let (yi, y) = (oids[from + j], pool[j]);
                // In this table's bucket (the caller grouped by its block value), and first here.
                if yi != xi && layout.block(table, x) == layout.block(table, y) && !layout.seen_earlier(&plan, pos, y, x) {
                    a.push(xi.min(yi));
                    b.push(xi.max(yi));
                    d.push(dist);
                }
            });
        }
        (a, b, d)
    }))
}

/// jaccard_batch(sets_a, sets_b) -> list[float]
///
/// Exact Jaccard similarity of each pair of encoded shingle sets (the binary column of
/// `fingerprint_batch`), computed by the engine's own routine: the same value `fpdb pairs` prints.
#[pyfunction]
fn jaccard_batch(py: Python<'_>, sets_a: Vec<Vec<u8>>, sets_b: Vec<Vec<u8>>) -> PyResult<Vec<f64>> {
    if sets_a.len() != sets_b.len() {
        return Err(errors::invalid_option(
            py,
            "sets_b",
            format!("{} sets on the left but {} on the right", sets_a.len(), sets_b.len()),
        ));
    }
    py.detach(|| {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        sets_a
            .iter()
            .zip(&sets_b)
            .enumerate()
            .map(|(row, (a, b))| {
                decode_set(a, row, &mut x)?;
                decode_set(b, row, &mut y)?;
                Ok(jaccard(&x, &y).jaccard)
            })
            .collect::<Result<Vec<f64>, Error>>()
    })
    .map_err(|e| errors::to_py(py, e))
}

/// Registers the functions of this file.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fingerprint_batch, m)?)?;
    m.add_function(wrap_pyfunction!(candidate_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(bucket_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(jaccard_batch, m)?)?;
    Ok(())
}
