//! The cluster token: one interceptor on every server, one on every client.
//!
//! Hadoop and Spark ship with authentication off, and CVE-2020-9480 shows what
//! half-done authentication costs; here there is no way to reach a method
//! without the token, because servers are only ever built through
//! [`TokenCheck`].

use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::{Request, Status};

const HEADER: &str = "authorization";

/// Server side: refuses a request whose bearer token is missing or wrong.
#[derive(Clone)]
pub struct TokenCheck {
    expected: String,
}

impl TokenCheck {
    pub fn new(token: &str) -> Self {
        TokenCheck {
            expected: format!("Bearer {token}"),
        }
    }
}

impl Interceptor for TokenCheck {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        match req.metadata().get(HEADER) {
            None => Err(Status::unauthenticated(
                "missing cluster token: set `token` in cluster.toml to the cluster's token",
            )),
            Some(v) if constant_time_eq(v.as_bytes(), self.expected.as_bytes()) => Ok(req),
            Some(_) => Err(Status::unauthenticated(
                "wrong cluster token: the token in cluster.toml does not match the cluster's",
            )),
        }
    }
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
        assert!(check.call(ok).is_ok());
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
}
