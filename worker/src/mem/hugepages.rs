//! Large buffers backed by transparent huge pages where the kernel offers
//! them only on request (`/sys/kernel/mm/transparent_hugepage/enabled` set
//! to `madvise`, the default of many distributions and of this project's
//! test VM).
//!
//! A task's big buffers (a map's sort index, an output block) are written
//! once from end to end: in 4 KiB pages each costs a page fault per 4 KiB
//! (`do_anonymous_page` was 9 % of a 1 GiB TeraSort's CPU samples in
//! scripts/profile.sh, 2026-11-26), and reading a sorted index's records
//! back in key order missed the TLB on almost every one.

/// The size of a huge page on x86-64 and arm64 with 4 KiB base pages.
const HUGE: usize = 2 << 20;

/// Asks for huge pages under `v`'s spare capacity, before it is touched.
/// Only the 2 MiB-aligned part of the allocation can have them; a buffer
/// shorter than two huge pages is left as it is. A hint: failure (an old
/// kernel, THP off) changes nothing but speed.
pub fn advise<T>(v: &mut Vec<T>) {
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < 2 * HUGE {
        return;
    }
    let start = v.as_mut_ptr() as usize;
    let (lo, hi) = (start.next_multiple_of(HUGE), (start + bytes) / HUGE * HUGE);
    if hi <= lo {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: [lo, hi) lies inside `v`'s allocation, which this process
    // owns; MADV_HUGEPAGE changes how its pages are backed, never their
    // contents.
    unsafe {
        libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
    }
}

/// A vector with room for `n` elements, huge-page backed where it can be.
pub fn with_capacity<T>(n: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    advise(&mut v);
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn advised_buffers_work_as_any_other() {
        let mut v: Vec<u64> = super::with_capacity(1 << 20);
        assert!(v.capacity() >= 1 << 20);
        v.extend(0..1 << 20);
        assert_eq!(v.iter().sum::<u64>(), (1u64 << 20) * ((1 << 20) - 1) / 2);
        let mut small: Vec<u8> = super::with_capacity(10);
        small.push(1);
        assert_eq!(small, [1]);
    }
}
