//! The engine's pieces that `fpdb.spark` runs inside Spark tasks: fingerprints of a batch of texts,
//! the candidate pairs of one (table, block value) bucket, and exact Jaccard of encoded shingle sets.
//! Each is a thin call into the library (`Fingerprinter`, `Layout::plan`/`seen_earlier`,
//! `for_each_within`, `jaccard`); Python never shingles or compares.
//!
//! Exact candidates use the layout of `k + 1` near-equal blocks ([`Blocks`]): a pair within Hamming
//! distance `k` agrees exactly on at least one block (pigeonhole), so one shuffle key per
//! (table, block value) with no probe replication finds every pair. A pair is emitted only from
//! the first table on which it agrees, by its smaller id: each pair once.
//!
//! Input rows are judged as `fpdb ingest` judges them ([`prepare_batch`]): a key the library's
//! `validate_key` refuses, or a text with no shingles under the spec, is rejected and takes no id.
//!
//! ## The shingle-set column (one encoder, one decoder: [`encode_set`], [`decode_set`])
//!
//! A document's shingle set travels through the shuffle as one binary value: the set's `u32`
//! shingle hashes (the low 32 bits the engine stores, sorted ascending, no repeats), each as 4
//! bytes little-endian, back to back, no header: `len = 4 × |set|`. An empty text is 0 bytes.
//! A value whose length is not a multiple of 4, or whose hashes are not strictly ascending, is
//! rejected with `InvalidInputError` naming the row and the byte offset.
//!
//! ## MinHash band keys ([`band_keys`])
//!
//! The flat-cost candidate scheme: `bands × rows` min-hashes of a document's shingle set, hash
//! `i` being `h_i(x) = (a_i · x + c_i) mod 2^64 >> 32` (multiply-add-shift over the 32-bit shingle
//! hash `x`; `a_i` odd and `c_i` drawn by splitmix64 from `seed`, `a` first), and one 64-bit key
//! per band: splitmix64 folded over the band's number and its `rows` minima. Two documents share a
//! band key when (up to a 2^-64 collision, which verification removes) their minima agree on every
//! row of the band: probability `J^rows` per band for shingle sets of Jaccard `J`. The keys live
//! only inside a job (never stored); [`band_keys`] is their one encoder.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

// The library items this file needs beyond `crate::api` (named here, in one place).
use fpdb::fingerprint::similarity::{for_each_within, jaccard};
use fpdb::Fingerprinter;

use crate::api::{EngineHit, Error};
use crate::convert;
use crate::errors;
use crate::types::{spec_arg, Hit};

/// Largest `k` of the distributed all-pairs: `MAX_DISTANCE` of a database (k + 1 = 33 blocks).
const MAX_SCALE_K: u32 = fpdb::MAX_DISTANCE;

/// The candidate layout for distance `k`: `k + 1` blocks of the 64-bit SimHash, widths as equal as
/// they go (the wider ones first, as `Layout::new`), numbered from the most significant bit. A pair
/// within distance `k` agrees exactly on at least one block (pigeonhole), and is emitted from the
/// first block on which it agrees. For `k <= 31` these are the blocks of `Layout::new(k + 1)`,
/// whose plan for `k` has radius 0 on every table; `k = 32` needs 33 blocks (31 of 2 bits, 2 of 1),
/// more tables than an index has, so the layout is this file's own.
struct Blocks(Vec<(u32, u32)>);

impl Blocks {
    fn for_k(py: Python<'_>, k: u32) -> PyResult<Blocks> {
        if k > MAX_SCALE_K {
            return Err(errors::invalid_option(
                py,
                "k",
                format!("the distributed all-pairs cuts fingerprints into k+1 blocks: k must be within 0..={MAX_SCALE_K}, got {k}"),
            ));
        }
        let m = k + 1;
        let (base, extra) = (64 / m, 64 % m);
        let mut start = 0;
        Ok(Blocks(
            (0..m)
                .map(|i| {
                    let w = base + u32::from(i < extra);
                    let b = (start, w);
                    start += w;
                    b
                })
                .collect(),
        ))
    }

    fn value(&self, t: usize, fp: u64) -> u64 {
        let (start, w) = self.0[t];
        let v = fp >> (64 - start - w);
        if w == 64 {
            v
        } else {
            v & ((1u64 << w) - 1)
        }
    }

