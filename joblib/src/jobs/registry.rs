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

/// A fresh instance per call: the validators keep per-task state in the job,
/// so each task should look its job up (sharing one is still correct, only
/// slower to clean up after a failed task).
pub fn lookup(name: &str) -> Option<Arc<dyn Builtin>> {
    Some(match name {
        "wordcount" => Arc::new(WordCount::default()),
        "sort" => Arc::new(Sort),
        "terasort" => Arc::new(TeraSort),
        "teragen" => Arc::new(TeraGen),
        "randomtextwriter" => Arc::new(RandomTextWriter),
        "randomwriter" => Arc::new(RandomWriter),
        "teravalidate" => Arc::new(TeraValidate::default()),
        "sortvalidate" => Arc::new(SortValidate::default()),
        "swim" => Arc::new(Swim),
        _ => return None,
    })
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
    }
}
