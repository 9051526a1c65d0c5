//! Policies by name, with their parameters, as the master config and
//! `mr admin scheduler set` select them.

use super::acl::Acl;
use super::atlas::Atlas;
use super::capacity::CapacityOrder;
use super::clqlmrs::Clqlmrs;
use super::compat_nb::CompatNb;
use super::compose::{Composed, FifoOrder, JobOrder, Technique};
use super::delay::Delay;
use super::error::SchedError;
use super::fair::FairOrder;
use super::fifo::Fifo;
use super::fifo::HadoopDefault;
use super::hybsmrp::HybsmrpOrder;
use super::lsap::Lsap;
use super::lsap_fair::LsapFair;
use super::matchmaking::Matchmaking;
use super::Scheduler;
use common::config::{ClusterConfig, ConfigError};
use std::collections::BTreeMap;

/// Every name `build` accepts with default parameters. `ORDER+TECHNIQUE`
/// composes a job order (`fifo`) with a locality technique (`default`,
/// `delay`, `matchmaking`); the short names are the papers' combinations.
pub const NAMES: &[&str] = &[
    "fifo",
    "fair",
    "capacity",
    "delay",
    "matchmaking",
    "fifo+delay",
    "fifo+matchmaking",
    "fair+delay",
    "fair+matchmaking",
    "capacity+delay",
    "capacity+matchmaking",
    "hybsmrp",
    "hybsmrp+default",
    "hybsmrp+delay",
    "fifo+localization-id",
    "fair+localization-id",
    "lsap",
    "lsap-fair",
    "clqlmrs",
    "clqlmrs-wait",
    "acl",
    "compat-nb",
    "atlas",
];

const ORDERS: &[&str] = &["fifo", "fair", "capacity", "hybsmrp"];
const TECHNIQUES: &[&str] = &["default", "delay", "matchmaking", "localization-id"];

/// The parameters each component takes, to route `key=value`s.
fn keys_of(component: &str) -> &'static [&'static str] {
    match component {
        "fair" => &["min_shares", "weights"],
        "capacity" => &["queues"],
        "delay" => &["node_wait", "rack_wait"],
        "hybsmrp" => &["alpha", "beta", "gamma"],
        _ => &[],
    }
}

fn order(
    name: &str,
    params: &BTreeMap<String, String>,
) -> Option<Result<Box<dyn JobOrder>, SchedError>> {
    Some(match name {
        "fifo" => Ok(Box::new(FifoOrder) as Box<dyn JobOrder>),
        "fair" => FairOrder::from_params(params).map(|o| Box::new(o) as Box<dyn JobOrder>),
        "capacity" => CapacityOrder::from_params(params).map(|o| Box::new(o) as Box<dyn JobOrder>),
        "hybsmrp" => HybsmrpOrder::from_params(params).map(|o| Box::new(o) as Box<dyn JobOrder>),
        _ => return None,
    })
}

fn technique(
    name: &str,
    params: &BTreeMap<String, String>,
) -> Option<Result<Box<dyn Technique>, SchedError>> {
    Some(match name {
        "default" => Ok(Box::new(HadoopDefault) as Box<dyn Technique>),
        "delay" => Delay::from_params(params).map(|d| Box::new(d) as Box<dyn Technique>),
        "matchmaking" => {
            Matchmaking::from_params(params).map(|m| Box::new(m) as Box<dyn Technique>)
        }
        "localization-id" => Matchmaking::from_params(params)
            .map(|_| Box::new(Matchmaking::localization_id()) as Box<dyn Technique>),
        _ => return None,
    })
}

/// A composed name's `'static` form: names are few and live as long as the
/// master, so each distinct one is leaked once.
fn intern(name: &str) -> &'static str {
    use std::sync::Mutex;
    static NAMES_SEEN: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut seen = common::sync::lock(&NAMES_SEEN);
    if let Some(s) = seen.iter().find(|s| **s == name) {
        return s;
    }
    let s: &'static str = Box::leak(name.to_string().into_boxed_str());
    seen.push(s);
    s
}

// A plain type, in the base crate: `cluster.toml`'s `[scheduler]` reads
// into it where no policy is linked.
pub use common::config::SchedulerSpec;