    /// Whether `x` and `y` agree on a block before `t` (the pair belongs to that table).
    fn seen_earlier(&self, t: usize, x: u64, y: u64) -> bool {
        (0..t).any(|j| self.value(j, x) == self.value(j, y))
    }
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

/// One string column of an Arrow batch, as its buffers: `(offset, length, validity, offsets, data,
/// large)` (`validity` None when there are no nulls; `large`: 64-bit offsets). The Python side
/// passes `pyarrow` buffers as bytes, so no row becomes a Python object.
struct StrCol<'a> {
    offset: usize,
    len: usize,
    validity: Option<&'a [u8]>,
    offsets: &'a [u8],
    data: &'a [u8],
    large: bool,
}

type StrColArg<'py> = (
    usize,
    usize,
    Option<Bound<'py, PyBytes>>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    bool,
);

impl<'a> StrCol<'a> {
    fn new(py: Python<'_>, name: &'static str, a: &'a StrColArg<'_>) -> PyResult<StrCol<'a>> {
        let c = StrCol {
            offset: a.0,
            len: a.1,
            validity: a.2.as_ref().map(|v| v.as_bytes()),
            offsets: a.3.as_bytes(),
            data: a.4.as_bytes(),
            large: a.5,
        };
        let w = if c.large { 8 } else { 4 };
        if c.offsets.len() < (c.offset + c.len + 1) * w || c.validity.is_some_and(|v| v.len() * 8 < c.offset + c.len) {
            return Err(errors::invalid_option(
                py,
                name,
                format!(
                    "{} offset bytes for rows {}..{}: not an Arrow string column",
                    c.offsets.len(),
                    c.offset,
                    c.offset + c.len
                ),
            ));
        }
        Ok(c)
    }

    fn off(&self, i: usize) -> usize {
        if self.large {
            let b = &self.offsets[i * 8..i * 8 + 8];
            u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as usize
        } else {
            let b = &self.offsets[i * 4..i * 4 + 4];
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize
        }
    }

    /// Row `i`'s bytes (a binary column without nulls: the shingle sets).
    fn raw(&self, i: usize) -> Result<&'a [u8], Error> {
        let j = self.offset + i;
        let (s, e) = (self.off(j), self.off(j + 1));
        self.data.get(s..e).ok_or_else(|| Error::InvalidInput {
            key: None,
            message: format!(
                "shingle set of row {i}: bytes {s}..{e} outside the column's data ({} bytes)",
                self.data.len()
            ),
        })
    }

    /// Row `i`: None for a null, Err for bytes that are not UTF-8 or lie outside the data.
    fn get(&self, i: usize) -> Result<Option<&'a str>, String> {
        let j = self.offset + i;
        if self.validity.is_some_and(|v| v[j / 8] & (1 << (j % 8)) == 0) {
            return Ok(None);
        }
        let (a, b) = (self.off(j), self.off(j + 1));
        let bytes = self
            .data
            .get(a..b)
            .ok_or_else(|| format!("row {i}: bytes {a}..{b} outside the data ({} bytes)", self.data.len()))?;
        std::str::from_utf8(bytes)
            .map(Some)
            .map_err(|e| format!("row {i}: not UTF-8 ({e})"))
    }
}

/// Why a row was rejected (the `status` byte of [`prepare_batch`]).
const ROW_OK: u8 = 0;
const ROW_NULL: u8 = 1;
const ROW_BAD_KEY: u8 = 2;
const ROW_NO_WORDS: u8 = 3;

/// splitmix64: the mixer of the MinHash coefficients and band keys.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The MinHash coefficients `(a_i, c_i)` of `n` hashes under `seed` (see the module doc).
fn minhash_coefficients(n: usize, seed: u64) -> (Vec<u64>, Vec<u64>) {
    let mut s = seed;
    let mut next = || {
        s = mix(s);
        s
    };
    let mut a = Vec::with_capacity(n);
    let mut c = Vec::with_capacity(n);
    for _ in 0..n {
        a.push(next() | 1);
        c.push(next());
    }
    (a, c)
}

