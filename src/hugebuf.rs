//! [`HugeBuf`]: a fixed-length, zero-initialised array of plain numbers for the large static search
//! structures (the CSR runs of the in-memory mirror and of all-pairs). Arrays of at least
//! [`HUGE_MIN_BYTES`] live in an anonymous memory map that asks the kernel for transparent huge pages
//! (`madvise(MADV_HUGEPAGE)`, honoured where `/sys/kernel/mm/transparent_hugepage/enabled` is
//! `madvise` or `always`): a k = 12 probe touches hundreds of random buckets spread over gigabytes,
//! and with 4 KiB pages most of those touches also miss the TLB. Smaller arrays, and any array whose
//! map or advice the system refuses, are an ordinary `Vec`. No `unsafe`: `memmap2`'s anonymous maps
//! and advice are safe, and `bytemuck` views the page-aligned bytes as numbers.

use std::fmt;
use std::ops::{Deref, DerefMut};

use bytemuck::Pod;
use memmap2::{MmapMut, MmapOptions};

/// Arrays below this many bytes stay on the heap (one huge page is 2 MiB on x86-64).
pub(crate) const HUGE_MIN_BYTES: usize = 4 << 20;

/// A fixed-length array of `T`, zero-initialised (see the module documentation).
pub(crate) struct HugeBuf<T: Pod> {
    store: Store<T>,
}

enum Store<T> {
    Heap(Vec<T>),
    /// The map and the number of `T` it holds (the map is rounded up to whole pages).
    Map(MmapMut, usize),
}

impl<T: Pod> HugeBuf<T> {
    /// `len` zeros.
    pub(crate) fn zeroed(len: usize) -> Self {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        if bytes >= HUGE_MIN_BYTES {
            if let Some(map) = huge_map(bytes) {
                return HugeBuf {
                    store: Store::Map(map, len),
                };
            }
        }
        HugeBuf {
            store: Store::Heap(vec![T::zeroed(); len]),
        }
    }

    /// A copy of `items` (in huge pages when large enough).
    pub(crate) fn from_slice(items: &[T]) -> Self {
        let mut b = Self::zeroed(items.len());
        b.copy_from_slice(items);
        b
    }

    /// Whether the array lives in a map advised for huge pages (for tests and statistics).
    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self.store, Store::Map(..))
    }
}

/// An anonymous map of `bytes` advised for huge pages before any page is touched; `None` when the
/// system refuses either (the caller falls back to the heap).
fn huge_map(bytes: usize) -> Option<MmapMut> {
    let map = MmapOptions::new().len(bytes).map_anon().ok()?;
    #[cfg(target_os = "linux")]
    map.advise(memmap2::Advice::HugePage).ok()?;
    Some(map)
}

impl<T: Pod> Deref for HugeBuf<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.store {
            Store::Heap(v) => v,
            // The map is page-aligned and at least `len * size_of::<T>()` bytes long, so the cast
            // cannot fail; an empty slice would be the answer if it ever did.
            Store::Map(m, len) => bytemuck::try_cast_slice(&m[..len * std::mem::size_of::<T>()]).unwrap_or(&[]),
        }
    }
}

impl<T: Pod> DerefMut for HugeBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.store {
            Store::Heap(v) => v,
            Store::Map(m, len) => bytemuck::try_cast_slice_mut(&mut m[..*len * std::mem::size_of::<T>()]).unwrap_or(&mut []),
        }
    }
}

impl<T: Pod> Clone for HugeBuf<T> {
    fn clone(&self) -> Self {
        Self::from_slice(self)
    }
}

impl<T: Pod + fmt::Debug> fmt::Debug for HugeBuf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HugeBuf")
            .field("len", &self.len())
            .field("mapped", &self.is_mapped())
            .finish()
    }
}

impl<T: Pod> Default for HugeBuf<T> {
    fn default() -> Self {
        HugeBuf {
            store: Store::Heap(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_arrays_stay_on_the_heap_and_large_ones_are_mapped_zeroed_and_writable() {
        let small: HugeBuf<u64> = HugeBuf::zeroed(1000);
        assert!(!small.is_mapped());
        assert_eq!(small.len(), 1000);
        let n = HUGE_MIN_BYTES / 8 + 3; // not a whole number of pages
        let mut big: HugeBuf<u64> = HugeBuf::zeroed(n);
        assert!(big.is_mapped(), "an anonymous map is available on every supported system");
        assert_eq!(big.len(), n);
        assert!(big.iter().all(|&x| x == 0));
        for (i, x) in big.iter_mut().enumerate() {
            *x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        let copy = big.clone();
        assert!(copy.is_mapped());
        assert_eq!(&copy[..], &big[..]);
        assert_eq!(copy[n - 1], ((n - 1) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let words: HugeBuf<u32> = HugeBuf::from_slice(&[7u32; HUGE_MIN_BYTES / 4]);
        assert!(words.is_mapped() && words.iter().all(|&x| x == 7));
        assert!(HugeBuf::<u32>::default().is_empty());
    }
}
