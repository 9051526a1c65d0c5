//! Who may do what to a path: an owner and `rwx` bits for the owner and for
//! everyone else, as HDFS's permission checker without groups. The admin
//! (HDFS's superuser) and the workers pass every check; a `reader` is
//! stopped before it gets here by its role (`rpc::auth`).
//!
//! The checks follow HDFS's `FSPermissionChecker`: reading a file needs
//! `r` on it; listing a directory `r` on it; creating or deleting an entry
//! `w` on the directory that holds it (for missing parents, on the nearest
//! one that exists); changing a mode, being the owner; changing an owner,
//! being the admin. Traversal (`x` on every ancestor) is not checked:
//! paths are not secrets here, and a file's own `r` bit guards its bytes.

use super::namespace::{DirMeta, Namespace};
use super::Blocks;
use crate::error::{MasterError, Result};
use common::path::DfsPath;
use rpc::auth::{Identity, Role, ADMIN_NAME};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    Read,
    Write,
}

impl Want {
    fn bit(self) -> u32 {
        match self {
            Want::Read => 0o4,
            Want::Write => 0o2,
        }
    }

    fn verb(self) -> &'static str {
        match self {
            Want::Read => "read",
            Want::Write => "write",
        }
    }
}

/// The owner a record names; empty (written before owners were kept) is
/// the admin's.
pub fn owner_name(owner: &str) -> &str {
    if owner.is_empty() {
        ADMIN_NAME
    } else {
        owner
    }
}

/// Whether `who` may `want` a path owned by `owner` with `mode`.
pub fn allows(who: &Identity, owner: &str, mode: u32, want: Want) -> bool {
    if who.role == Role::Admin || who.worker {
        return true;
    }
    let bits = if owner_name(owner) == who.name {
        mode >> 6
    } else {
        mode
    };
    bits & want.bit() != 0
}

/// Parses an octal mode as `mr fs chmod` takes it (`750`, `0640`).
pub fn parse_mode(text: &str) -> std::result::Result<u32, String> {
    let t = text.trim();
    match u32::from_str_radix(t, 8) {
        Ok(m) if !t.is_empty() && m <= 0o777 => Ok(m),
        _ => Err(format!(
            "mode {text:?}: give three octal digits for owner, group and others, e.g. 755 or 640"
        )),
    }
}

fn denied(who: &Identity, want: Want, path: &str, owner: &str, mode: u32) -> MasterError {
    let owner = owner_name(owner);
    tracing::warn!(user = %who.name, path, owner, mode = format!("{mode:o}"), "permission denied");
    MasterError::PermissionDenied(format!(
        "permission denied: user {:?} may not {} {path} (owner {owner:?}, mode {})",
        who.name,
        want.verb(),
        &rpc::json::mode_string(false, mode)[1..]
    ))
}

fn check_dir(ns: &Namespace, who: &Identity, dir: &str, want: Want) -> Result<()> {
    let d = ns.dir(dir).unwrap_or_else(DirMeta::implied);
    if dir == "/" || allows(who, &d.owner, d.mode, want) {
        return Ok(());
    }
    Err(denied(who, want, dir, &d.owner, d.mode))
}

impl Blocks {
    /// Reading a file's bytes (its read tokens) or listing a directory.
    pub fn may_read(&self, raw: &str, who: &Identity) -> Result<()> {
        let path = DfsPath::parse(if raw.is_empty() { "/" } else { raw })?;
        if let Some(f) = self.ns.files.get(path.as_str()) {
            if allows(who, &f.owner, f.mode, Want::Read) {
                return Ok(());
            }
            return Err(denied(who, Want::Read, path.as_str(), &f.owner, f.mode));
        }
        check_dir(&self.ns, who, path.as_str(), Want::Read)
    }

    /// Adding `raw` (a file, or a directory by `mkdir`): `w` on the
    /// directory that will hold it, or on the nearest existing one when
    /// parents are missing.
    pub fn may_create(&self, raw: &str, who: &Identity) -> Result<()> {
        let path = DfsPath::parse_file(raw)?;
        let (ancestor, _) = self.ns.existing_ancestor(path.as_str());
        check_dir(&self.ns, who, &ancestor, Want::Write)
    }

    /// Deleting `raw` (or replacing the file there): `w` on its parent, and
    /// every file at or under it the caller's own (or the admin's call).
    pub fn may_delete(&self, raw: &str, who: &Identity) -> Result<()> {
        let path = DfsPath::parse(raw)?;
        if !path.is_root() {
            let (parent, missing) = self.ns.existing_ancestor(path.as_str());
            if missing.is_empty() {
                check_dir(&self.ns, who, &parent, Want::Write)?;
            }
        }
        self.may_change(raw, who)
    }

    /// `mr fs chmod`: the owner's or the admin's.
    pub fn may_set_mode(&self, raw: &str, who: &Identity) -> Result<()> {
        let path = DfsPath::parse(raw)?;
        let owner = match self.ns.files.get(path.as_str()) {
            Some(f) => f.owner.clone(),
            None => {
                let d = self.ns.dir(path.as_str()).ok_or_else(|| {
                    MasterError::NotFound(format!("{path}: no such file or directory"))
                })?;
                d.owner
            }
        };
        if who.owns_or_admin(owner_name(&owner)) {
            return Ok(());
        }
        tracing::warn!(user = %who.name, path = %path, "permission denied: chmod of another's path");
        Err(MasterError::PermissionDenied(format!(
            "permission denied: {path} belongs to {:?}; only its owner or an admin changes its mode",
            owner_name(&owner)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(name: &str, role: Role) -> Identity {
        Identity {
            name: name.into(),
            role,
            worker: false,
        }
    }

    #[test]
    fn owner_bits_for_the_owner_others_for_the_rest() {
        let ann = id("ann", Role::User);
        let bob = id("bob", Role::User);
        let admin = id("admin", Role::Admin);
        assert!(allows(&ann, "ann", 0o700, Want::Write));
        assert!(!allows(&bob, "ann", 0o700, Want::Read));
        assert!(allows(&bob, "ann", 0o744, Want::Read));
        assert!(!allows(&bob, "ann", 0o755, Want::Write));
        // The owner's own bits rule even when others have more.
        assert!(!allows(&ann, "ann", 0o077, Want::Read));
        assert!(allows(&admin, "ann", 0o000, Want::Write));
        // An empty owner is the admin's.
        assert!(!allows(&ann, "", 0o755, Want::Write));
    }

    #[test]
    fn modes_parse_as_octal() {
        assert_eq!(parse_mode("755"), Ok(0o755));
        assert_eq!(parse_mode("0640"), Ok(0o640));
        assert!(parse_mode("789").is_err());
        assert!(parse_mode("1777").is_err());
        assert!(parse_mode("").is_err());
    }
}
