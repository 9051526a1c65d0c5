//! Roles and the reserved user names: what the cluster file declares
//! (`config`) and what tokens carry (`auth`), apart from both.

/// What a token may do; each role may do everything the ones before it may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The read-only API and UI: status, files' metadata, jobs.
    Reader,
    /// Submit jobs, kill their own, put and delete files.
    User,
    /// Everything: the scheduler, caches, pins, safe mode, any job.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Reader => "reader",
            Role::User => "user",
            Role::Admin => "admin",
        }
    }
}

/// The name the cluster's own `token` goes by.
pub const ADMIN_NAME: &str = "admin";
/// The name the workers' identity goes by.
pub const WORKER_NAME: &str = "worker";
