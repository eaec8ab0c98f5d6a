//! Parts shared by the `aileron` and `aileron-sh` binaries.

pub mod lean;
