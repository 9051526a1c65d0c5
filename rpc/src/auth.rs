//! Tokens and roles: one interceptor on every server, one on every client.
//!
//! Hadoop and Spark ship with authentication off, and CVE-2020-9480 shows what
//! half-done authentication costs; here there is no way to reach a method
//! without a token, because servers are only ever built through
//! [`TokenCheck`].
//!
//! A token names an [`Identity`]: a user and its [`Role`]. The cluster's
//! `token` is the `admin` user (so that a one-token cluster works as it
//! always did) and, unless `worker_token` is set, also the workers'
//! identity. Tokens of `[[users]]` are never a worker's: a user cannot
//! register a worker, heartbeat for one or report a task.

use common::config::ClusterConfig;
pub use common::role::{Role, ADMIN_NAME, WORKER_NAME};
use std::sync::Arc;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::{Request, Status};

const HEADER: &str = "authorization";

/// Who made a request: put in the request's extensions by [`TokenCheck`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    pub role: Role,
    /// May act as a worker (register, heartbeat, report tasks).
    pub worker: bool,
}

impl Identity {
    /// Refuses, with `PermissionDenied` and a log line, when this identity's
    /// role is below `need`.
    pub fn require(&self, need: Role, action: &str) -> Result<(), Status> {
        if self.role >= need {
            return Ok(());
        }
        tracing::warn!(user = %self.name, role = self.role.as_str(), action, "permission denied");
        Err(Status::permission_denied(format!(
            "permission denied: user {:?} (role {}) may not {action}; it needs role {}",
            self.name,
            self.role.as_str(),
            need.as_str()
        )))
    }

    /// Refuses a call only workers make when the caller holds no worker
    /// identity.
    pub fn require_worker(&self, action: &str) -> Result<(), Status> {
        if self.worker {
            return Ok(());
        }
        tracing::warn!(user = %self.name, role = self.role.as_str(), action, "permission denied: not a worker");
        Err(Status::permission_denied(format!(
            "permission denied: user {:?} may not {action}: only a worker's identity (the cluster's worker_token) may",
            self.name
        )))
    }

    /// Whether this identity may act on something `owner` owns.
    pub fn owns_or_admin(&self, owner: &str) -> bool {
        self.role == Role::Admin || self.name == owner
    }
}

/// Every token the cluster knows, by its whole `Bearer TOKEN` header value.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    by_header: Vec<(String, Identity)>,
}

impl Tokens {
    /// One token: the admin, who may also act as a worker (the old
    /// single-token cluster).
    pub fn single(token: &str) -> Self {
        let mut t = Tokens::default();
        t.add(token, ADMIN_NAME, Role::Admin, true);
        t
    }

    /// The cluster file's tokens: `token` (admin; a worker too unless
    /// `worker_token` is set), `worker_token`, and every `[[users]]` entry.
    pub fn from_config(cfg: &ClusterConfig) -> Self {
        let mut t = Tokens::default();
        t.add(
            &cfg.token,
            ADMIN_NAME,
            Role::Admin,
            cfg.worker_token.is_none(),
        );
        if let Some(w) = &cfg.worker_token {
            t.add(w, WORKER_NAME, Role::Admin, true);
        }
        for u in &cfg.users {
            t.add(&u.token, &u.name, u.role, false);
        }
        t
    }

    fn add(&mut self, token: &str, name: &str, role: Role, worker: bool) {
        self.by_header.push((
            format!("Bearer {token}"),
            Identity {
                name: name.to_string(),
                role,
                worker,
            },
        ));
    }

    /// The identity whose token `header` carries. Compares every token in
    /// time independent of where the first difference is, so that response
    /// times do not reveal a token a byte at a time.
    pub fn lookup(&self, header: &[u8]) -> Option<&Identity> {
        let mut found = None;
        for (h, id) in &self.by_header {
            if constant_time_eq(header, h.as_bytes()) {
                found = Some(id);
            }
        }
        found
    }
}

/// Server side: refuses a request whose bearer token is missing or unknown,
/// and puts the caller's [`Identity`] in the request's extensions.
#[derive(Clone)]
pub struct TokenCheck {
    tokens: Arc<Tokens>,
}

impl TokenCheck {
    /// Only `token`, as the admin and a worker.
    pub fn new(token: &str) -> Self {
        TokenCheck {
            tokens: Arc::new(Tokens::single(token)),
        }
    }

