//! The shell shim; see the `aileron-shim` crate.
fn main() -> std::process::ExitCode {
    aileron_shim::main()
}
