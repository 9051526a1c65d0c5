//! WordCount's floor input: the files mapped, not read. Reading 1 GiB into
//! a buffer faults in and zeroes 1 GiB of fresh memory and copies every
//! byte once more, work the job's workers do not do (they map their
//! blocks); counting from the page cache's own pages leaves the floor
//! only the counting.

use super::FloorError;
use memmap2::Mmap;
use std::fs::File;
use std::path::PathBuf;

/// Every input file mapped, in the order given. An empty file has no
/// mapping (a zero-length one is refused by `mmap`) and no bytes.
pub struct Mapped {
    maps: Vec<Option<Mmap>>,
}

impl Mapped {
    pub fn open(paths: &[PathBuf]) -> Result<Mapped, FloorError> {
        if paths.is_empty() {
            return Err(FloorError::NoInput);
        }
        let mut maps = Vec::with_capacity(paths.len());
        for p in paths {
            let io = |source| FloorError::Io {
                path: p.clone(),
                source,
            };
            let f = File::open(p).map_err(io)?;
            let meta = f.metadata().map_err(io)?;
            if !meta.is_file() {
                return Err(FloorError::NotAFile(p.clone()));
            }
            if meta.len() == 0 {
                maps.push(None);
                continue;
            }
            // SAFETY: the benchmark's input files are not written while the
            // floor runs (bench.sh copies them once, before every run).
            let m = unsafe { Mmap::map(&f) }.map_err(io)?;
            maps.push(Some(m));
        }
        Ok(Mapped { maps })
    }

    /// Each file's bytes, in the order given.
    pub fn files(&self) -> Vec<&[u8]> {
        self.maps
            .iter()
            .map(|m| m.as_deref().unwrap_or(&[]))
            .collect()
    }

    pub fn bytes(&self) -> u64 {
        self.files().iter().map(|f| f.len() as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_mapped_in_order_empty_ones_too() {
        let dir = std::env::temp_dir().join(format!("mr-floor-mapped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let texts: [&[u8]; 3] = [b"alpha beta\n", b"", b"gamma"];
        let paths: Vec<PathBuf> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let p = dir.join(format!("part-{i}"));
                std::fs::write(&p, t).unwrap();
                p
            })
            .collect();
        let m = Mapped::open(&paths).unwrap();
        assert_eq!(m.files(), texts.to_vec());
        assert_eq!(m.bytes(), 16);
        assert!(matches!(Mapped::open(&[]), Err(FloorError::NoInput)));
        let err = Mapped::open(&[dir.join("missing")]).err().unwrap();
        assert!(err.to_string().contains("missing"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