    pub fn with_tokens(tokens: Tokens) -> Self {
        TokenCheck {
            tokens: Arc::new(tokens),
        }
    }
}

impl Interceptor for TokenCheck {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        let id = match req.metadata().get(HEADER) {
            None => {
                return Err(Status::unauthenticated(
                    "missing cluster token: set `token` in cluster.toml to the cluster's token",
                ))
            }
            Some(v) => self.tokens.lookup(v.as_bytes()).cloned(),
        };
        match id {
            Some(id) => {
                req.extensions_mut().insert(id);
                Ok(req)
            }
            None => Err(Status::unauthenticated(
                "wrong cluster token: the token in cluster.toml does not match the cluster's",
            )),
        }
    }
}

/// The caller of `req`, as [`TokenCheck`] found it. A request that did not
/// pass through it (a handler called directly) has no rights.
pub fn identity<T>(req: &Request<T>) -> Identity {
    req.extensions()
        .get::<Identity>()
        .cloned()
        .unwrap_or_else(|| Identity {
            name: "anonymous".into(),
            role: Role::Reader,
            worker: false,
        })
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Client side: attaches the token to every request.
#[derive(Clone)]
pub struct TokenAttach {
    value: MetadataValue<tonic::metadata::Ascii>,
}

impl TokenAttach {
    /// Fails if the token holds bytes that cannot travel in an HTTP header.
    pub fn new(token: &str) -> Result<Self, Status> {
        let value = format!("Bearer {token}")
            .parse()
            .map_err(|_| Status::invalid_argument("the cluster token must be printable ASCII"))?;
        Ok(TokenAttach { value })
    }
}

impl Interceptor for TokenAttach {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        req.metadata_mut().insert(HEADER, self.value.clone());
        Ok(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks() {
        let mut check = TokenCheck::new("s3cret");
        let mut attach = TokenAttach::new("s3cret").unwrap();
        let ok = attach.call(Request::new(())).unwrap();
        let ok = check.call(ok).unwrap();
        let id = identity(&ok);
        assert_eq!((id.role, id.worker), (Role::Admin, true));
        let e = check.call(Request::new(())).unwrap_err();
        assert!(e.message().contains("missing"));
        let bad = TokenAttach::new("nope")
            .unwrap()
            .call(Request::new(()))
            .unwrap();
        let e = check.call(bad).unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated);
        assert!(e.message().contains("wrong"));
    }

    fn call_as(check: &mut TokenCheck, token: &str) -> Identity {
        let r = TokenAttach::new(token)
            .unwrap()
            .call(Request::new(()))
            .unwrap();
        identity(&check.call(r).unwrap())
    }

    #[test]
    fn users_get_their_roles_and_never_a_workers_identity() {
        let cfg = ClusterConfig::parse(
            "token = \"adm\"\nworker_token = \"wrk\"\n\
             [master]\naddr = \"127.0.0.1:1\"\ndata_dir = \"/tmp/m\"\n\
             [[users]]\nname = \"ann\"\ntoken = \"ann-t\"\nrole = \"user\"\n\
             [[users]]\nname = \"rob\"\ntoken = \"rob-t\"\nrole = \"reader\"\n",
        )
        .unwrap();
        let mut check = TokenCheck::with_tokens(Tokens::from_config(&cfg));
        let adm = call_as(&mut check, "adm");
        assert_eq!(
            (adm.name.as_str(), adm.role, adm.worker),
            ("admin", Role::Admin, false)
        );
        let w = call_as(&mut check, "wrk");
        assert!(w.worker);
        let ann = call_as(&mut check, "ann-t");
        assert_eq!(
            (ann.name.as_str(), ann.role, ann.worker),
            ("ann", Role::User, false)
        );
        let e = ann
            .require(Role::Admin, "change the scheduler")
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied);
        assert!(ann.require_worker("register a worker").is_err());
        let rob = call_as(&mut check, "rob-t");
        assert!(rob.require(Role::User, "submit a job").is_err());
        assert!(rob.require(Role::Reader, "list jobs").is_ok());
        assert!(ann.owns_or_admin("ann") && !ann.owns_or_admin("bob") && adm.owns_or_admin("bob"));
    }
}
