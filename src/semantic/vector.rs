//! The stored vector: int8 components with one scale, plus the sign code the index searches.
//! ONE encoder ([`encode`]) and ONE decoder ([`decode`]) of the value of the `semantic` column
//! family (docs/format.md, "Semantic vectors").
//!
//! ```text
//! offset  size      field
//! 0       1         format version = 1
//! 1       2         dim, u16 little-endian (384 for all-MiniLM-L6-v2)
//! 3       1         code words W, u8 (W × 64 sign bits; 4 = 256 bits by default)
//! 4       4         scale s, f32 little-endian, finite, ≥ 0: component i ≈ s · q[i]
//! 8       dim       q[i], i8 (two's complement), q[i] = round(x[i] / s) ∈ [-127, 127],
//!                   s = max|x[i]| / 127 (all q = 0 and s = 0 for the zero vector)
//! 8+dim   8·W       sign code, W × u64 little-endian: bit j of word w is 1 iff
//!                   Σ_i r[64w+j][i] · q[i] ≥ 0 with r the ±1 hyperplanes of [`Hyperplanes`]
//! ```
//! 424 bytes per document at dim 384 and W = 4.
//!
//! Cosine is computed on the stored integers: cos(q_a, q_b) = (q_a·q_b) / (‖q_a‖‖q_b‖) — the scale
//! cancels, the dot product is exact in i32, so the exact scan and the index's re-ranking agree bit
//! for bit. **Error bound** against the float vectors x_a, x_b (unit length): each component is off by
//! at most s/2, so ‖x − s·q‖ ≤ ε = s·√dim / 2, the angle between x and q is at most asin(ε), and
//! |cos(q_a, q_b) − cos(x_a, x_b)| ≤ asin(ε_a) + asin(ε_b) ([`StoredVector::error_bound`]).
//! For all-MiniLM-L6-v2 vectors (largest component ≈ 0.1-0.25) that is ≤ 0.02-0.04 in the worst
//! case; the measured error is ~100× smaller (docs/semantic.md).

/// The format version byte.
pub const VECTOR_FORMAT: u8 = 1;
/// Header bytes before the components.
pub const HEADER: usize = 8;
/// Default sign-code length in 64-bit words (256 bits).
pub const DEFAULT_CODE_WORDS: usize = 4;
/// The default seed of the hyperplanes.
pub const DEFAULT_CODE_SEED: u64 = 0x5e3a_71c0_0d1e_5eed;

/// A decoded vector, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredVector {
    /// The scale s (x ≈ s·q).
    pub scale: f32,
    /// The int8 components.
    pub q: Vec<i8>,
    /// The sign code (W words).
    pub code: Vec<u64>,
}

impl StoredVector {
    /// Σ q², exact.
    pub fn norm2(&self) -> i32 {
        dot_i8(&self.q, &self.q)
    }

    /// The bound on this vector's share of the cosine error: asin(min(1, s·√dim/2)).
    pub fn error_bound(&self) -> f32 {
        (self.scale * (self.q.len() as f32).sqrt() / 2.0).min(1.0).asin()
    }

    /// The dequantised components s·q.
    pub fn to_f32(&self) -> Vec<f32> {
        self.q.iter().map(|&v| v as f32 * self.scale).collect()
    }

    /// The cosine of two stored vectors (0 when either is zero).
    pub fn cosine(&self, other: &StoredVector) -> f32 {
        cosine_from(dot_i8(&self.q, &other.q), self.norm2(), other.norm2())
    }
}

/// cos = dot / √(na·nb), 0 when a norm is 0. The one formula of the exact scan and the re-rank.
#[inline]
pub fn cosine_from(dot: i32, na: i32, nb: i32) -> f32 {
    if na == 0 || nb == 0 {
        return 0.0;
    }
    (dot as f64 / ((na as f64) * (nb as f64)).sqrt()) as f32
}

/// The exact i8 dot product, in i32 (|q| ≤ 127: no overflow below 133K dimensions). Written in
/// 32-lane chunks so the compiler vectorises it (pmaddwd on x86-64).
#[inline]
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 32];
    let (ca, cb) = (a.chunks_exact(32), b.chunks_exact(32));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..32 {
            acc[l] += x[l] as i32 * y[l] as i32;
        }
    }
    let tail: i32 = ra.iter().zip(rb).map(|(&x, &y)| x as i32 * y as i32).sum();
    acc.iter().sum::<i32>() + tail
}

