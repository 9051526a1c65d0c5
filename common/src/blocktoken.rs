//! Block access tokens and shuffle tokens: what a worker checks before it
//! reads, writes or replicates a block, or serves a map's output.
//!
//! A cluster token says who the caller is; it cannot say which blocks that
//! caller may touch, because workers do not hold the namespace. HDFS's answer
//! (`BlockTokenSecretManager`, HADOOP-4359) is followed here: the master,
//! which does hold it, signs a short-lived token naming the block, its
//! generation, the access modes, the user and (for writes) the pipeline's
//! targets, with an HMAC-SHA256 key it shares with the workers over their
//! registration channel. Keys roll every [`KEY_INTERVAL`]; a key stays valid
//! while a token signed with it can still be unexpired, so at most two are
//! current at a time. Keys live in memory only, as HDFS's do: a restarted
//! master makes new ones and hands them out at re-registration.
//!
//! Shuffle fetches carry a per-job token instead (Hadoop's job token and its
//! `UrlHash`): an HMAC of the job's id under a secret of this master's
//! incarnation, so that a map's output is served only to the reducers of
//! its own job.

use ring::hmac;
use std::sync::Mutex;

/// How long a block token is honoured: HDFS's
/// `dfs.block.access.token.lifetime` (600 min).
pub const TOKEN_LIFETIME_MS: u64 = 10 * 3600 * 1000;
/// How often the master makes a new key: HDFS's
/// `dfs.block.access.key.update.interval` (600 min).
pub const KEY_INTERVAL_MS: u64 = 10 * 3600 * 1000;
/// Largest encoded token a worker parses.
pub const MAX_TOKEN_LEN: usize = 4096;
const VERSION: u8 = 1;
const MAC_LEN: usize = 32;

/// What a token lets its holder do with its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read = 1,
    /// A client's or a task's pipeline write of a new block.
    Write = 2,
    /// A worker copying a replica on the master's command.
    Replicate = 4,
}

/// One key of the ring: `id` names it in every token it signs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockKey {
    pub id: u32,
    pub secret: Vec<u8>,
    /// Unix ms after which no token signed with it is valid any more.
    pub expires_ms: u64,
}

/// What a token grants.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Grant {
    pub block_id: u64,
    pub generation: u64,
    /// [`Access`] bits.
    pub modes: u8,
    /// The user it was issued to; empty for the workers' own copies.
    pub user: String,
    /// Writes: the addresses the block may be forwarded to, in any order.
    pub targets: Vec<String>,
    pub expires_ms: u64,
}

impl Grant {
    pub fn allows(&self, a: Access) -> bool {
        self.modes & a as u8 != 0
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error(
        "no block access token: ask the master for the block's location (a token comes with it)"
    )]
    Missing,
    #[error("malformed block access token")]
    Malformed,
    #[error("block access token signed with an unknown key {0} (expired, or from a master that has since restarted): ask the master again")]
    UnknownKey(u32),
    #[error("block access token has a bad signature")]
    BadSignature,
    #[error("block access token expired {0} ms ago: ask the master again")]
    Expired(u64),
    #[error("block access token is for block {token}, not block {asked}")]
    WrongBlock { token: u64, asked: u64 },
    #[error("block access token is for generation {token} of block {id}, not {asked}")]
    WrongGeneration { id: u64, token: u64, asked: u64 },
    #[error("block access token does not allow {0:?}")]
    WrongMode(Access),
    #[error("block access token was issued to {token:?}, not to {caller:?}")]
    WrongUser { token: String, caller: String },
    #[error("block access token does not name {0} as a target of this write")]
    WrongTarget(String),
    #[error("no block keys yet: this worker has not registered with the master")]
    NoKeys,
    #[error("no valid shuffle token for job {0}")]
    BadShuffleToken(u64),
}

/// The master's side: makes keys, rolls them, signs tokens.
pub struct Minter {
    inner: Mutex<MinterState>,
}

struct MinterState {
    keys: Vec<BlockKey>,
    next_id: u32,
    next_roll_ms: u64,
    shuffle_secret: Vec<u8>,
}

fn random_bytes() -> Vec<u8> {
    let mut b = vec![0u8; 32];
    // A failure of the system's random source is not recoverable.
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut b)
        .expect("the system's random source");
    b
}

impl Minter {
    /// A ring whose first key is made at `now_ms`.
    pub fn new(now_ms: u64) -> Self {
        let m = Minter {
            inner: Mutex::new(MinterState {
                keys: Vec::new(),
                next_id: (now_ms as u32) | 1,
                next_roll_ms: 0,
                shuffle_secret: random_bytes(),
            }),
        };
        drop(m.roll(now_ms));
        m
    }

