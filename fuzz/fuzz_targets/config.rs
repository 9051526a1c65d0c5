//! `cluster.toml` and the size and duration units it is written in: any
//! text parses or is refused with an error, never a panic; whatever parses
//! is valid, and the values derived from it can be computed.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(cfg) = common::config::ClusterConfig::parse(text) {
        cfg.validate().expect("a parsed config is valid");
        let _ = cfg.heartbeat.expiry();
        let _ = sched::check_config(&cfg);
        for w in &cfg.workers {
            assert!(cfg.worker(&w.name).is_some());
        }
    }
    if let Ok(n) = common::units::parse_size(text) {
        let _ = common::units::format_size(n);
    }
    let _ = common::units::parse_duration(text);
});