/// The band keys of one shingle set into `out` (`bands` keys appended): the encoder of the
/// module doc's MinHash band keys. `mins` is scratch of `bands × rows` entries.
fn band_keys(set: &[u32], bands: usize, rows: usize, seed: u64, coef: &(Vec<u64>, Vec<u64>), mins: &mut Vec<u32>, out: &mut Vec<i64>) {
    mins.clear();
    mins.resize(bands * rows, u32::MAX);
    let (a, c) = coef;
    for &x in set {
        let x = u64::from(x);
        for ((m, &ai), &ci) in mins.iter_mut().zip(a).zip(c) {
            let h = (ai.wrapping_mul(x).wrapping_add(ci) >> 32) as u32;
            if h < *m {
                *m = h;
            }
        }
    }
    for b in 0..bands {
        let mut k = mix(seed ^ (b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for &m in &mins[b * rows..(b + 1) * rows] {
            k = mix(k ^ u64::from(m));
        }
        out.push(k as i64);
    }
}

/// prepare_batch(keys, texts, spec=None, bands=0, rows=0, seed=0) -> (status, simhashes, set_offsets, set_data, band_keys)
///
/// One Arrow batch of documents judged and fingerprinted as `fpdb ingest` does. `keys` and `texts`
/// are string columns as buffers (see `StrCol`). Per row, `status` (one byte): 0 accepted, 1 key or
/// text null, 2 key refused by the library (empty, over `MAX_KEY_BYTES`), 3 text with no shingles
/// under the spec; rejected rows take no id and have no other value. For the accepted rows, in
/// order: `simhashes` (signed 64-bit little-endian, the bits of `Fingerprint.simhash`), the
/// shingle-set column as Arrow binary buffers (`set_offsets`: 32-bit little-endian, one more than
/// the rows; `set_data`: the encoded sets back to back) and `bands` MinHash band keys per row
/// (signed 64-bit little-endian) when `bands > 0`. The GIL is released while hashing.
#[pyfunction]
#[pyo3(signature = (keys, texts, spec = None, bands = 0, rows = 0, seed = 0))]
#[allow(clippy::type_complexity)]
fn prepare_batch<'py>(
    py: Python<'py>,
    keys: StrColArg<'py>,
    texts: StrColArg<'py>,
    spec: Option<&Bound<'py, PyAny>>,
    bands: usize,
    rows: usize,
    seed: u64,
) -> PyResult<(
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
)> {
    let spec = spec_arg(py, spec)?;
    let (kc, tc) = (StrCol::new(py, "keys", &keys)?, StrCol::new(py, "texts", &texts)?);
    if kc.len != tc.len {
        return Err(errors::invalid_option(py, "texts", format!("{} keys but {} texts", kc.len, tc.len)));
    }
    if bands > 0 && rows == 0 {
        return Err(errors::invalid_option(py, "rows", "bands need at least one row each".to_string()));
    }
    let out = py.detach(|| {
        let mut fper = Fingerprinter::new(spec);
        let coef = minhash_coefficients(bands * rows, seed);
        let n = kc.len;
        let (mut status, mut fps, mut offs, mut data, mut bk) = (Vec::with_capacity(n), Vec::new(), vec![0u8; 4], Vec::new(), Vec::new());
        let mut mins = Vec::new();
        for i in 0..n {
            let (key, text) = match (kc.get(i)?, tc.get(i)?) {
                (Some(k), Some(t)) => (k, t),
                _ => {
                    status.push(ROW_NULL);
                    continue;
                }
            };
            if fpdb::validate_key(key).is_err() {
                status.push(ROW_BAD_KEY);
                continue;
            }
            let f = fper.fingerprint(text);
            if f.shingles.is_empty() {
                status.push(ROW_NO_WORDS);
                continue;
            }
            status.push(ROW_OK);
            fps.extend_from_slice(&(f.simhash as i64).to_le_bytes());
            data.extend_from_slice(&encode_set(&f.shingles));
            let end = u32::try_from(data.len()).map_err(|_| "a batch's shingle sets passed 4 GiB; use smaller batches".to_string())?;
            offs.extend_from_slice(&end.to_le_bytes());
            if bands > 0 {
                band_keys(&f.shingles, bands, rows, seed, &coef, &mut mins, &mut bk);
            }
        }
        let bk: Vec<u8> = bk.iter().flat_map(|k| k.to_le_bytes()).collect();
        Ok::<_, String>((status, fps, offs, data, bk))
    });
    let (status, fps, offs, data, bk) = out.map_err(|m| errors::to_py(py, Error::InvalidInput { key: None, message: m }))?;
    Ok((
        PyBytes::new(py, &status),
        PyBytes::new(py, &fps),
        PyBytes::new(py, &offs),
        PyBytes::new(py, &data),
        PyBytes::new(py, &bk),
    ))
}

/// jaccard_buffers(n, a, b) -> bytes
///
/// Exact Jaccard of `n` pairs of encoded shingle sets given as Arrow binary columns (`(offset,
/// validity, offsets, data)` each; 32-bit offsets), as `n` float64 little-endian: the engine's
/// `jaccard`, the value `fpdb pairs` prints. The GIL is released while comparing.
#[pyfunction]
fn jaccard_buffers<'py>(py: Python<'py>, n: usize, a: StrColArg<'py>, b: StrColArg<'py>) -> PyResult<Bound<'py, PyBytes>> {
    let (ca, cb) = (StrCol::new(py, "a", &a)?, StrCol::new(py, "b", &b)?);
    if ca.len < n || cb.len < n {
        return Err(errors::invalid_option(
            py,
            "n",
            format!("{n} pairs but columns of {} and {} rows", ca.len, cb.len),
        ));
    }
    let out = py.detach(|| {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let mut out = Vec::with_capacity(n * 8);
        for i in 0..n {
            decode_set(ca.raw(i)?, i, &mut x)?;
            decode_set(cb.raw(i)?, i, &mut y)?;
            out.extend_from_slice(&jaccard(&x, &y).jaccard.to_le_bytes());
        }
        Ok::<_, Error>(out)
    });
    Ok(PyBytes::new(py, &out.map_err(|e| errors::to_py(py, e))?))
}

