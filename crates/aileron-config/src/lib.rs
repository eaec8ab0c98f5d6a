//! Policy loading (in progress).
