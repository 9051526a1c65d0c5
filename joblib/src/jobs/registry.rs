//! The built-in jobs by name, as `hadoop jar hadoop-examples.jar NAME` finds
//! them.

use super::gen::{RandomTextWriter, RandomWriter};
use super::sort::Sort;
use super::swim::Swim;
use super::terasort::{SortValidate, TeraGen, TeraSort, TeraValidate};
use super::wordcount::WordCount;
use super::Builtin;
use std::sync::Arc;

pub const NAMES: &[&str] = &[
    "wordcount",
    "sort",
    "terasort",
    "teragen",
    "randomtextwriter",
    "randomwriter",
    "teravalidate",
    "sortvalidate",
    "swim",
];

/// Makes a fresh instance of one built-in job.
pub type Make = fn() -> Arc<dyn Builtin>;

/// The jobs a process runs in its own code, by name. The binary builds it
/// and hands it to whatever resolves jobs (the worker's tasks): which jobs
/// are built in is a value, not a `match` every caller compiles in, and a
/// job that is not in it comes as a command or a program instead.
#[derive(Clone)]
pub struct Registry {
    jobs: std::collections::BTreeMap<&'static str, Make>,
}

impl Registry {
    /// The nine jobs of this library.
    pub fn builtins() -> Registry {
        let jobs: [(&'static str, Make); 9] = [
            ("wordcount", || Arc::new(WordCount::default())),
            ("sort", || Arc::new(Sort)),
            ("terasort", || Arc::new(TeraSort)),
            ("teragen", || Arc::new(TeraGen)),
            ("randomtextwriter", || Arc::new(RandomTextWriter)),
            ("randomwriter", || Arc::new(RandomWriter)),
            ("teravalidate", || Arc::new(TeraValidate::default())),
            ("sortvalidate", || Arc::new(SortValidate::default())),
            ("swim", || Arc::new(Swim)),
        ];
        Registry {
            jobs: jobs.into_iter().collect(),
        }
    }

    /// This registry with one more job (or another under a known name).
    pub fn with(mut self, name: &'static str, make: Make) -> Registry {
        self.jobs.insert(name, make);
        self
    }

    /// A fresh instance per call: the validators keep per-task state in
    /// the job, so each task should look its job up (sharing one is still
    /// correct, only slower to clean up after a failed task).
    pub fn lookup(&self, name: &str) -> Option<Arc<dyn Builtin>> {
        self.jobs.get(name).map(|make| make())
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.jobs.keys().copied()
    }
}

/// Job `name` among this library's jobs ([`Registry::builtins`]).
pub fn lookup(name: &str) -> Option<Arc<dyn Builtin>> {
    Registry::builtins().lookup(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_resolves_to_itself() {
        for n in NAMES {
            assert_eq!(lookup(n).unwrap().name(), *n);
        }
        assert!(lookup("nope").is_none());
        let r = Registry::builtins();
        assert_eq!(r.names().count(), NAMES.len());
        assert!(NAMES.iter().all(|n| r.names().any(|m| m == *n)));
        let r = r.with("wc2", || Arc::new(WordCount::default()));
        assert_eq!(r.lookup("wc2").unwrap().name(), "wordcount");
    }
}
