//! SIMD kernels: the one module besides the memory maps (`store::mmap`) where `unsafe` is allowed,
//! and only for `#[target_feature]` functions and their loads. Each kernel is a safe function that
//! picks, at run time, the widest implementation this CPU has ([`level`]) and each implementation
//! has a safe scalar twin giving the same result (property tests below compare every level this
//! CPU runs with the scalar one on random input; `*_at(Level::Scalar, …)` forces the scalar path).
//!
//! * [`bit_counts`]: for each of the 64 bit positions, how many of the given u64 have it set — the
//!   SimHash accumulation. AVX-512BW: the hash itself is the byte mask of one masked add of 64
//!   byte counters (one instruction per hash); AVX2: the hash's bytes are spread over 64 byte
//!   lanes (shuffle, and, compare) and subtracted; scalar: byte-lane table (`SPREAD`). Byte
//!   counters are flushed into u32 every 255 hashes.
//! * [`for_each_within`]: every u64 of a slice within Hamming distance `k` of `q` — the bucket
//!   scan of the index. AVX-512 VPOPCNTDQ: 8 distances and the `<= k` mask in three
//!   instructions; AVX2: a nibble-table popcount (`vpshufb`, summed per lane by `vpsadbw`), 4
//!   distances a register; scalar: the loop branch-free over chunks of 8, for the baseline x86-64.
//! * [`for_each_within_many`]: the same for many queries over one slice — a bucket of up to 8 is
//!   loaded into registers once and compared with each query whole.
//!
//! The level is detected once; the environment variable `FPDB_SIMD=scalar|avx2|avx512` caps it
//! (e.g. to run a test suite or a benchmark on the scalar path).

use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level a kernel can run at, from the narrowest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Portable Rust, no target feature beyond the build's.
    Scalar,
    /// x86-64 AVX2 with `popcnt`.
    Avx2,
    /// x86-64 AVX-512 F + BW + VPOPCNTDQ.
    Avx512,
}

static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The widest level this CPU supports, capped by `FPDB_SIMD` when set (detected once).
pub fn level() -> Level {
    match LEVEL.load(Ordering::Relaxed) {
        1 => Level::Scalar,
        2 => Level::Avx2,
        3 => Level::Avx512,
        _ => {
            let cap = match std::env::var("FPDB_SIMD").as_deref() {
                Ok("scalar") => Level::Scalar,
                Ok("avx2") => Level::Avx2,
                _ => Level::Avx512,
            };
            let l = detected().min(cap);
            LEVEL.store(l as u8 + 1, Ordering::Relaxed);
            l
        }
    }
}

/// The widest level the CPU supports.
pub fn detected() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vpopcntdq")
        {
            return Level::Avx512;
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt") {
            return Level::Avx2;
        }
    }
    Level::Scalar
}

/// `SPREAD[v]` has byte j equal to bit j of `v` (the scalar SimHash accumulation's table).
static SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut v = 0;
    while v < 256 {
        let mut j = 0;
        while j < 8 {
            t[v] |= (((v >> j) & 1) as u64) << (8 * j);
            j += 1;
        }
        v += 1;
    }
    t
};

/// Adds to `ones[b]`, for every bit position `b`, the number of `hashes` with bit `b` set.
#[inline]
pub fn bit_counts(hashes: &[u64], ones: &mut [u32; 64]) {
    bit_counts_checked(level(), hashes, ones)
}

/// [`bit_counts`] at `level` (a level above [`detected`] runs the widest one supported).
pub fn bit_counts_at(level: Level, hashes: &[u64], ones: &mut [u32; 64]) {
    bit_counts_checked(level.min(detected()), hashes, ones)
}

/// [`bit_counts`] at a `level` the CPU supports (at most [`detected`]).
#[inline]
fn bit_counts_checked(level: Level, hashes: &[u64], ones: &mut [u32; 64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if level == Level::Avx512 {
            // SAFETY: `level` is at most `detected()`: the CPU supports AVX-512 F and BW.
            return unsafe { x86::bit_counts_avx512(hashes, ones) };
        }
        if level == Level::Avx2 {
            // SAFETY: `level` is at most `detected()`: the CPU supports AVX2.
            return unsafe { x86::bit_counts_avx2(hashes, ones) };
        }
    }
    let _ = level;
    bit_counts_scalar(hashes, ones)
}

