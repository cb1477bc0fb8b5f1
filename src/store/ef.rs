//! Elias–Fano coding of a sorted set of distinct u32 over the universe 2^32: the payload of a shingle
//! record in segment format version 2 (`super::segment`). Exact: [`decode`] of [`encode`] is the set.
//!
//! For `n ≥ 1` elements the low-bit width is `l = 32 − ⌈log2 n⌉` (`n = 1`: `l = 32`), i.e.
//! `⌊log2(2^32 / n)⌋` rounded down to what keeps the high parts within `2^(32−l) ≤ 2n − 1`
//! buckets. Element `i` (0-based) of value `x` has low bits `x mod 2^l` and high bits `x >> l`.
//! The payload is `W_low + W_high` little-endian u64 words (no header, no padding):
//!
//! ```text
//! words 0 .. W_low            the low bits: a bit stream, bit k = bit (k mod 64) of word k / 64;
//!                             element i's low bits are stream bits i·l .. i·l + l (least
//!                             significant first). W_low = ⌈n·l / 64⌉; unused high bits are 0.
//! words W_low .. +W_high      the high bits in unary: stream bit (x_i >> l) + i is 1 for every i,
//!                             every other bit 0. W_high = ⌈(n + 2^(32−l)) / 64⌉.
//! ```
//!
//! `n = 0`: no words. So the payload's length is a function of `n` alone ([`payload_len`]): a
//! 3,360-shingle set takes 9,336 bytes instead of 13,440 as u32s; sets of one or two elements take
//! 16 bytes instead of 4 or 8. [`decode`] refuses a payload that is not exactly one encoded set:
//! a wrong length, a set bit of the high part past the n-th, fewer than n, a low-part bit past
//! `n·l`, or a high part that does not fit `32 − l` bits (the values then would not be u32).

/// Low-bit width for `n` elements.
#[inline]
fn low_bits(n: u64) -> u32 {
    if n <= 1 {
        32
    } else {
        // ⌈log2 n⌉ for n ≥ 2, at most 32 (n ≤ u32::MAX + 1 is all a u32 set can hold).
        let ceil_log2 = 64 - (n - 1).leading_zeros();
        32u32.saturating_sub(ceil_log2)
    }
}

/// `(W_low, W_high)`: the words of each part for `n` elements.
#[inline]
fn words(n: u64) -> (u64, u64) {
    if n == 0 {
        return (0, 0);
    }
    let l = u64::from(low_bits(n));
    ((n * l).div_ceil(64), (n + (1u64 << (32 - l))).div_ceil(64))
}

/// Bytes of the payload of `n` elements.
pub fn payload_len(n: u32) -> u64 {
    let (lo, hi) = words(u64::from(n));
    8 * (lo + hi)
}

/// Appends the payload of `set` (sorted, distinct) to `out`: [`payload_len`] bytes.
pub fn encode(set: &[u32], out: &mut Vec<u8>) {
    let n = set.len() as u64;
    let (lo, hi) = words(n);
    let l = low_bits(n);
    let mut w = vec![0u64; (lo + hi) as usize];
    let (low, high) = w.split_at_mut(lo as usize);
    let mask = if l == 64 { u64::MAX } else { (1u64 << l) - 1 };
    for (i, &x) in set.iter().enumerate() {
        let x = u64::from(x);
        if l > 0 {
            let bit = i as u64 * u64::from(l);
            let (k, off) = ((bit / 64) as usize, bit % 64);
            low[k] |= (x & mask) << off;
            if off + u64::from(l) > 64 {
                low[k + 1] |= (x & mask) >> (64 - off);
            }
        }
        let pos = (x >> l) + i as u64;
        high[(pos / 64) as usize] |= 1u64 << (pos % 64);
    }
    out.reserve(w.len() * 8);
    for x in w {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

/// Decodes the payload of `n` elements into `out` (cleared first). The error says what is wrong.
pub fn decode(payload: &[u8], n: u32, out: &mut Vec<u32>) -> Result<(), String> {
    let n64 = u64::from(n);
    let need = payload_len(n);
    if payload.len() as u64 != need {
        return Err(format!(
            "an Elias-Fano payload of {n} shingles is {need} bytes, found {}",
            payload.len()
        ));
    }
    out.clear();
    if n == 0 {
        return Ok(());
    }
    let (lo, _) = words(n64);
    let l = low_bits(n64);
    // The words; borrowed when aligned on a little-endian host (a mapped record always is).
    let owned: Vec<u64>;
    let w: &[u64] = match bytemuck::try_cast_slice::<u8, u64>(payload) {
        Ok(w) if cfg!(target_endian = "little") => w,
        _ => {
            owned = payload
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                .collect();
            &owned
        }
    };
    let (low, high) = w.split_at(lo as usize);
    check_low_padding(low, n64, l)?;
    out.reserve(n as usize);
    let mask = (1u64 << l) - 1;
    let high_limit = 1u64 << (32 - l);
    let mut i = 0u64;
    for (k, &word) in high.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            if i == n64 {
                return Err(format!("the high part has more than {n} set bits"));
            }
            let pos = k as u64 * 64 + u64::from(bits.trailing_zeros());
            bits &= bits - 1;
            let h = pos - i;
            if h >= high_limit {
                return Err(format!("element {i}'s high bits {h} do not fit {} bits", 32 - l));
            }
            let lowv = if l == 0 {
                0
            } else {
                let bit = i * u64::from(l);
                let (j, off) = ((bit / 64) as usize, bit % 64);
                let mut v = low[j] >> off;
                if off + u64::from(l) > 64 {
                    v |= low[j + 1] << (64 - off);
                }
                v & mask
            };
            out.push(((h << l) | lowv) as u32);
            i += 1;
        }
    }
    if i != n64 {
        return Err(format!("the high part has {i} set bits, expected {n}"));
    }
    Ok(())
}

