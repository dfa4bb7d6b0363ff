//! The `sim-host` command line (`sim_host::cli`).

fn main() -> std::process::ExitCode {
    sim_host::cli::main()
}
