//! What a job's owner (and an admin) may that others may not: change the
//! job, and see it in full.
//!
//! On a shared cluster everyone needs the queue: whose jobs run, in which
//! pool, how far along. A job's details are its owner's business: its
//! input and output paths, counters, errors and task history can reveal
//! what it computes on. So, as Hadoop does by default (only the owner and
//! the admins pass `mapreduce.job.acl-view-job`), everyone else gets the
//! [`SUMMARY_FIELDS`] of a job in lists, and a refusal where they ask for
//! one job's details. A `reader` owns no jobs, so it sees every job in
//! summary: dashboards of the queue, not of the data.

use crate::error::{MasterError, Result};
use rpc::auth::Identity;
use serde_json::Value;

/// The fields of a job's summary (`mr job status --json`) that every role
/// sees: what a queue view needs. Every other field is absent for a job
/// the caller neither owns nor administers.
pub const SUMMARY_FIELDS: &[&str] = &[
    "job_id",
    "job",
    "owner",
    "queue",
    "scheduler",
    "state",
    "submit_ms",
    "end_ms",
    "exec_time_s",
    "maps",
    "reduces",
    "progress",
];

/// A job's owner; one from before owners were recorded is the admin's.
fn owner_of(job: &Value) -> &str {
    job["owner"].as_str().unwrap_or(rpc::auth::ADMIN_NAME)
}

/// Refuses (and logs) a change to job `id`, summarised as `job`, by
/// someone who neither owns it nor is an admin.
pub fn may_change(who: &Identity, job: &Value, id: u64) -> Result<()> {
    let owner = owner_of(job);
    if who.owns_or_admin(owner) {
        return Ok(());
    }
    tracing::warn!(user = %who.name, job = id, owner, "permission denied: not the job's owner");
    Err(MasterError::PermissionDenied(format!(
        "permission denied: job {id} belongs to {owner:?}; user {:?} may only change their own jobs",
        who.name
    )))
}

/// Refuses (and logs) a request for job `id`'s details (its status, its
/// history, its tasks) by someone who neither owns it nor is an admin.
pub fn may_see(who: &Identity, job: &Value, id: u64) -> Result<()> {
    let owner = owner_of(job);
    if who.owns_or_admin(owner) {
        return Ok(());
    }
    tracing::warn!(user = %who.name, job = id, owner, "permission denied: another's job details");
    Err(MasterError::PermissionDenied(format!(
        "permission denied: job {id} belongs to {owner:?}; user {:?} (role {}) sees only the \
         summary of others' jobs (`mr job list`, GET /api/jobs), its details only its owner \
         and admins",
        who.name,
        who.role.as_str()
    )))
}

/// `job` as `who` may see it in a list: whole when they own it or are an
/// admin, else only its [`SUMMARY_FIELDS`].
pub fn view_for(who: &Identity, job: Value) -> Value {
    if who.owns_or_admin(owner_of(&job)) {
        return job;
    }
    let Value::Object(mut all) = job else {
        return job;
    };
    all.retain(|k, _| SUMMARY_FIELDS.contains(&k.as_str()));
    Value::Object(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpc::auth::Role;

    fn id(name: &str, role: Role) -> Identity {
        Identity {
            name: name.into(),
            role,
            worker: false,
        }
    }

    #[test]
    fn owner_and_admin_only() {
        let (ann, bob, adm) = (
            id("ann", Role::User),
            id("bob", Role::User),
            id("admin", Role::Admin),
        );
        let job = serde_json::json!({"owner": "ann"});
        assert!(may_change(&ann, &job, 1).is_ok());
        assert!(may_change(&adm, &job, 1).is_ok());
        let e = may_change(&bob, &job, 1).unwrap_err();
        assert!(matches!(e, MasterError::PermissionDenied(_)), "{e}");
        // A job from before owners were recorded is the admin's.
        assert!(may_change(&ann, &serde_json::json!({}), 1).is_err());
    }

    #[test]
    fn others_see_the_summary_fields_only() {
        let job = serde_json::json!({
            "job_id": 3, "job": "wordcount", "owner": "ann", "queue": "ann",
            "scheduler": "fair", "state": "running", "submit_ms": 5, "end_ms": null,
            "exec_time_s": 1.5, "maps": 2, "reduces": 1,
            "progress": {"maps_done": 1, "maps_running": 1, "reduces_done": 0, "reduces_running": 0},
            "input": ["/secret/in"], "output": "/secret/out", "error": null,
            "counters": {"records": 7}, "bytes": {"local": 9}, "locality": {"node_local": 1},
        });
        let (ann, bob, rob, adm) = (
            id("ann", Role::User),
            id("bob", Role::User),
            id("rob", Role::Reader),
            id("admin", Role::Admin),
        );
        assert_eq!(view_for(&ann, job.clone()), job);
        assert_eq!(view_for(&adm, job.clone()), job);
        for who in [&bob, &rob] {
            let v = view_for(who, job.clone());
            let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
            keys.sort_unstable();
            let mut want = SUMMARY_FIELDS.to_vec();
            want.sort_unstable();
            assert_eq!(keys, want, "{}", who.name);
            assert_eq!(v["progress"], job["progress"]);
        }
        assert!(may_see(&ann, &job, 3).is_ok() && may_see(&adm, &job, 3).is_ok());
        let e = may_see(&rob, &job, 3).unwrap_err();
        assert!(
            matches!(e, MasterError::PermissionDenied(ref m) if m.contains("\"rob\" (role reader)")),
            "{e}"
        );
    }
}