/// The low part's bits past `n·l` must be zero (one encoding per set).
fn check_low_padding(low: &[u64], n: u64, l: u32) -> Result<(), String> {
    let used = n * u64::from(l);
    let Some(&last) = low.last() else { return Ok(()) };
    let in_last = used - 64 * (low.len() as u64 - 1);
    if in_last < 64 && last >> in_last != 0 {
        return Err("the low part has bits set past its last element".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn roundtrip(set: &[u32]) -> Vec<u8> {
        let mut buf = Vec::new();
        encode(set, &mut buf);
        assert_eq!(buf.len() as u64, payload_len(set.len() as u32), "{set:?}");
        let mut back = Vec::new();
        decode(&buf, set.len() as u32, &mut back).unwrap();
        assert_eq!(back, set);
        // Unaligned (owned words): the same.
        let mut shifted = vec![0u8; 3];
        shifted.extend_from_slice(&buf);
        decode(&shifted[3..], set.len() as u32, &mut back).unwrap();
        assert_eq!(back, set);
        buf
    }

    #[test]
    fn edge_sets_roundtrip_and_sizes_are_a_function_of_the_count() {
        assert!(roundtrip(&[]).is_empty());
        for set in [
            vec![0u32],
            vec![u32::MAX],
            vec![0, u32::MAX],
            vec![0, 1, 2, 3],
            vec![5, u32::MAX - 1, u32::MAX],
        ] {
            roundtrip(&set);
        }
        // One element: l = 32, one low word and one high word.
        assert_eq!(payload_len(1), 16);
        // 3,360 elements (a 28 KB paper): l = 20, 1,050 + 117 words.
        assert_eq!(payload_len(3360), 8 * (1050 + 117));
        // The largest count: l = 0, no low part.
        assert_eq!(low_bits(u64::from(u32::MAX)), 0);
        let dense: Vec<u32> = (0..70_000u32).map(|i| i * 61_357).collect();
        roundtrip(&dense);
    }

    /// Pinned bytes of a small set: the layout of the module docs.
    #[test]
    fn golden_bytes() {
        // n = 3: l = 30; low bits 5, 7, 1; high bits 0, 0, 3 → unary positions 0, 1, 5.
        let set = [5u32, 7, (3 << 30) | 1];
        let mut buf = Vec::new();
        encode(&set, &mut buf);
        let low = 5u64 | (7u64 << 30) | (1u64 << 60);
        let low2 = 1u64 >> 4;
        let high = 0b10_0011u64;
        let want: Vec<u8> = [low, low2, high].iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(buf, want);
    }

    #[test]
    fn malformed_payloads_are_refused() {
        let set = [3u32, 9, 1 << 31, u32::MAX];
        let mut buf = Vec::new();
        encode(&set, &mut buf);
        let mut out = Vec::new();
        assert!(decode(&buf[..buf.len() - 8], 4, &mut out).unwrap_err().contains("bytes"));
        assert!(decode(&buf, 3, &mut out).is_err());
        // An extra unary bit, a missing one, a stray low bit.
        let hi = buf.len() - 8;
        let mut extra = buf.clone();
        extra[hi + 7] |= 0x80;
        assert!(decode(&extra, 4, &mut out).is_err());
        let mut missing = buf.clone();
        missing[hi..].iter_mut().for_each(|b| *b = 0);
        assert!(decode(&missing, 4, &mut out).is_err());
        let mut stray = buf.clone();
        stray[hi - 1] |= 0x80;
        assert!(decode(&stray, 4, &mut out).unwrap_err().contains("low part"));
    }

    proptest! {
        #[test]
        fn encode_then_decode_is_the_identity(
            s in proptest::collection::btree_set(any::<u32>(), 0..600),
            ends in any::<(bool, bool)>(),
            dense_base in any::<u32>(),
            dense_len in 0u32..300,
        ) {
            let mut s = s;
            if ends.0 { s.insert(0); }
            if ends.1 { s.insert(u32::MAX); }
            let set: Vec<u32> = s.into_iter().collect();
            roundtrip(&set);
            // A dense run (small gaps: many elements per high bucket).
            let dense: Vec<u32> = (0..dense_len).filter_map(|i| dense_base.checked_add(i)).collect();
            roundtrip(&dense);
        }
    }
}
