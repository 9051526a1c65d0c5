//! How the worker's heap gives big buffers back to the system.
//!
//! glibc serves an allocation from its arenas unless it is larger than
//! the mmap threshold, and raises that threshold, up to 32 MiB, each time
//! a buffer above it is freed. After the first tasks, a map's 16 MiB
//! radix-sort scratch or a reduce's in-memory segments came from the
//! arenas, and a freed chunk that is not at an arena's top stays resident
//! (each blocking thread has its own arena). A worker's RssAnon then crept
//! from task to task: TeraSort 1 GiB peaked at 507-521 MiB on one worker
//! (`scripts/bench.sh --size 1GiB --jobs terasort --reps 5`, 2026-11-26),
//! against 331-391 MiB with the threshold held at 4 MiB (the same command
//! with `MALLOC_MMAP_THRESHOLD_=4194304`). Buffers above it are mapped
//! for themselves and unmapped when freed; the big ones that are reused
//! (an output part's block buffers) are recycled by their owner instead.
//!
//! Trimming the arenas (`malloc_trim`) after each task instead left the
//! peak at 528 MiB: the memory is held while tasks still run. Puts, whose
//! pipeline allocates 1 MiB chunks without end, kept their speed with the
//! threshold held: 362 and 335 MiB/s against 355 and 335 without, runs
//! taking turns (`scripts/bench-put.sh --size 1GiB --reps 3`).

/// Allocations from this size up get their own mapping, returned to the
/// system when freed. Shuffle chunks (1 MiB) and smaller stay in arenas.
pub const MMAP_THRESHOLD: usize = 4 << 20;

/// Holds glibc's mmap threshold at [`MMAP_THRESHOLD`] (setting it also
/// stops the dynamic raise). Call once at start; elsewhere (musl, another
/// OS) there is nothing to do.
pub fn hold_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's parameters; any value
    // is allowed, and allocations already made are unaffected.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
    }
}

#[cfg(test)]
mod tests {
    /// A buffer above the threshold is its own mapping: freeing it hands
    /// its pages back at once (RssAnon drops by about its size).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn a_freed_big_buffer_leaves_the_process() {
        fn rss_anon_kib() -> u64 {
            let s = std::fs::read_to_string("/proc/self/status").unwrap();
            s.lines()
                .find_map(|l| l.strip_prefix("RssAnon:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .unwrap()
        }
        super::hold_mmap_threshold();
        for _ in 0..4 {
            // Freed big buffers would raise a dynamic threshold past 8 MiB.
            drop(std::hint::black_box(vec![1u8; 24 << 20]));
        }
        let v = std::hint::black_box(vec![1u8; 8 << 20]);
        let with = rss_anon_kib();
        drop(v);
        let without = rss_anon_kib();
        assert!(
            with >= without + 7 * 1024,
            "8 MiB freed, RssAnon {with} KiB -> {without} KiB"
        );
    }
}