/// The scalar twin of [`bit_counts`]: byte-lane accumulation, 8 counters per u64 add.
pub fn bit_counts_scalar(hashes: &[u64], ones: &mut [u32; 64]) {
    for chunk in hashes.chunks(255) {
        let mut acc = [0u64; 8];
        for &h in chunk {
            for (lane, a) in acc.iter_mut().enumerate() {
                *a += SPREAD[((h >> (8 * lane)) & 0xFF) as usize];
            }
        }
        for (lane, a) in acc.iter().enumerate() {
            for j in 0..8 {
                ones[8 * lane + j] += ((a >> (8 * j)) & 0xFF) as u32;
            }
        }
    }
}

/// Calls `f(i, d)` for every `fps[i]` within Hamming distance `k` of `q` (`d` its distance), in
/// order of `i`.
#[inline]
pub fn for_each_within(fps: &[u64], q: u64, k: u32, f: impl FnMut(usize, u32)) {
    within_checked(level(), fps, q, k, f)
}

/// [`for_each_within`] at `level` (a level above [`detected`] runs the widest one supported).
pub fn for_each_within_at(level: Level, fps: &[u64], q: u64, k: u32, f: impl FnMut(usize, u32)) {
    within_checked(level.min(detected()), fps, q, k, f)
}

/// [`for_each_within`] at a `level` the CPU supports (at most [`detected`]).
#[inline]
fn within_checked(level: Level, fps: &[u64], q: u64, k: u32, mut f: impl FnMut(usize, u32)) {
    #[cfg(target_arch = "x86_64")]
    {
        if level == Level::Avx512 {
            // SAFETY: `level` is at most `detected()`: the CPU supports AVX-512 F and VPOPCNTDQ.
            return unsafe { x86::within_avx512(fps, q, k, &mut f) };
        }
        if level == Level::Avx2 {
            // SAFETY: `level` is at most `detected()`: the CPU supports AVX2 and popcnt.
            return unsafe { x86::within_avx2(fps, q, k, &mut f) };
        }
    }
    let _ = level;
    within_scalar(fps, q, k, &mut f)
}

/// The scalar twin of [`for_each_within`]: branch-free over chunks of 8 (the popcounts vectorize
/// where the target allows), only matches branch.
#[inline(always)]
pub fn within_scalar(fps: &[u64], q: u64, k: u32, f: &mut impl FnMut(usize, u32)) {
    let mut chunks = fps.chunks_exact(8);
    let mut base = 0usize;
    for c in &mut chunks {
        let mut mask = 0u32;
        for (j, &x) in c.iter().enumerate() {
            mask |= u32::from((x ^ q).count_ones() <= k) << j;
        }
        report(mask, c, base, q, f);
        base += 8;
    }
    tail(chunks.remainder(), base, q, k, f);
}

/// Calls `f` for the entries of chunk `c` (at `base`) whose bit is set in `mask`, in order.
#[inline(always)]
fn report(mut mask: u32, c: &[u64], base: usize, q: u64, f: &mut impl FnMut(usize, u32)) {
    while mask != 0 {
        let j = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        f(base + j, (c[j] ^ q).count_ones());
    }
}

/// The entries after the last whole chunk, one at a time.
#[inline(always)]
fn tail(rest: &[u64], base: usize, q: u64, k: u32, f: &mut impl FnMut(usize, u32)) {
    for (j, &x) in rest.iter().enumerate() {
        let d = (x ^ q).count_ones();
        if d <= k {
            f(base + j, d);
        }
    }
}

/// For each query `(tag, q)` of `queries`, in order, calls `f(tag, i, d)` for every `fps[i]` within
/// Hamming distance `k` of `q`, in order of `i`: [`for_each_within`] for many queries over one
/// slice. A slice of up to 8 (an index bucket, probed by every query of a batch whose block value
/// falls in it) is loaded into vector registers once for all the queries, and each query then
/// costs one compare of the whole bucket instead of a call and a scalar loop over the remainder.
#[inline]
pub fn for_each_within_many<T: Copy>(fps: &[u64], queries: impl IntoIterator<Item = (T, u64)>, k: u32, f: impl FnMut(T, usize, u32)) {
    within_many_checked(level(), fps, queries.into_iter(), k, f)
}