    /// Makes a new key when the current one is due, and forgets the ones
    /// whose tokens have all expired. Called on every use: no timer needed.
    fn roll(&self, now_ms: u64) -> std::sync::MutexGuard<'_, MinterState> {
        let mut s = crate::sync::lock(&self.inner);
        if now_ms >= s.next_roll_ms {
            let id = s.next_id;
            s.next_id = s.next_id.wrapping_add(1);
            s.keys.push(BlockKey {
                id,
                secret: random_bytes(),
                expires_ms: now_ms + KEY_INTERVAL_MS + TOKEN_LIFETIME_MS,
            });
            s.next_roll_ms = now_ms + KEY_INTERVAL_MS;
        }
        s.keys.retain(|k| k.expires_ms > now_ms);
        s
    }

    /// The keys workers need to check every token still valid, and the
    /// shuffle secret.
    pub fn export(&self, now_ms: u64) -> (Vec<BlockKey>, Vec<u8>) {
        let s = self.roll(now_ms);
        (s.keys.clone(), s.shuffle_secret.clone())
    }

    /// A token granting `g` (its `expires_ms` is set here).
    pub fn sign(&self, mut g: Grant, now_ms: u64) -> Vec<u8> {
        let s = self.roll(now_ms);
        let key = s.keys.last().expect("roll keeps the current key");
        g.expires_ms = now_ms + TOKEN_LIFETIME_MS;
        encode(&g, key)
    }

    /// The grant of a token this master signed, checked as a worker
    /// checks it (a client's corrupt-replica report carries its read
    /// token).
    pub fn check_block(
        &self,
        token: &[u8],
        block_id: u64,
        mode: Access,
        user: &str,
        now_ms: u64,
    ) -> Result<Grant, TokenError> {
        let v = Verifier::default();
        let (keys, secret) = self.export(now_ms);
        v.update(keys, secret, now_ms);
        v.check_block(token, block_id, None, mode, Some(user), now_ms)
    }

    /// Job `job_id`'s shuffle token.
    pub fn shuffle_token(&self, job_id: u64) -> Vec<u8> {
        let s = crate::sync::lock(&self.inner);
        shuffle_mac(&s.shuffle_secret, job_id)
    }
}

/// What a job's shuffle token is the HMAC of.
fn shuffle_message(job_id: u64) -> Vec<u8> {
    let mut msg = b"mr-shuffle\0".to_vec();
    msg.extend_from_slice(&job_id.to_le_bytes());
    msg
}

fn shuffle_mac(secret: &[u8], job_id: u64) -> Vec<u8> {
    let k = hmac::Key::new(hmac::HMAC_SHA256, secret);
    hmac::sign(&k, &shuffle_message(job_id)).as_ref().to_vec()
}

fn encode(g: &Grant, key: &BlockKey) -> Vec<u8> {
    let mut b = Vec::with_capacity(64 + g.user.len() + 24 * g.targets.len());
    b.push(VERSION);
    b.extend_from_slice(&key.id.to_le_bytes());
    b.extend_from_slice(&g.expires_ms.to_le_bytes());
    b.extend_from_slice(&g.block_id.to_le_bytes());
    b.extend_from_slice(&g.generation.to_le_bytes());
    b.push(g.modes);
    put_str(&mut b, &g.user);
    b.extend_from_slice(&(g.targets.len() as u16).to_le_bytes());
    for t in &g.targets {
        put_str(&mut b, t);
    }
    let k = hmac::Key::new(hmac::HMAC_SHA256, &key.secret);
    let mac = hmac::sign(&k, &b);
    b.extend_from_slice(mac.as_ref());
    b
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    let s = &s.as_bytes()[..s.len().min(u16::MAX as usize)];
    b.extend_from_slice(&(s.len() as u16).to_le_bytes());
    b.extend_from_slice(s);
}

/// Reads a token's fields without checking its signature.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], TokenError> {
        if self.0.len() < n {
            return Err(TokenError::Malformed);
        }
        let (h, t) = self.0.split_at(n);
        self.0 = t;
        Ok(h)
    }
    fn u8(&mut self) -> Result<u8, TokenError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, TokenError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, TokenError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, TokenError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn str(&mut self) -> Result<String, TokenError> {
        let n = self.u16()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| TokenError::Malformed)
    }
}