/// The random ±1 hyperplanes of the sign code, derived from a seed (splitmix64): the same seed,
/// dimension and word count give the same planes on every platform (integers only).
#[derive(Clone, Debug)]
pub struct Hyperplanes {
    dim: usize,
    words: usize,
    /// bits × dim signs, as i8 ±1.
    planes: Vec<i8>,
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Hyperplanes {
    /// `words × 64` planes over `dim` components.
    pub fn new(seed: u64, dim: usize, words: usize) -> Hyperplanes {
        let mut state = seed;
        let mut planes = Vec::with_capacity(words * 64 * dim);
        let mut bits = 0u64;
        for k in 0..words * 64 * dim {
            if k % 64 == 0 {
                bits = splitmix64(&mut state);
            }
            planes.push(if bits >> (k % 64) & 1 == 1 { 1 } else { -1 });
        }
        Hyperplanes { dim, words, planes }
    }

    /// Code words.
    pub fn words(&self) -> usize {
        self.words
    }

    /// The sign code of `q` (exact integer arithmetic).
    pub fn code(&self, q: &[i8]) -> Vec<u64> {
        let mut code = vec![0u64; self.words];
        for (b, plane) in self.planes.chunks_exact(self.dim).enumerate() {
            if dot_i8(plane, q) >= 0 {
                code[b / 64] |= 1 << (b % 64);
            }
        }
        code
    }
}

/// Quantises a float vector (any length; unit length for the error bound) and computes its code.
pub fn quantize(x: &[f32], planes: &Hyperplanes) -> StoredVector {
    let max = x.iter().fold(0f32, |m, v| if v.is_finite() { m.max(v.abs()) } else { m });
    let scale = max / 127.0;
    let q: Vec<i8> = if scale > 0.0 {
        x.iter()
            .map(|v| {
                if v.is_finite() {
                    (v / scale).round().clamp(-127.0, 127.0) as i8
                } else {
                    0
                }
            })
            .collect()
    } else {
        vec![0; x.len()]
    };
    let code = planes.code(&q);
    StoredVector { scale, q, code }
}

/// THE encoder of a `semantic` CF value (layout above).
pub fn encode(v: &StoredVector) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + v.q.len() + 8 * v.code.len());
    out.push(VECTOR_FORMAT);
    out.extend_from_slice(&(v.q.len() as u16).to_le_bytes());
    out.push(v.code.len() as u8);
    out.extend_from_slice(&v.scale.to_le_bytes());
    out.extend(v.q.iter().map(|&c| c as u8));
    for w in &v.code {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out
}