/// [`for_each_within_many`] at `level` (a level above [`detected`] runs the widest one supported).
pub fn for_each_within_many_at<T: Copy>(
    level: Level,
    fps: &[u64],
    queries: impl IntoIterator<Item = (T, u64)>,
    k: u32,
    f: impl FnMut(T, usize, u32),
) {
    within_many_checked(level.min(detected()), fps, queries.into_iter(), k, f)
}

/// [`for_each_within_many`] at a `level` the CPU supports (at most [`detected`]). Each level's
/// kernel scans a slice longer than 8 query by query itself: done here instead, through
/// [`within_checked`], each query crossed the `#[target_feature]` boundary in a call of its own,
/// and all pairs at k = 12 over 1M SimHashes took 4.3 s instead of 3.2 (`examples/allpairs`, O3).
#[inline]
fn within_many_checked<T: Copy>(
    level: Level,
    fps: &[u64],
    queries: impl Iterator<Item = (T, u64)>,
    k: u32,
    mut f: impl FnMut(T, usize, u32),
) {
    if fps.is_empty() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        if level == Level::Avx512 {
            // SAFETY: `level` is at most `detected()`: the CPU supports AVX-512 F and VPOPCNTDQ.
            return unsafe { x86::within_many_avx512(fps, queries, k, &mut f) };
        }
        if level == Level::Avx2 {
            // SAFETY: `level` is at most `detected()`: the CPU supports AVX2 and popcnt.
            return unsafe { x86::within_many_avx2(fps, queries, k, &mut f) };
        }
    }
    let _ = level;
    within_many_scalar(fps, queries, k, &mut f)
}

/// The scalar twin of [`for_each_within_many`]: [`within_scalar`] once per query.
#[inline(always)]
pub fn within_many_scalar<T: Copy>(fps: &[u64], queries: impl Iterator<Item = (T, u64)>, k: u32, f: &mut impl FnMut(T, usize, u32)) {
    for (t, q) in queries {
        within_scalar(fps, q, k, &mut |i, d| f(t, i, d));
    }
}

/// Classifies `text` 64 bytes a word into `masks` (cleared first): bit `i` of word `k` is set iff
/// byte `64·k + i` is an ASCII letter or digit (bytes past the end are not).
#[inline]
pub fn alnum_masks(text: &[u8], masks: &mut Vec<u64>) {
    alnum_masks_at(level(), text, masks)
}

/// [`alnum_masks`] at `level` (a level above [`detected`] runs the widest one supported).
pub fn alnum_masks_at(level: Level, text: &[u8], masks: &mut Vec<u64>) {
    masks.clear();
    masks.reserve(text.len().div_ceil(64));
    #[cfg(target_arch = "x86_64")]
    {
        if level.min(detected()) >= Level::Avx2 {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { x86::alnum_masks_avx2(text, masks) };
        }
    }
    let _ = level;
    alnum_masks_scalar(text, masks)
}

/// The scalar twin of [`alnum_masks`]: eight bytes at a time in one u64 (range tests on all
/// eight bytes at once, then their eight flags gathered by one multiplication).
pub fn alnum_masks_scalar(text: &[u8], masks: &mut Vec<u64>) {
    let full = text.len() / 64;
    masks.resize(full, 0);
    for (c, m) in text.chunks_exact(64).zip(masks.iter_mut()) {
        let mut mask = 0u64;
        for (j, w) in c.chunks_exact(8).enumerate() {
            mask |= alnum8(u64::from_le_bytes(w.try_into().unwrap_or([0; 8]))) << (8 * j);
        }
        *m = mask;
    }
    if text.len() > 64 * full {
        masks.push(alnum_mask_of(&text[64 * full..]));
    }
}

