//! Which run `mr sim heldout` fits its model on, the fit itself, and the
//! control it is judged against (the rates the config sets, no fitting).

use super::heldout::TraceDir;
use anyhow::bail;
use sim::model::TaskModel;
use std::path::{Path, PathBuf};

/// The rate-from-config model: the default compute and reduce rates,
/// node-local and cache reads at the default's rates, ports at the host
/// rate and rack uplinks at the uplink rate as the config shapes them, the
/// network shared.
pub fn config_model(host_rate: Option<f64>, uplink_rate: Option<f64>) -> TaskModel {
    let mut m = TaskModel::default();
    if let Some(h) = host_rate {
        m.bandwidth[2] = h;
        m.bandwidth[3] = h;
    }
    if let Some(u) = uplink_rate {
        m.bandwidth[4] = u;
    }
    m.shared_reads = true;
    m
}

/// Which run the model is fitted on: the first directory's `load`,
/// `policy` and repetition (default: its first load and policy, rep 1).
#[derive(Debug, Clone, Default)]
pub struct FitChoice {
    pub load: Option<String>,
    pub policy: Option<String>,
    pub rep: u32,
}

/// The run the model is fitted on: its history directory, load, policy
/// and repetition.
pub struct Fitted {
    pub dir: PathBuf,
    pub load: String,
    pub policy: String,
    pub rep: u32,
}

pub fn fitted_run(first: &TraceDir, fit: &FitChoice) -> anyhow::Result<Fitted> {
    let load = fit.load.clone().unwrap_or_else(|| first.loads[0].clone());
    let policy = fit
        .policy
        .clone()
        .unwrap_or_else(|| first.policies[0].clone());
    let rep = fit.rep.max(1);
    let dir = first
        .path
        .join("history")
        .join(format!("load-{load}"))
        .join(&policy)
        .join(format!("rep{rep}"));
    if !dir.is_dir() {
        bail!(
            "no history of the fitted run: {} (loads: {}; policies: {})",
            dir.display(),
            first.loads.join(", "),
            first.policies.join(", ")
        );
    }
    Ok(Fitted {
        dir,
        load,
        policy,
        rep,
    })
}

/// The model fitted on the run's history, with the calibration's notes.
pub fn fit_model(first: &TraceDir, fit_dir: &Path) -> anyhow::Result<(TaskModel, Vec<String>)> {
    let err = |e: String| anyhow::anyhow!("fitting on {}: {e}", fit_dir.display());
    // Levels the fitted run never read at keep the configured rates, as
    // the control has them.
    let prior = config_model(first.meta.shape.host_rate, first.meta.shape.uplink_rate);
    let (mut fitted, mut notes) = sim::calibrate::load(fit_dir)
        .and_then(|s| sim::calibrate::fit_over(&s, prior))
        .map_err(err)?;
    let reduces = sim::calibrate::load_reduces(fit_dir).map_err(err)?;
    notes.push(sim::calibrate::fit_reduce(&mut fitted, &reduces));
    let tails = sim::calibrate::load_tails(fit_dir).map_err(err)?;
    notes.push(sim::calibrate::fit_tail(&mut fitted, &tails));
    Ok((fitted, notes))
}
