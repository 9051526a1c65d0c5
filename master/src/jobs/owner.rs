//! Who may change a job: its owner, or an admin. Reading stays open to
//! every role, so that the UI and `mr job list` show the whole cluster.

use crate::error::{MasterError, Result};
use common::auth::Identity;

/// Refuses (and logs) a change to job `id`, summarised as `job`, by
/// someone who neither owns it nor is an admin.
pub fn may_change(who: &Identity, job: &serde_json::Value, id: u64) -> Result<()> {
    let owner = job["owner"].as_str().unwrap_or(common::auth::ADMIN_NAME);
    if who.owns_or_admin(owner) {
        return Ok(());
    }
    tracing::warn!(user = %who.name, job = id, owner, "permission denied: not the job's owner");
    Err(MasterError::PermissionDenied(format!(
        "permission denied: job {id} belongs to {owner:?}; user {:?} may only change their own jobs",
        who.name
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::auth::Role;

    #[test]
    fn owner_and_admin_only() {
        let ann = Identity {
            name: "ann".into(),
            role: Role::User,
            worker: false,
        };
        let bob = Identity {
            name: "bob".into(),
            ..ann.clone()
        };
        let adm = Identity {
            name: "admin".into(),
            role: Role::Admin,
            worker: false,
        };
        let job = serde_json::json!({"owner": "ann"});
        assert!(may_change(&ann, &job, 1).is_ok());
        assert!(may_change(&adm, &job, 1).is_ok());
        let e = may_change(&bob, &job, 1).unwrap_err();
        assert!(matches!(e, MasterError::PermissionDenied(_)), "{e}");
        // A job from before owners were recorded is the admin's.
        assert!(may_change(&ann, &serde_json::json!({}), 1).is_err());
    }
}
