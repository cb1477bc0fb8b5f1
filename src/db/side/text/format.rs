//! The formats of stored texts: the `text` column family's keys and records, and the `meta`
//! entries of the settings and of the dictionaries. ONE encoder and ONE decoder each; byte by
//! byte here and in docs/format.md ("Stored texts").
//!
//! **`meta` `text_spec`** (13 bytes): `[0]` version = 1; `[1..5]` the zstd level, i32 LE;
//! `[5..9]` the dictionary's size cap in bytes, u32 LE; `[9..13]` the raw text bytes the first
//! documents must reach before the dictionary is trained, u32 LE.
//!
//! **`meta` `text_dict` + id** (key: the 9 bytes `text_dict` then the id, u32 BE; ids start at 1):
//! `[0]` version = 1; `[1..]` the zstd dictionary as `ZDICT_trainFromBuffer` made it.
//!
//! **CF `text`**: key = the doc id, u64 BE (as in `docs`); value = one record:
//!
//! | bytes | field |
//! |---|---|
//! | 1 | kind: 1 = the text as given, 2 = a zstd frame without dictionary, 3 = a zstd frame with dictionary |
//! | LEB128 | kind 3 only: the dictionary id (1..=u32::MAX) |
//! | LEB128 | the text's length in bytes (≤ [`MAX_TEXT`]) |
//! | 4 | the low 32 bits of xxh3-64 (seed 0) of the text's bytes, LE |
//! | rest | kind 1: the text's bytes (exactly its length); kinds 2 and 3: one zstd frame holding no content size, no checksum and no dictionary id (the header has them) |
//!
//! The writer picks kind 1 when a frame would not be shorter than the text. A record decodes only
//! when its frame yields exactly the length, its bytes are UTF-8 and their checksum matches;
//! `check` reports every other record as a fault.

use std::cell::RefCell;
use std::sync::Arc;

use xxhash_rust::xxh3::xxh3_64;
use zstd::zstd_safe::{self, CCtx, CDict, CParameter, DCtx, DDict};

/// The column family of the stored texts.
pub(crate) const CF_TEXT: &str = "text";
/// The `meta` key of the settings ([`TextSpec`]).
pub(crate) const META_TEXT_SPEC: &[u8] = b"text_spec";
/// The prefix of the `meta` keys of the dictionaries.
pub(crate) const META_TEXT_DICT: &[u8] = b"text_dict";

/// The longest text stored (4 GiB − 1: its length must fit the record's bounds checks and u32s).
pub(crate) const MAX_TEXT: u64 = u32::MAX as u64;

const SPEC_V1: u8 = 1;
const DICT_V1: u8 = 1;
const KIND_PLAIN: u8 = 1;
const KIND_ZSTD: u8 = 2;
const KIND_ZSTD_DICT: u8 = 3;

/// The settings of the stored texts, fixed at creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TextSpec {
    /// zstd's compression level.
    pub(crate) level: i32,
    /// The dictionary's size cap.
    pub(crate) dict_bytes: u32,
    /// Raw text bytes of the first documents the dictionary is trained on.
    pub(crate) train_bytes: u32,
}

impl Default for TextSpec {
    /// Level 3, a 64 KiB dictionary trained on the first 4 MiB of text: the choice measured in
    /// docs/format.md ("Stored texts") with `cargo run --release --example text_store`.
    fn default() -> Self {
        TextSpec {
            level: 3,
            dict_bytes: 64 << 10,
            train_bytes: 4 << 20,
        }
    }
}

impl TextSpec {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(13);
        v.push(SPEC_V1);
        v.extend_from_slice(&self.level.to_le_bytes());
        v.extend_from_slice(&self.dict_bytes.to_le_bytes());
        v.extend_from_slice(&self.train_bytes.to_le_bytes());
        v
    }

    /// `Err` names what is wrong (the caller adds the path).
    pub(crate) fn decode(v: &[u8]) -> Result<TextSpec, String> {
        match v.first() {
            Some(&SPEC_V1) if v.len() == 13 => {
                let u = |i: usize| u32::from_le_bytes([v[i], v[i + 1], v[i + 2], v[i + 3]]);
                Ok(TextSpec {
                    level: u(1) as i32,
                    dict_bytes: u(5),
                    train_bytes: u(9),
                })
            }
            Some(&SPEC_V1) => Err(format!("text_spec is {} bytes, expected 13", v.len())),
            Some(&b) => Err(format!("unknown text_spec version {b} (this build reads 1)")),
            None => Err("text_spec is empty".into()),
        }
    }
}

