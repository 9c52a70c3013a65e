//! Records the optimisation level the engine is compiled at, so that every result can say
//! whether it came from optimised code (`cfg!(debug_assertions)` cannot tell: the test
//! profile optimises with debug assertions on).

fn main() {
    let level = std::env::var("OPT_LEVEL").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=LATLAB_OPT_LEVEL={level}");
    println!("cargo:rerun-if-env-changed=OPT_LEVEL");
}
