//! Block access tokens at the master's edge: the core decides which blocks
//! and targets an answer names; here each answer gets the tokens that let
//! its receiver act on exactly those (`common::blocktoken`). Signing at the
//! edge keeps keys and HMACs out of the lock's critical sections.

use common::blocktoken::{Access, Grant, Minter};
use proto::command::Kind;

/// The keys and shuffle secret, as workers receive them.
pub fn keys(m: &Minter, now_ms: u64) -> proto::BlockKeys {
    let (keys, shuffle_secret) = m.export(now_ms);
    proto::BlockKeys {
        keys: keys
            .into_iter()
            .map(|k| proto::BlockKey {
                id: k.id,
                secret: k.secret.into(),
                expires_ms: k.expires_ms,
            })
            .collect(),
        shuffle_secret: shuffle_secret.into(),
    }
}

/// A worker's answer: the current keys, a token for every copy it is told
/// to make (naming the copy's targets), and its job's shuffle token for
/// every reduce it is told to launch.
pub fn sign_reply(m: &Minter, r: &mut proto::HeartbeatResponse, now_ms: u64) {
    r.keys = Some(keys(m, now_ms));
    for c in &mut r.commands {
        match &mut c.kind {
            Some(Kind::Replicate(rep)) => {
                let b = rep.block.unwrap_or_default();
                rep.access_token = m
                    .sign(
                        Grant {
                            block_id: b.id,
                            generation: b.generation,
                            modes: Access::Replicate as u8,
                            user: String::new(),
                            targets: rep.targets.clone(),
                            expires_ms: 0,
                        },
                        now_ms,
                    )
                    .into();
            }
            Some(Kind::Launch(l)) if !l.task.is_some_and(|t| t.is_map) => {
                l.shuffle_token = m
                    .shuffle_token(l.task.map(|t| t.job_id).unwrap_or(0))
                    .into();
            }
            _ => {}
        }
    }
}

/// The write token of a new block: its generation, the caller, and the
/// pipeline's targets, which are the only addresses a target may forward
/// the block to.
pub fn sign_new_block(m: &Minter, user: &str, r: &mut proto::AddBlockResponse, now_ms: u64) {
    r.access_token = m
        .sign(
            Grant {
                block_id: r.block_id,
                generation: r.generation,
                modes: Access::Write as u8,
                user: user.to_string(),
                targets: r.targets.iter().map(|t| t.addr.clone()).collect(),
                expires_ms: 0,
            },
            now_ms,
        )
        .into();
}

/// A read token for every block of a file, issued to `user`.
pub fn sign_file(m: &Minter, user: &str, f: &mut proto::FileStatus, now_ms: u64) {
    for b in &mut f.blocks {
        let info = b.block.unwrap_or_default();
        b.access_token = m
            .sign(
                Grant {
                    block_id: info.id,
                    generation: info.generation,
                    modes: Access::Read as u8,
                    user: user.to_string(),
                    targets: Vec::new(),
                    expires_ms: 0,
                },
                now_ms,
            )
            .into();
    }
}
