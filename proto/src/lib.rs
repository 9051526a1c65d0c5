//! The generated gRPC protocol (`mr.v1`), shared by the master, the workers
//! and the client.

#![allow(clippy::all, missing_docs)]

pub mod v1 {
    tonic::include_proto!("mr.v1");
}

pub use v1::*;
