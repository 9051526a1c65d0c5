//! Memory: big buffers handed back to the system when freed, and huge pages
//! for the sort buffer's index.
//!
//! - [`heap`]: big buffers go back to the system when freed.
//! - [`hugepages`]: transparent huge pages asked for a big buffer.
//! - [`spares`]: big buffers kept from one task for the next.

pub mod heap;
pub mod hugepages;
pub mod spares;
