//! The generated gRPC protocol (`mr.v1`), shared by the master, the workers
//! and the client, and its one conversion to a base type ([`resources`]).

#![allow(clippy::all, missing_docs)]

pub mod v1 {
    tonic::include_proto!("mr.v1");
}

pub use v1::*;

pub mod resources;