/// The `meta` key of dictionary `id`.
pub(crate) fn dict_key(id: u32) -> Vec<u8> {
    let mut k = META_TEXT_DICT.to_vec();
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// The id of a `meta` dictionary key (`None`: not one).
pub(crate) fn decode_dict_key(k: &[u8]) -> Option<u32> {
    let rest = k.strip_prefix(META_TEXT_DICT)?;
    Some(u32::from_be_bytes(rest.try_into().ok()?))
}

/// One dictionary, prepared for both directions.
pub(crate) struct Dict {
    pub(crate) id: u32,
    pub(crate) bytes: Vec<u8>,
    cdict: CDict<'static>,
    ddict: DDict<'static>,
}

impl std::fmt::Debug for Dict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Dict({}, {} bytes)", self.id, self.bytes.len())
    }
}

impl Dict {
    /// Dictionary `id` from its bytes, prepared at `level`. `Err` names what is wrong.
    pub(crate) fn new(id: u32, bytes: Vec<u8>, level: i32) -> Result<Dict, String> {
        let cdict = CDict::try_create(&bytes, level).ok_or_else(|| format!("text dictionary {id} does not load"))?;
        let ddict = DDict::try_create(&bytes).ok_or_else(|| format!("text dictionary {id} does not load"))?;
        Ok(Dict { id, bytes, cdict, ddict })
    }

    /// Trains dictionary `id` (at most `cap` bytes) on `samples`; `Err` when zstd cannot (too few
    /// or too uniform samples: the texts then stay without one).
    pub(crate) fn train(id: u32, samples: &[&str], cap: u32, level: i32) -> Result<Dict, String> {
        let sizes: Vec<usize> = samples.iter().map(|s| s.len()).collect();
        let data: Vec<u8> = samples.iter().flat_map(|s| s.bytes()).collect();
        let bytes = zstd::dict::from_continuous(&data, &sizes, cap as usize).map_err(|e| format!("training the text dictionary: {e}"))?;
        Dict::new(id, bytes, level)
    }

    /// The `meta` value.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(1 + self.bytes.len());
        v.push(DICT_V1);
        v.extend_from_slice(&self.bytes);
        v
    }

    /// Dictionary `id` from its `meta` value. `Err` names what is wrong.
    pub(crate) fn decode(id: u32, v: &[u8], level: i32) -> Result<Dict, String> {
        match v.split_first() {
            Some((&DICT_V1, rest)) => Dict::new(id, rest.to_vec(), level),
            Some((&b, _)) => Err(format!("unknown text dictionary version {b} (this build reads 1)")),
            None => Err(format!("text dictionary {id} is empty")),
        }
    }
}

thread_local! {
    // One compression and one decompression context per thread (a context costs ~1 MB to make at
    // level 3; a passage takes ~10 µs to compress).
    static CCTX: RefCell<Option<CCtx<'static>>> = const { RefCell::new(None) };
    static DCTX: RefCell<Option<DCtx<'static>>> = const { RefCell::new(None) };
}

fn checksum(text: &[u8]) -> u32 {
    xxh3_64(text) as u32
}

fn put_leb(v: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        v.push((x as u8) | 0x80);
        x >>= 7;
    }
    v.push(x as u8);
}

fn get_leb(v: &[u8], at: &mut usize) -> Option<u64> {
    let mut x = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *v.get(*at)?;
        *at += 1;
        x |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(x);
        }
    }
    None
}

fn header(kind: u8, dict: Option<u32>, text: &[u8], cap: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(16 + cap);
    v.push(kind);
    if let Some(id) = dict {
        put_leb(&mut v, u64::from(id));
    }
    put_leb(&mut v, text.len() as u64);
    v.extend_from_slice(&checksum(text).to_le_bytes());
    v
}