/// Bit `j` set iff byte `j` of `w` (little-endian) is an ASCII letter or digit. Per byte, with
/// the high bit cleared first so that no subtraction borrows across bytes: `x | 0x80` minus the
/// range's low end keeps the high bit iff `x` ≥ it, the high end `| 0x80` minus `x` iff `x` ≤ it.
#[inline(always)]
fn alnum8(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    let x = w & !HIGH;
    let l = (w | (ONES * 0x20)) & !HIGH;
    let alpha = ((l | HIGH) - ONES * u64::from(b'a')) & (((ONES * u64::from(b'z')) | HIGH) - l);
    let digit = ((x | HIGH) - ONES * u64::from(b'0')) & (((ONES * u64::from(b'9')) | HIGH) - x);
    let flags = (alpha | digit) & !w & HIGH; // not for bytes ≥ 0x80
                                             // The high bits 7, 15, …, 63 moved to bits 0..8.
    (flags >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

#[inline]
fn alnum_mask_of(c: &[u8]) -> u64 {
    let mut m = 0u64;
    for (i, &x) in c.iter().enumerate() {
        m |= u64::from(x.is_ascii_alphanumeric()) << i;
    }
    m
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// AVX-512BW: 64 byte counters in one register; bit `b` of the hash masks byte lane `b` of
    /// one add of 1.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn bit_counts_avx512(hashes: &[u64], ones: &mut [u32; 64]) {
        let one = _mm512_set1_epi8(1);
        for chunk in hashes.chunks(255) {
            let mut acc = _mm512_setzero_si512();
            for &h in chunk {
                acc = _mm512_mask_add_epi8(acc, h, acc, one);
            }
            let mut bytes = [0u8; 64];
            // SAFETY: `bytes` is 64 writable bytes; the store is unaligned.
            unsafe { _mm512_storeu_si512(bytes.as_mut_ptr().cast(), acc) };
            for (o, &b) in ones.iter_mut().zip(&bytes) {
                *o += u32::from(b);
            }
        }
    }

    /// AVX2: byte lane `i` of `lo` (`hi`) counts bit `i` (`32 + i`): the hash's byte `i / 8` is
    /// shuffled into the lane, and-ed with bit `i % 8` and compared (0xFF = set, i.e. -1, which is
    /// subtracted).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn bit_counts_avx2(hashes: &[u64], ones: &mut [u32; 64]) {
        // `_mm256_shuffle_epi8` picks within each 128-bit half; both halves hold the hash twice.
        let shuf_lo = _mm256_setr_epi8(
            0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
        );
        let shuf_hi = _mm256_setr_epi8(
            4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7,
        );
        let bit = _mm256_set1_epi64x(i64::from_le_bytes([1, 2, 4, 8, 16, 32, 64, 128]));
        for chunk in hashes.chunks(255) {
            let (mut lo, mut hi) = (_mm256_setzero_si256(), _mm256_setzero_si256());
            for &h in chunk {
                let v = _mm256_set1_epi64x(h as i64);
                let l = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(v, shuf_lo), bit), bit);
                let u = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(v, shuf_hi), bit), bit);
                lo = _mm256_sub_epi8(lo, l);
                hi = _mm256_sub_epi8(hi, u);
            }
            let mut bytes = [0u8; 64];
            // SAFETY: `bytes` is 64 writable bytes; both stores are unaligned and in bounds.
            unsafe {
                _mm256_storeu_si256(bytes.as_mut_ptr().cast(), lo);
                _mm256_storeu_si256(bytes.as_mut_ptr().add(32).cast(), hi);
            }
            for (o, &b) in ones.iter_mut().zip(&bytes) {
                *o += u32::from(b);
            }
        }
    }

    /// AVX2: 32 bytes a compare; a letter is `(x | 0x20) - 'a'` ≤ 25, a digit `x - '0'` ≤ 9
    /// (unsigned: `min` leaves such a byte unchanged).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn alnum_masks_avx2(text: &[u8], masks: &mut Vec<u64>) {
        let full = text.len() / 64;
        masks.resize(full, 0);
        for (c, m) in text.chunks_exact(64).zip(masks.iter_mut()) {
            // SAFETY: `c` is 64 readable bytes: both halves are in bounds.
            *m = unsafe { alnum32(c.as_ptr()) | alnum32(c.as_ptr().add(32)) << 32 };
        }
        if text.len() > 64 * full {
            masks.push(super::alnum_mask_of(&text[64 * full..]));
        }
    }

    /// The letters and digits among the 32 bytes at `p` (which must be readable).
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn alnum32(p: *const u8) -> u64 {
        // SAFETY: the caller passes 32 readable bytes; the load is unaligned.
        let v = unsafe { _mm256_loadu_si256(p.cast()) };
        let l = _mm256_sub_epi8(_mm256_or_si256(v, _mm256_set1_epi8(0x20)), _mm256_set1_epi8(b'a' as i8));
        let d = _mm256_sub_epi8(v, _mm256_set1_epi8(b'0' as i8));
        let alpha = _mm256_cmpeq_epi8(_mm256_min_epu8(l, _mm256_set1_epi8(25)), l);
        let digit = _mm256_cmpeq_epi8(_mm256_min_epu8(d, _mm256_set1_epi8(9)), d);
        _mm256_movemask_epi8(_mm256_or_si256(alpha, digit)) as u32 as u64
    }

    /// AVX-512 VPOPCNTDQ: xor, popcount and compare 8 fingerprints at once.
    #[target_feature(enable = "avx512f,avx512vpopcntdq")]
    pub(super) unsafe fn within_avx512(fps: &[u64], q: u64, k: u32, f: &mut impl FnMut(usize, u32)) {
        let qv = _mm512_set1_epi64(q as i64);
        let kv = _mm512_set1_epi64(i64::from(k));
        let mut chunks = fps.chunks_exact(8);
        let mut base = 0usize;
        for c in &mut chunks {
            // SAFETY: `c` is 8 readable u64 (64 bytes); the load is unaligned.
            let v = unsafe { _mm512_loadu_si512(c.as_ptr().cast()) };
            let d = _mm512_popcnt_epi64(_mm512_xor_si512(v, qv));
            super::report(u32::from(_mm512_cmple_epu64_mask(d, kv)), c, base, q, f);
            base += 8;
        }
        super::tail(chunks.remainder(), base, q, k, f);
    }

    /// AVX2: xor, popcount and compare 4 fingerprints at once, two vectors a chunk of 8. AVX2 has
    /// no 64-bit popcount: each byte's bits are counted by two lookups of a nibble table
    /// (`vpshufb`) and summed per 64-bit lane by `vpsadbw`: 0.206 ns an entry against 0.241-0.251
    /// for the scalar loop compiled with popcnt (AVX-512 0.04-0.07; `examples/kernel_within`, O3,
    /// AMD EPYC dev box).
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn within_avx2(fps: &[u64], q: u64, k: u32, f: &mut impl FnMut(usize, u32)) {
        let qv = _mm256_set1_epi64x(q as i64);
        let kv = _mm256_set1_epi64x(i64::from(k));
        let mut chunks = fps.chunks_exact(8);
        let mut base = 0usize;
        for c in &mut chunks {
            // SAFETY: `c` is 8 readable u64 (64 bytes): both 32-byte loads are in bounds, unaligned.
            let (a, b) = unsafe { (_mm256_loadu_si256(c.as_ptr().cast()), _mm256_loadu_si256(c.as_ptr().add(4).cast())) };
            let mask = within4(_mm256_xor_si256(a, qv), kv) | within4(_mm256_xor_si256(b, qv), kv) << 4;
            super::report(mask, c, base, q, f);
            base += 8;
        }
        super::tail(chunks.remainder(), base, q, k, f);
    }

    /// [`super::for_each_within_many`] with AVX-512: a slice of up to 8 is one register (a masked
    /// load), compared with each query in three instructions; a longer one is scanned once per
    /// query.
    #[target_feature(enable = "avx512f,avx512vpopcntdq")]
    pub(super) unsafe fn within_many_avx512<T: Copy>(
        fps: &[u64],
        queries: impl Iterator<Item = (T, u64)>,
        k: u32,
        f: &mut impl FnMut(T, usize, u32),
    ) {
        if fps.len() > 8 {
            for (t, q) in queries {
                // SAFETY: this function's target features are the callee's.
                unsafe { within_avx512(fps, q, k, &mut |i, d| f(t, i, d)) };
            }
            return;
        }
        let live = (1u32 << fps.len()) - 1;
        // SAFETY: the mask enables lanes 0..fps.len(), all in bounds; a masked-off lane is neither
        // read nor faulted on (its value is zero and its bit is cleared from every result).
        let v = unsafe { _mm512_maskz_loadu_epi64(live as u8, fps.as_ptr().cast()) };
        let kv = _mm512_set1_epi64(i64::from(k));
        for (t, q) in queries {
            let d = _mm512_popcnt_epi64(_mm512_xor_si512(v, _mm512_set1_epi64(q as i64)));
            let mask = u32::from(_mm512_cmple_epu64_mask(d, kv)) & live;
            if mask != 0 {
                super::report(mask, fps, 0, q, &mut |i, d| f(t, i, d));
            }
        }
    }

    /// [`super::for_each_within_many`] with AVX2: a slice of 4 is one register, of 5 to 8 two (the
    /// second a masked load), compared with each query by [`within4`]; up to 3 entries the
    /// `popcnt` loop costs less than a vector compare; a longer slice is scanned once per query.
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn within_many_avx2<T: Copy>(
        fps: &[u64],
        queries: impl Iterator<Item = (T, u64)>,
        k: u32,
        f: &mut impl FnMut(T, usize, u32),
    ) {
        let n = fps.len();
        if n > 8 {
            for (t, q) in queries {
                // SAFETY: this function's target features are the callee's.
                unsafe { within_avx2(fps, q, k, &mut |i, d| f(t, i, d)) };
            }
            return;
        }
        if n < 4 {
            for (t, q) in queries {
                super::tail(fps, 0, q, k, &mut |i, d| f(t, i, d));
            }
            return;
        }
        let kv = _mm256_set1_epi64x(i64::from(k));
        if n == 4 {
            // SAFETY: `fps` has 4 entries: the load reads exactly them, unaligned.
            let a = unsafe { _mm256_loadu_si256(fps.as_ptr().cast()) };
            for (t, q) in queries {
                let mask = within4(_mm256_xor_si256(a, _mm256_set1_epi64x(q as i64)), kv);
                if mask != 0 {
                    super::report(mask, fps, 0, q, &mut |i, d| f(t, i, d));
                }
            }
            return;
        }
        let live = (1u32 << n) - 1;
        // Lanes 4.. of the slice: lane j of the second register is live when 4 + j < n.
        let lanes = _mm256_cmpgt_epi64(_mm256_set1_epi64x(n as i64 - 4), _mm256_setr_epi64x(0, 1, 2, 3));
        // SAFETY: `fps` has 4 to 8 entries: the first load reads entries 0..4, in bounds; the
        // second pointer is at most one past the end and the mask enables only its lanes below
        // `n`, in bounds (a masked-off lane is neither read nor faulted on; it loads zero and its
        // bit is cleared from every result).
        let (a, b) = unsafe {
            (
                _mm256_loadu_si256(fps.as_ptr().cast()),
                _mm256_maskload_epi64(fps.as_ptr().add(4).cast(), lanes),
            )
        };
        for (t, q) in queries {
            let qv = _mm256_set1_epi64x(q as i64);
            let mask = (within4(_mm256_xor_si256(a, qv), kv) | within4(_mm256_xor_si256(b, qv), kv) << 4) & live;
            if mask != 0 {
                super::report(mask, fps, 0, q, &mut |i, d| f(t, i, d));
            }
        }
    }

    /// Bit `j` set when lane `j` of `x` has at most `k` (every lane of `kv`) bits set.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn within4(x: __m256i, kv: __m256i) -> u32 {
        let nibble = _mm256_set1_epi8(0x0F);
        let table = _mm256_setr_epi8(
            0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
        );
        let lo = _mm256_shuffle_epi8(table, _mm256_and_si256(x, nibble));
        let hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(x, 4), nibble));
        let ones = _mm256_sad_epu8(_mm256_add_epi8(lo, hi), _mm256_setzero_si256());
        // Both sides are at most 64: the signed compare is exact.
        let over = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(ones, kv))) as u32;
        !over & 0xF
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn levels() -> Vec<Level> {
        [Level::Scalar, Level::Avx2, Level::Avx512]
            .into_iter()
            .filter(|&l| l <= detected())
            .collect()
    }

    fn counts_reference(hashes: &[u64]) -> [u32; 64] {
        let mut ones = [0u32; 64];
        for &h in hashes {
            for (b, o) in ones.iter_mut().enumerate() {
                *o += (h >> b & 1) as u32;
            }
        }
        ones
    }

    #[test]
    fn the_scalar_path_can_be_forced_and_counts_every_bit() {
        // 600 copies of one hash cross two flushes of the byte counters.
        let hashes: Vec<u64> = std::iter::repeat_n(0x8000_0000_0000_0001u64, 600).chain([u64::MAX]).collect();
        let mut ones = [0u32; 64];
        bit_counts_at(Level::Scalar, &hashes, &mut ones);
        assert_eq!(ones[0], 601);
        assert_eq!(ones[63], 601);
        assert!(ones[1..63].iter().all(|&c| c == 1));
        let mut got = Vec::new();
        for_each_within_at(Level::Scalar, &[0, 1, 3, 7, u64::MAX, 0, 1, 1, 15, 2], 0, 2, |i, d| {
            got.push((i, d))
        });
        assert_eq!(got, vec![(0, 0), (1, 1), (2, 2), (5, 0), (6, 1), (7, 1), (9, 1)]);
    }

    #[test]
    fn the_level_is_at_most_what_the_cpu_has() {
        assert!(level() <= detected());
    }

    proptest! {
        /// Every level this CPU runs counts the same bits as the reference and the scalar twin,
        /// across the 255-hash flush boundary (repeated hashes).
        #[test]
        fn bit_counts_agree_at_every_level(hashes in proptest::collection::vec(any::<u64>(), 0..700), dup in 0usize..600) {
            let mut hs = hashes.clone();
            if let Some(&h) = hashes.first() { hs.extend(std::iter::repeat_n(h, dup)); }
            let want = counts_reference(&hs);
            for l in levels() {
                let mut ones = [0u32; 64];
                bit_counts_at(l, &hs, &mut ones);
                prop_assert_eq!(ones, want, "{:?}", l);
            }
        }

        /// Every level classifies every byte as `is_ascii_alphanumeric` does, for every length
        /// (blocks of 64 and the remainder).
        #[test]
        fn alnum_masks_agree_at_every_level(text in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut want = vec![0u64; text.len().div_ceil(64)];
            for (i, &x) in text.iter().enumerate() {
                want[i / 64] |= u64::from(x.is_ascii_alphanumeric()) << (i % 64);
            }
            for l in levels() {
                let mut got = vec![7];
                alnum_masks_at(l, &text, &mut got);
                prop_assert_eq!(&got, &want, "{:?}", l);
            }
        }

        /// Every level reports, query by query, exactly what `for_each_within` at the scalar
        /// level reports, for slices short enough to be one register and longer ones.
        #[test]
        fn for_each_within_many_agrees_at_every_level(
            q in any::<u64>(),
            flips in proptest::collection::vec(proptest::collection::vec(0u32..64, 0..24), 0..20),
            qflips in proptest::collection::vec(proptest::collection::vec(0u32..64, 0..16), 0..12),
            k in 0u32..=64,
        ) {
            let near = |bits: &Vec<u32>| bits.iter().fold(q, |x, &b| x ^ (1u64 << b));
            let fps: Vec<u64> = flips.iter().map(near).collect();
            let qs: Vec<u64> = qflips.iter().map(near).collect();
            let mut want = Vec::new();
            for (t, &x) in qs.iter().enumerate() {
                for_each_within_at(Level::Scalar, &fps, x, k, |i, d| want.push((t, i, d)));
            }
            for l in levels() {
                let mut got = Vec::new();
                for_each_within_many_at(l, &fps, qs.iter().copied().enumerate(), k, |t, i, d| got.push((t, i, d)));
                prop_assert_eq!(&got, &want, "{:?}", l);
            }
        }

        /// Every level reports exactly the brute-force matches, in order, with their distances,
        /// for every length (chunks of 8 and the remainder) and every k.
        #[test]
        fn for_each_within_agrees_at_every_level(
            q in any::<u64>(),
            flips in proptest::collection::vec(proptest::collection::vec(0u32..64, 0..24), 0..70),
            k in 0u32..=64,
        ) {
            let fps: Vec<u64> = flips.iter().map(|bits| bits.iter().fold(q, |x, &b| x ^ (1u64 << b))).collect();
            let want: Vec<(usize, u32)> = fps.iter().enumerate().map(|(i, &x)| (i, (x ^ q).count_ones())).filter(|&(_, d)| d <= k).collect();
            for l in levels() {
                let mut got = Vec::new();
                for_each_within_at(l, &fps, q, k, |i, d| got.push((i, d)));
                prop_assert_eq!(&got, &want, "{:?}", l);
            }
        }
    }
}
