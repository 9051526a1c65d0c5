//! The sort buffer's index entries and their radix sort by (partition,
//! key prefix).

use crate::mem::spares::Spares;

/// Index entry of one buffered record: 24 bytes, so the index costs little
/// next to the data it sorts. `prefix` holds the key's first 8 bytes
/// big-endian: comparing it settles almost every comparison of random keys
/// (TeraSort's) without touching the arena.
#[derive(Clone, Copy)]
pub(super) struct Entry {
    pub(super) prefix: u64,
    /// The partition, with [`IN_SOURCE`] set when `offset` is in the
    /// source block rather than the arena.
    pub(super) partition: u32,
    /// The key's length; in the source, its low 24 bits, and the high 8
    /// the bytes between key and value (the value's length field of a
    /// key-value record).
    pub(super) klen: u32,
    pub(super) offset: u32,
    pub(super) vlen: u32,
}

/// The flag of an [`Entry`] whose record lies in the source block.
pub(super) const IN_SOURCE: u32 = 1 << 31;
/// The longest key indexed in the source, and the widest gap after it.
pub(super) const SOURCE_KEY: usize = (1 << 24) - 1;
pub(super) const SOURCE_GAP: usize = 255;

#[inline]
pub(super) fn prefetch(b: &u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it reads nothing the program sees and
    // cannot fault, and `b` is a valid reference anyway.
    #[allow(unused_unsafe)]
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((b as *const u8).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = b;
}

/// Bits per radix digit: 256 buckets, whose write positions stay in the
/// L1 cache while a pass scatters (11-bit digits took fewer passes and
/// each took longer: 22.5 ms against 20 ms for 670,000 entries).
const DIGIT_BITS: u32 = 8;
/// The digits of an entry's radix key, least significant first: 8 of the
/// key prefix, then 4 of the partition.
const DIGITS: usize = 12;
const PREFIX_DIGITS: usize = 8;

fn digit(e: &Entry, d: usize) -> usize {
    let mask = (1 << DIGIT_BITS) - 1;
    if d < PREFIX_DIGITS {
        (e.prefix >> (DIGIT_BITS as usize * d)) as usize & mask
    } else {
        (e.part() >> (DIGIT_BITS as usize * (d - PREFIX_DIGITS))) as usize & mask
    }
}

/// Index buffers of maps that finished, kept for this worker's next maps
/// (`crate::mem::spares`): two of 16 MiB (the index and the radix sort's
/// scratch) for each 64 MiB TeraSort map. Only buffers that held at most
/// [`SPARE_MAX`] entries are kept, two for each map slot
/// ([`keep_buffers_for`]; four with the default two slots: under 4 x 24 MiB).
static SPARE: Spares<Entry> = Spares::new(4);
pub(super) const SPARE_MAX: usize = (24 << 20) / std::mem::size_of::<Entry>();

/// Sizes the kept index buffers for `map_slots` maps at once.
pub fn keep_buffers_for(map_slots: u32) {
    SPARE.keep_at_most(2 * map_slots.max(1) as usize);
}

/// An empty index buffer with room for `cap` entries.
pub(super) fn buffer(cap: usize) -> Vec<Entry> {
    SPARE.take(cap)
}

/// Keeps `v` for a later [`buffer`], if it never held more than
/// [`SPARE_MAX`] entries (`held`).
pub(super) fn give_back(v: Vec<Entry>, held: usize) {
    if held <= SPARE_MAX {
        SPARE.keep(v);
    }
}

/// A stable least-significant-digit radix sort by (partition, prefix).
/// One pass counts every digit; a digit the whole index shares (the
/// partition's high bits, a prefix's common bits) costs no pass. The
/// scratch buffer comes from (and goes back to) the spares.
pub(super) fn radix_sort(index: &mut Vec<Entry>) {
    let n = index.len();
    let mut counts = vec![[0usize; 1 << DIGIT_BITS]; DIGITS];
    for e in index.iter() {
        for (d, c) in counts.iter_mut().enumerate() {
            c[digit(e, d)] += 1;
        }
    }
    let mut other = buffer(n);
    for (d, c) in counts.iter().enumerate() {
        if c.contains(&n) {
            continue;
        }
        let mut at = [0usize; 1 << DIGIT_BITS];
        let mut sum = 0;
        for (a, k) in at.iter_mut().zip(c) {
            *a = sum;
            sum += k;
        }
        // Every slot is written below; after a swap `other` holds the
        // last pass's entries, as long.
        other.resize(n, index[0]);
        for e in index.iter() {
            let b = digit(e, d);
            other[at[b]] = *e;
            at[b] += 1;
        }
        std::mem::swap(index, &mut other);
    }
    give_back(other, n);
}

impl Entry {
    pub(super) fn part(&self) -> u32 {
        self.partition & !IN_SOURCE
    }

    pub(super) fn in_source(&self) -> bool {
        self.partition & IN_SOURCE != 0
    }

    /// Where the key and the value start, and the key's length.
    pub(super) fn layout(&self) -> (usize, usize, usize) {
        let (klen, gap) = if self.in_source() {
            (
                (self.klen as usize) & SOURCE_KEY,
                (self.klen >> 24) as usize,
            )
        } else {
            (self.klen as usize, 0)
        };
        let k = self.offset as usize;
        (k, k + klen + gap, klen)
    }
}
