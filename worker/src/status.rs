//! The worker's map from its own errors to gRPC statuses, so that a
//! client sees the same code for the same failure whichever handler met it.

use crate::store::StoreError;
use tonic::Status;

/// A store error as the caller should see it: a missing block is
/// `NOT_FOUND`, bytes that fail their checksum `DATA_LOSS`, the rest
/// `INTERNAL`.
pub(crate) fn to_status(e: StoreError) -> Status {
    match e {
        StoreError::Missing(_) => Status::not_found(e.to_string()),
        StoreError::Corrupt { .. } => Status::data_loss(e.to_string()),
        StoreError::BadWrite { .. } => Status::data_loss(e.to_string()),
        StoreError::Io(_) => Status::internal(e.to_string()),
    }
}