/// The record of `text`: a zstd frame at `level` (with `dict` when given), or the text as given
/// when the frame is not shorter. `Err` names zstd's error.
pub(crate) fn encode(text: &str, dict: Option<&Dict>, level: i32) -> Result<Vec<u8>, String> {
    let t = text.as_bytes();
    let bound = zstd_safe::compress_bound(t.len());
    let (kind, id) = match dict {
        Some(d) => (KIND_ZSTD_DICT, Some(d.id)),
        None => (KIND_ZSTD, None),
    };
    let mut v = header(kind, id, t, bound);
    let head = v.len();
    let mut frame = Vec::with_capacity(bound);
    CCTX.with(|c| -> Result<(), String> {
        let mut c = c.borrow_mut();
        let cctx = c.get_or_insert_with(CCtx::create);
        let err = |e: usize| format!("zstd: {}", zstd_safe::get_error_name(e));
        cctx.set_parameter(CParameter::ContentSizeFlag(false)).map_err(err)?;
        cctx.set_parameter(CParameter::ChecksumFlag(false)).map_err(err)?;
        cctx.set_parameter(CParameter::DictIdFlag(false)).map_err(err)?;
        match dict {
            Some(d) => cctx.ref_cdict(&d.cdict).map_err(err)?,
            None => {
                cctx.disable_dictionary().map_err(err)?;
                cctx.set_parameter(CParameter::CompressionLevel(level)).map_err(err)?
            }
        };
        let r = cctx.compress2(&mut frame, t).map(|_| ()).map_err(err);
        // The context must not point at a dictionary that may be dropped before its next use.
        cctx.disable_dictionary().map_err(err)?;
        r
    })?;
    if frame.len() >= t.len() {
        return Ok(encode_plain(text));
    }
    v.truncate(head);
    v.extend_from_slice(&frame);
    Ok(v)
}

/// The record of `text` as given (kind 1).
pub(crate) fn encode_plain(text: &str) -> Vec<u8> {
    let t = text.as_bytes();
    let mut v = header(KIND_PLAIN, None, t, t.len());
    v.extend_from_slice(t);
    v
}

/// A record's header: kind, dictionary id, text length, checksum, and where the payload starts.
pub(crate) struct Header {
    pub(crate) kind: u8,
    pub(crate) dict: Option<u32>,
    pub(crate) len: u64,
    pub(crate) checksum: u32,
    pub(crate) payload: usize,
}

/// Reads a record's header. `Err` names what is wrong.
pub(crate) fn decode_header(v: &[u8]) -> Result<Header, String> {
    let kind = *v.first().ok_or("an empty text record")?;
    if !(KIND_PLAIN..=KIND_ZSTD_DICT).contains(&kind) {
        return Err(format!("unknown text record kind {kind} (this build reads 1..=3)"));
    }
    let mut at = 1;
    let dict = if kind == KIND_ZSTD_DICT {
        let id = get_leb(v, &mut at).ok_or("a text record cut inside its dictionary id")?;
        Some(u32::try_from(id).map_err(|_| format!("text record dictionary id {id} exceeds u32"))?)
    } else {
        None
    };
    let len = get_leb(v, &mut at).ok_or("a text record cut inside its length")?;
    if len > MAX_TEXT {
        return Err(format!("text record length {len} exceeds {MAX_TEXT}"));
    }
    let c = v.get(at..at + 4).ok_or("a text record cut inside its checksum")?;
    let checksum = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    Ok(Header {
        kind,
        dict,
        len,
        checksum,
        payload: at + 4,
    })
}