fn decode(token: &[u8]) -> Result<(u32, Grant, usize), TokenError> {
    if token.len() > MAX_TOKEN_LEN || token.len() < MAC_LEN + 1 {
        return Err(TokenError::Malformed);
    }
    let body = token.len() - MAC_LEN;
    let mut r = Reader(&token[..body]);
    if r.u8()? != VERSION {
        return Err(TokenError::Malformed);
    }
    let key_id = r.u32()?;
    let expires_ms = r.u64()?;
    let block_id = r.u64()?;
    let generation = r.u64()?;
    let modes = r.u8()?;
    let user = r.str()?;
    let n = r.u16()?;
    let mut targets = Vec::with_capacity(n.min(64) as usize);
    for _ in 0..n {
        targets.push(r.str()?);
    }
    if !r.0.is_empty() {
        return Err(TokenError::Malformed);
    }
    let g = Grant {
        block_id,
        generation,
        modes,
        user,
        targets,
        expires_ms,
    };
    Ok((key_id, g, body))
}

/// The workers' side: the keys the master handed out, and the checks.
#[derive(Default)]
pub struct Verifier {
    inner: std::sync::RwLock<VerifierState>,
}

#[derive(Default)]
struct VerifierState {
    keys: Vec<BlockKey>,
    shuffle_secret: Vec<u8>,
}

impl Verifier {
    /// Takes the master's current keys; keys it no longer sends stay until
    /// they expire, so a token signed just before a roll still passes.
    pub fn update(&self, keys: Vec<BlockKey>, shuffle_secret: Vec<u8>, now_ms: u64) {
        let mut s = self.inner.write().unwrap_or_else(|e| e.into_inner());
        if !shuffle_secret.is_empty() && shuffle_secret != s.shuffle_secret {
            // A new master incarnation: the old one's keys mean nothing.
            s.keys.clear();
            s.shuffle_secret = shuffle_secret;
        }
        for k in keys {
            if !s.keys.iter().any(|h| h.id == k.id) {
                s.keys.push(k);
            }
        }
        s.keys.retain(|k| k.expires_ms > now_ms);
    }

    pub fn has_keys(&self) -> bool {
        !self
            .inner
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys
            .is_empty()
    }

    /// The grant of `token`, once its signature and expiry are checked.
    pub fn check(&self, token: &[u8], now_ms: u64) -> Result<Grant, TokenError> {
        if token.is_empty() {
            return Err(TokenError::Missing);
        }
        let (key_id, g, body) = decode(token)?;
        let s = self.inner.read().unwrap_or_else(|e| e.into_inner());
        if s.keys.is_empty() {
            return Err(TokenError::NoKeys);
        }
        let key = s
            .keys
            .iter()
            .find(|k| k.id == key_id)
            .ok_or(TokenError::UnknownKey(key_id))?;
        let k = hmac::Key::new(hmac::HMAC_SHA256, &key.secret);
        hmac::verify(&k, &token[..body], &token[body..]).map_err(|_| TokenError::BadSignature)?;
        if now_ms > g.expires_ms {
            return Err(TokenError::Expired(now_ms - g.expires_ms));
        }
        Ok(g)
    }

    /// Checks that `token` lets `user` (empty: a worker, who may use any
    /// user's token, as it forwards a pipeline) do `mode` on generation
    /// `generation` of block `block_id` (`None`: any generation).
    pub fn check_block(
        &self,
        token: &[u8],
        block_id: u64,
        generation: Option<u64>,
        mode: Access,
        user: Option<&str>,
        now_ms: u64,
    ) -> Result<Grant, TokenError> {
        let g = self.check(token, now_ms)?;
        if g.block_id != block_id {
            return Err(TokenError::WrongBlock {
                token: g.block_id,
                asked: block_id,
            });
        }
        if let Some(asked) = generation {
            if g.generation != asked {
                return Err(TokenError::WrongGeneration {
                    id: block_id,
                    token: g.generation,
                    asked,
                });
            }
        }
        let ok = g.allows(mode) || (mode == Access::Write && g.allows(Access::Replicate));
        if !ok {
            return Err(TokenError::WrongMode(mode));
        }
        if let Some(u) = user {
            if g.user != u {
                return Err(TokenError::WrongUser {
                    token: g.user.clone(),
                    caller: u.to_string(),
                });
            }
        }
        Ok(g)
    }