/// Builds a policy, refusing unknown names and parameters.
pub fn build(spec: &SchedulerSpec) -> Result<Box<dyn Scheduler>, SchedError> {
    let takes = |allowed: &[&str]| -> Result<(), SchedError> {
        for k in spec.params.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(SchedError::UnknownParam {
                    name: spec.name.clone(),
                    param: k.clone(),
                    takes: if allowed.is_empty() {
                        "no parameters".into()
                    } else {
                        allowed.join(", ")
                    },
                });
            }
        }
        Ok(())
    };
    let (ord, tech) = match spec.name.as_str() {
        "fifo" => {
            takes(&[])?;
            return Ok(Box::new(Fifo));
        }
        "lsap" => return Ok(Box::new(Lsap::from_params(&spec.params)?)),
        "lsap-fair" => return Ok(Box::new(LsapFair::from_params(&spec.params)?)),
        "clqlmrs" => return Ok(Box::new(Clqlmrs::from_params(&spec.params)?)),
        "clqlmrs-wait" => {
            let mut p = spec.params.clone();
            p.entry("wait".into()).or_insert_with(|| "hb".into());
            return Ok(Box::new(Clqlmrs::from_params(&p)?));
        }
        "acl" => return Ok(Box::new(Acl::from_params(&spec.params)?)),
        "compat-nb" => return Ok(Box::new(CompatNb::from_params(&spec.params)?)),
        "atlas" => return Ok(Box::new(Atlas::from_params(&spec.params)?)),
        "fair" | "capacity" => (spec.name.as_str(), "default"),
        "hybsmrp" => ("hybsmrp", "localization-id"),
        "delay" | "matchmaking" => ("fifo", spec.name.as_str()),
        composed => match composed.split_once('+') {
            Some((o, t)) if ORDERS.contains(&o) && TECHNIQUES.contains(&t) => (o, t),
            _ => {
                return Err(SchedError::UnknownName {
                    name: composed.to_string(),
                    known: NAMES.join(", "),
                })
            }
        },
    };
    let mut allowed: Vec<&str> = keys_of(ord).to_vec();
    allowed.extend_from_slice(keys_of(tech));
    takes(&allowed)?;
    let pick = |keys: &[&str]| -> BTreeMap<String, String> {
        spec.params
            .iter()
            .filter(|(k, _)| keys.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let unknown = || SchedError::UnknownName {
        name: spec.name.clone(),
        known: NAMES.join(", "),
    };
    let order = order(ord, &pick(keys_of(ord))).ok_or_else(unknown)??;
    let technique = technique(tech, &pick(keys_of(tech))).ok_or_else(unknown)??;
    Ok(Box::new(Composed {
        name: intern(&spec.name),
        order,
        technique,
    }))
}

/// The `[scheduler]` check `ClusterConfig::validate` leaves to this crate
/// (the base crate links no policy): the name and parameters must build.
/// Its error reads as the loader's own.
pub fn check_config(cfg: &ClusterConfig) -> Result<(), ConfigError> {
    build(&cfg.scheduler.spec())
        .map(drop)
        .map_err(|e| ConfigError::Invalid(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_unknown() {
        assert!(matches!(
            build(&SchedulerSpec::new("nope")),
            Err(SchedError::UnknownName { .. })
        ));
        let mut s = SchedulerSpec::new("fifo");
        s.params.insert("x".into(), "1".into());
        let e = build(&s).err().unwrap();
        assert!(e.to_string().contains("no parameter"), "{e}");
        assert_eq!(build(&SchedulerSpec::new("fifo")).unwrap().name(), "fifo");
        for n in NAMES {
            assert_eq!(build(&SchedulerSpec::new(n)).unwrap().name(), *n);
        }
        let mut d = SchedulerSpec::new("fifo+delay");
        d.params.insert("node_wait".into(), "3".into());
        assert!(build(&d).is_ok());
        d.params.insert("nope".into(), "3".into());
        assert!(build(&d).is_err());
        assert!(build(&SchedulerSpec::new("fifo+nothing")).is_err());
    }

    #[test]
    fn a_cluster_file_naming_an_unknown_policy_or_parameter_is_invalid() {
        let base = "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = \"/tmp/m\"\n";
        let cfg = |sched: &str| ClusterConfig::parse(&format!("{base}{sched}")).unwrap();
        assert!(check_config(&cfg("")).is_ok());
        assert!(check_config(&cfg("[scheduler]\nname = \"fifo+delay\"\n")).is_ok());
        let e = check_config(&cfg("[scheduler]\nname = \"nope\"\n")).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Invalid(m) if m.contains("unknown scheduler")),
            "{e}"
        );
        let e = check_config(&cfg(
            "[scheduler]\nname = \"delay\"\n[scheduler.params]\nbogus = 1\n",
        ))
        .unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
    }
}
