//! Why a policy could not be built: the one error every policy's
//! `from_params` returns, in its own file so that policies need not import
//! the registry that imports them.

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SchedError {
    #[error("unknown scheduler {name:?}; known: {known}")]
    UnknownName { name: String, known: String },
    #[error("scheduler {name} has no parameter {param:?}; it takes: {takes}")]
    UnknownParam {
        name: String,
        param: String,
        takes: String,
    },
    #[error("scheduler {name}: parameter {param} = {value:?} is invalid: {why}")]
    BadValue {
        name: String,
        param: String,
        value: String,
        why: String,
    },
}