/// THE decoder of a `semantic` CF value: checks the version, the exact length, the expected
/// dimension and code width, and the scale; anything else is an error saying what is wrong (the
/// caller names the store and the document: `Error::Corruption`).
pub fn decode(bytes: &[u8], dim: usize, words: usize) -> std::result::Result<StoredVector, String> {
    let bad = |what: String| what;
    if bytes.len() < HEADER {
        return Err(bad(format!(
            "vector record of {} bytes, shorter than its {HEADER}-byte header",
            bytes.len()
        )));
    }
    if bytes[0] != VECTOR_FORMAT {
        return Err(bad(format!("vector format {} (this build reads {VECTOR_FORMAT})", bytes[0])));
    }
    let d = u16::from_le_bytes([bytes[1], bytes[2]]) as usize;
    let w = bytes[3] as usize;
    if d != dim || w != words {
        return Err(bad(format!(
            "vector of dim {d} with {w} code words, expected dim {dim} with {words}"
        )));
    }
    let expected = HEADER + d + 8 * w;
    if bytes.len() != expected {
        return Err(bad(format!("vector record of {} bytes, expected {expected}", bytes.len())));
    }
    let scale = f32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    if !scale.is_finite() || scale < 0.0 {
        return Err(bad(format!("vector scale {scale} (expected finite and ≥ 0)")));
    }
    let q = bytes[HEADER..HEADER + d].iter().map(|&b| b as i8).collect();
    let code = bytes[HEADER + d..]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect();
    Ok(StoredVector { scale, q, code })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        let mut s = seed;
        let mut v: Vec<f32> = (0..dim)
            .map(|_| {
                // sum of 4 uniforms: roughly Gaussian, enough for a test vector
                (0..4).map(|_| (splitmix64(&mut s) >> 11) as f32 / (1u64 << 53) as f32).sum::<f32>() - 2.0
            })
            .collect();
        super::super::model::normalize(&mut v);
        v
    }

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn round_trip_and_layout() {
        let planes = Hyperplanes::new(DEFAULT_CODE_SEED, 384, 4);
        let v = quantize(&unit(1, 384), &planes);
        let bytes = encode(&v);
        assert_eq!(bytes.len(), 424);
        assert_eq!(&bytes[..4], &[1, 128, 1, 4]);
        assert_eq!(decode(&bytes, 384, 4).unwrap(), v);
        assert!(v.q.iter().any(|&c| c == 127 || c == -127), "the largest component maps to ±127");
    }

    #[test]
    fn decoder_rejects_damage() {
        let planes = Hyperplanes::new(1, 16, 1);
        let bytes = encode(&quantize(&unit(2, 16), &planes));
        assert!(decode(&bytes, 16, 1).is_ok());
        assert!(decode(&bytes[..bytes.len() - 1], 16, 1).is_err());
        assert!(decode(&bytes[..5], 16, 1).is_err());
        assert!(decode(&bytes, 17, 1).is_err());
        assert!(decode(&bytes, 16, 2).is_err());
        let mut v2 = bytes.clone();
        v2[0] = 2;
        assert!(decode(&v2, 16, 1).unwrap_err().contains("vector format 2"));
        let mut nan = bytes.clone();
        nan[4..8].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(decode(&nan, 16, 1).is_err());
    }

    /// The documented bound holds, and the typical error is far below it.
    #[test]
    fn cosine_error_within_bound() {
        let planes = Hyperplanes::new(DEFAULT_CODE_SEED, 384, 4);
        let mut worst = 0f32;
        for i in 0..200u64 {
            let (a, mut b) = (unit(2 * i, 384), unit(2 * i + 1, 384));
            // mix b toward a so the pairs span cosines from ~0 to ~1
            let t = (i % 10) as f32 / 10.0;
            b.iter_mut().zip(&a).for_each(|(y, x)| *y = t * x + (1.0 - t) * *y);
            super::super::model::normalize(&mut b);
            let (qa, qb) = (quantize(&a, &planes), quantize(&b, &planes));
            let err = (qa.cosine(&qb) - cos(&a, &b)).abs();
            assert!(err <= qa.error_bound() + qb.error_bound(), "error {err} over the bound");
            worst = worst.max(err);
        }
        assert!(worst < 0.005, "typical worst error {worst}");
    }

    /// Golden: the sign code is part of the stored format; its planes never change for a seed.
    /// (Computed independently by a Python transcription of `Hyperplanes::new` and `code`.)
    #[test]
    fn golden_sign_code() {
        let q: Vec<i8> = (0..16).map(|i| (i * 37 % 255 - 127) as i8).collect();
        assert_eq!(Hyperplanes::new(42, 16, 1).code(&q), vec![0xb902_8ca4_59ef_a1a4]);
    }

    #[test]
    fn dot_matches_naive_and_codes_are_stable() {
        let a: Vec<i8> = (0..100).map(|i| (i * 37 % 255 - 127) as i8).collect();
        let b: Vec<i8> = (0..100).map(|i| (i * 91 % 255 - 127) as i8).collect();
        let naive: i32 = a.iter().zip(&b).map(|(&x, &y)| x as i32 * y as i32).sum();
        assert_eq!(dot_i8(&a, &b), naive);
        let p1 = Hyperplanes::new(9, 100, 2);
        let p2 = Hyperplanes::new(9, 100, 2);
        assert_eq!(p1.code(&a), p2.code(&a));
        assert_ne!(Hyperplanes::new(10, 100, 2).code(&a), p1.code(&a));
        // the zero vector: scale 0, cosine 0 with anything
        let z = quantize(&[0.0; 100], &p1);
        assert_eq!(z.scale, 0.0);
        assert_eq!(z.cosine(&quantize(&[1.0; 100], &p1)), 0.0);
    }
}