/// minhash_keys(sets, bands, rows, seed=0) -> list[list[int]]
///
/// The MinHash band keys (module doc) of each encoded shingle set: what `prepare_batch` computes,
/// for tests and for drivers outside Spark.
#[pyfunction]
#[pyo3(signature = (sets, bands, rows, seed = 0))]
fn minhash_keys(py: Python<'_>, sets: Vec<Vec<u8>>, bands: usize, rows: usize, seed: u64) -> PyResult<Vec<Vec<i64>>> {
    py.detach(|| {
        let coef = minhash_coefficients(bands * rows, seed);
        let (mut x, mut mins) = (Vec::new(), Vec::new());
        sets.iter()
            .enumerate()
            .map(|(row, s)| {
                decode_set(s, row, &mut x)?;
                let mut out = Vec::with_capacity(bands);
                band_keys(&x, bands, rows, seed, &coef, &mut mins, &mut out);
                Ok(out)
            })
            .collect::<Result<Vec<_>, Error>>()
    })
    .map_err(|e| errors::to_py(py, e))
}

/// hit_from_dict(d) -> Hit
///
/// A `Hit` from the dict of `Hit.to_dict()` (with `id` set by the caller: a cluster's global id):
/// how `fpdb.ray` hands the binding's own class back from a shard actor, whose answers cross
/// processes as dicts.
#[pyfunction]
fn hit_from_dict(py: Python<'_>, d: &Bound<'_, PyDict>) -> PyResult<Hit> {
    let json = py.import("json")?.call_method1("dumps", (d,))?.extract::<String>()?;
    serde_json::from_str::<EngineHit>(&json)
        .map(Hit::from)
        .map_err(|e| errors::invalid_option(py, "d", format!("not the dict of Hit.to_dict(): {e}")))
}

/// candidate_blocks(k) -> list[(start, width)]
///
/// The blocks of the candidate layout for distance `k` (k + 1 equal blocks, numbered from the most
/// significant bit): table `t`'s shuffle key of a SimHash `f` is `(t, (f >> (64 - start - width)) &
/// (2**width - 1))`.
#[pyfunction]
fn candidate_blocks(py: Python<'_>, k: u32) -> PyResult<Vec<(u32, u32)>> {
    Ok(Blocks::for_k(py, k)?.0)
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
    let layout = Blocks::for_k(py, k)?;
    if table >= layout.0.len() {
        return Err(errors::invalid_option(
            py,
            "table",
            format!("the layout for k = {k} has {} tables, got table {table}", layout.0.len()),
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
                if yi != xi && layout.value(table, x) == layout.value(table, y) && !layout.seen_earlier(table, y, x) {
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
    m.add_function(wrap_pyfunction!(prepare_batch, m)?)?;
    m.add_function(wrap_pyfunction!(jaccard_buffers, m)?)?;
    m.add_function(wrap_pyfunction!(minhash_keys, m)?)?;
    m.add_function(wrap_pyfunction!(hit_from_dict, m)?)?;
    Ok(())
}