    /// Checks job `job_id`'s shuffle token.
    pub fn check_shuffle(&self, token: &[u8], job_id: u64) -> Result<(), TokenError> {
        let s = self.inner.read().unwrap_or_else(|e| e.into_inner());
        if s.shuffle_secret.is_empty() {
            return Err(TokenError::NoKeys);
        }
        let k = hmac::Key::new(hmac::HMAC_SHA256, &s.shuffle_secret);
        hmac::verify(&k, &shuffle_message(job_id), token)
            .map_err(|_| TokenError::BadShuffleToken(job_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_800_000_000_000;

    fn grant(id: u64, modes: u8, user: &str) -> Grant {
        Grant {
            block_id: id,
            generation: 7,
            modes,
            user: user.into(),
            targets: vec!["10.0.0.2:7001".into(), "10.0.0.3:7001".into()],
            expires_ms: 0,
        }
    }

    fn pair() -> (Minter, Verifier) {
        let m = Minter::new(T0);
        let v = Verifier::default();
        let (k, s) = m.export(T0);
        v.update(k, s, T0);
        (m, v)
    }

    #[test]
    fn a_signed_grant_checks_and_names_what_it_grants() {
        let (m, v) = pair();
        let t = m.sign(grant(5, Access::Write as u8, "ann"), T0);
        let g = v
            .check_block(&t, 5, Some(7), Access::Write, Some("ann"), T0 + 1)
            .unwrap();
        assert_eq!(g.targets.len(), 2);
        assert_eq!(g.expires_ms, T0 + TOKEN_LIFETIME_MS);
        // A worker forwarding the pipeline may present ann's token.
        v.check_block(&t, 5, Some(7), Access::Write, None, T0)
            .unwrap();
    }

    #[test]
    fn every_field_is_checked() {
        let (m, v) = pair();
        let t = m.sign(grant(5, Access::Read as u8, "ann"), T0);
        let e = |r: Result<Grant, TokenError>| r.unwrap_err();
        assert!(matches!(
            e(v.check_block(&t, 6, None, Access::Read, Some("ann"), T0)),
            TokenError::WrongBlock { .. }
        ));
        assert!(matches!(
            e(v.check_block(&t, 5, Some(8), Access::Read, Some("ann"), T0)),
            TokenError::WrongGeneration { .. }
        ));
        assert_eq!(
            e(v.check_block(&t, 5, None, Access::Write, Some("ann"), T0)),
            TokenError::WrongMode(Access::Write)
        );
        assert!(matches!(
            e(v.check_block(&t, 5, None, Access::Read, Some("bob"), T0)),
            TokenError::WrongUser { .. }
        ));
        assert!(matches!(
            e(v.check_block(
                &t,
                5,
                None,
                Access::Read,
                Some("ann"),
                T0 + TOKEN_LIFETIME_MS + 1
            )),
            TokenError::Expired(1)
        ));
        assert_eq!(e(v.check(&[], T0)), TokenError::Missing);
        assert_eq!(e(v.check(&[1, 2, 3], T0)), TokenError::Malformed);
    }

    #[test]
    fn a_changed_byte_or_a_foreign_key_fails_the_signature() {
        let (m, v) = pair();
        let t = m.sign(grant(5, Access::Read as u8, "ann"), T0);
        // Flip the modes byte (Read -> Read|Write|Replicate).
        let mut forged = t.clone();
        forged[29] = 7;
        assert_eq!(v.check(&forged, T0), Err(TokenError::BadSignature));
        // Another master's token, even with the same key id.
        let other = Minter::new(T0);
        let t2 = other.sign(grant(5, Access::Read as u8, "ann"), T0);
        assert_eq!(v.check(&t2, T0), Err(TokenError::BadSignature));
        // No keys at all: the worker has not registered.
        let fresh = Verifier::default();
        assert_eq!(fresh.check(&t, T0), Err(TokenError::NoKeys));
    }

    #[test]
    fn keys_roll_and_two_are_valid_at_a_time() {
        let (m, v) = pair();
        let old = m.sign(grant(1, Access::Read as u8, ""), T0);
        let t1 = T0 + KEY_INTERVAL_MS;
        let new = m.sign(grant(1, Access::Read as u8, ""), t1);
        let (keys, s) = m.export(t1);
        assert_eq!(keys.len(), 2, "the current key and the one before");
        v.update(keys, s, t1);
        v.check(&old, t1).unwrap();
        v.check(&new, t1).unwrap();
        // Two intervals on, the first key has gone with its last token.
        let t2 = T0 + KEY_INTERVAL_MS + TOKEN_LIFETIME_MS + 1;
        let (keys, s) = m.export(t2);
        assert_eq!(keys.len(), 2);
        v.update(keys, s, t2);
        assert!(matches!(v.check(&old, t2), Err(TokenError::UnknownKey(_))));
    }

    #[test]
    fn a_shuffle_token_is_its_jobs_only() {
        let (m, v) = pair();
        let t = m.shuffle_token(42);
        v.check_shuffle(&t, 42).unwrap();
        assert_eq!(
            v.check_shuffle(&t, 43),
            Err(TokenError::BadShuffleToken(43))
        );
        assert!(v.check_shuffle(&[], 42).is_err());
        // A restarted master's secret replaces the old keys and secret.
        let m2 = Minter::new(T0 + 5);
        let (k, s) = m2.export(T0 + 5);
        v.update(k, s, T0 + 5);
        assert!(v.check_shuffle(&t, 42).is_err());
        v.check_shuffle(&m2.shuffle_token(42), 42).unwrap();
    }
}