/// The text of a record; `dict(id)` finds a dictionary. `Err` names what is wrong (a missing
/// dictionary, a frame that does not decode or yields another length, bytes not UTF-8, a checksum
/// that does not match).
pub(crate) fn decode(v: &[u8], dict: impl Fn(u32) -> Option<Arc<Dict>>) -> Result<String, String> {
    let h = decode_header(v)?;
    let payload = &v[h.payload..];
    let bytes = match h.kind {
        KIND_PLAIN => {
            if payload.len() as u64 != h.len {
                return Err(format!(
                    "a plain text record holds {} bytes, its header says {}",
                    payload.len(),
                    h.len
                ));
            }
            payload.to_vec()
        }
        _ => {
            // A frame never expands text by more than zstd's bound: a length far beyond what the
            // payload can yield is refused before the allocation.
            if h.len > (payload.len() as u64).saturating_mul(4096) + 4096 {
                return Err(format!("a text record of {} bytes claims {} bytes of text", v.len(), h.len));
            }
            let d = match h.dict {
                Some(id) => Some(dict(id).ok_or_else(|| format!("text dictionary {id} is missing"))?),
                None => None,
            };
            let mut out = Vec::with_capacity(h.len as usize);
            DCTX.with(|c| -> Result<(), String> {
                let mut c = c.borrow_mut();
                let dctx = c.get_or_insert_with(DCtx::create);
                let r = match &d {
                    Some(d) => dctx.decompress_using_ddict(&mut out, payload, &d.ddict),
                    None => dctx.decompress(&mut out, payload),
                };
                r.map(|_| ())
                    .map_err(|e| format!("the text's zstd frame does not decode: {}", zstd_safe::get_error_name(e)))
            })?;
            if out.len() as u64 != h.len {
                return Err(format!(
                    "the text's zstd frame yields {} bytes, its header says {}",
                    out.len(),
                    h.len
                ));
            }
            out
        }
    };
    if checksum(&bytes) != h.checksum {
        return Err("the text's checksum does not match".into());
    }
    String::from_utf8(bytes).map_err(|e| format!("the text is not UTF-8 at byte {}", e.utf8_error().valid_up_to()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passage(i: usize) -> String {
        (0..120)
            .map(|j| ["the", "index", "of", "a", "library", "keeps", "text", "bytes"][(i * 7 + j * j) % 8])
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn every_kind_round_trips() {
        let samples: Vec<String> = (0..200).map(passage).collect();
        let refs: Vec<&str> = samples.iter().map(|s| s.as_str()).collect();
        let d = Arc::new(Dict::train(7, &refs, 4096, 3).unwrap());
        let find = |id| (id == 7).then(|| d.clone());
        for t in ["", "x", "é ü 漢字", &passage(3), &"abc ".repeat(5000)] {
            for dict in [None, Some(&*d)] {
                let r = encode(t, dict, 3).unwrap();
                assert_eq!(decode(&r, find).unwrap(), t);
            }
        }
        // a short text is stored as given; a long repetitive one as a frame
        assert_eq!(encode("x", None, 3).unwrap()[0], KIND_PLAIN);
        assert_eq!(encode(&passage(5), Some(&d), 3).unwrap()[0], KIND_ZSTD_DICT);
        assert_eq!(encode(&"abc ".repeat(5000), None, 3).unwrap()[0], KIND_ZSTD);
    }

    #[test]
    fn damage_is_reported() {
        let t = passage(1);
        let r = encode(&t, None, 3).unwrap();
        let none = |_| None;
        // every truncation fails; a flipped bit fails or leaves the text as it was (a flag of
        // the frame's header that changes nothing), never another text
        for cut in 0..r.len() {
            assert!(decode(&r[..cut], none).is_err(), "cut at {cut}");
        }
        let mut failed = 0;
        for i in 0..r.len() {
            for bit in 0..8 {
                let mut bad = r.clone();
                bad[i] ^= 1 << bit;
                match decode(&bad, none) {
                    Ok(s) => assert_eq!(s, t, "byte {i} bit {bit} flipped gave another text"),
                    Err(_) => failed += 1,
                }
            }
        }
        assert!(failed > r.len() * 8 * 9 / 10, "{failed} of {} flips detected", r.len() * 8);
        // a record naming a dictionary that is not there
        let samples: Vec<String> = (0..200).map(passage).collect();
        let refs: Vec<&str> = samples.iter().map(|s| s.as_str()).collect();
        let d = Dict::train(2, &refs, 4096, 3).unwrap();
        let r = encode(&t, Some(&d), 3).unwrap();
        assert!(decode(&r, none).unwrap_err().contains("dictionary 2 is missing"));
    }

    #[test]
    fn spec_and_dict_values_round_trip() {
        let s = TextSpec::default();
        assert_eq!(TextSpec::decode(&s.encode()).unwrap(), s);
        assert!(TextSpec::decode(&[2; 13]).is_err());
        assert_eq!(decode_dict_key(&dict_key(258)), Some(258));
        assert_eq!(dict_key(1), b"text_dict\0\0\0\x01");
    }
}
