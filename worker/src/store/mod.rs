//! The blocks this worker stores: one file per block with its CRC32C,
//! the byte-bounded LRU cache, reads through both, the write pipeline, the
//! periodic checksum scan and the quarantine of unknown blocks.
//!
//! - [`block`]: the messages of a block write between workers, and its
//!   failures.
//! - [`blocks`]: the owner of the store and the cache, the handle the
//!   other groups hold.
//! - [`disk`]: one file per block plus its CRC32C, read through `memmap2`.
//! - [`cache`]: the byte-bounded LRU block cache and its change log.
//! - [`scanner`]: the periodic checksum scan of every stored block.
//! - [`quarantine`]: blocks the master does not know, kept for a grace period.
//! - [`reads`]: a stored block read, cache first, a corrupt replica reported.
//! - [`pipeline`]: a block write as a pipeline target (HDFS's write pipeline).
//! - [`prealloc`]: disk space reserved before a file of known size is written.

pub mod block;
pub mod blocks;
pub mod cache;
pub mod disk;
pub mod pipeline;
pub mod prealloc;
pub mod quarantine;
pub mod reads;
pub mod scanner;
