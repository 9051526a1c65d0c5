//! Generates the tonic services from `mr.proto` with `protox`, a pure-Rust
//! protobuf compiler, so that a fresh machine needs no system `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=mr.proto");
    let fds = protox::compile(["mr.proto"], ["."])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        // Chunks are `Bytes`: slices of a block travel without a copy.
        .bytes(".")
        .compile_fds(fds)?;
    Ok(())
}
