//! Parts shared by the `aileron`, `aileron-sh` and `aileron-server` binaries.

mod error;
pub mod launch_box;
pub mod lean;

pub use error::Error;
