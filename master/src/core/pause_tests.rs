//! The master's own pauses (issue 39, item 5): a stall of its expiry loop
//! longer than the bound in `MasterState::stalled` declares nobody dead,
//! while a worker silent across ticks that ran on time still dies. Time is
//! driven by the instants passed in, never by sleeping.

use super::*;
use protocol::Heartbeat;
use std::time::Duration;

fn state(tag: &str) -> (MasterState, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "mr-pause-{tag}-{}-{}",
        std::process::id(),
        fastrand::u64(..)
    ));
    let mut toml = format!(
        "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = {:?}\n\
         [heartbeat]\ninterval = \"1s\"\ndead_after = 5\n",
        dir.join("m")
    );
    for (i, w) in ["w1", "w2"].iter().enumerate() {
        toml += &format!(
            "[[workers]]\nname = \"{w}\"\naddr = \"127.0.0.1:{}\"\ndata_dir = \"/x{w}\"\n",
            7101 + i
        );
    }
    let cfg = ClusterConfig::parse(&toml).unwrap();
    (MasterState::open(cfg, Instant::now()).unwrap(), dir)
}

fn register(st: &mut MasterState, name: &str, now: Instant) -> u64 {
    st.on_register(
        Registration {
            protocol_version: common::PROTOCOL_VERSION,
            name: name.into(),
            addr: format!("{name}:1"),
            rack: "r1".into(),
            map_slots: 1,
            reduce_slots: 1,
            ..Default::default()
        },
        now,
    )
    .unwrap()
    .epoch
}

fn beat(st: &mut MasterState, name: &str, epoch: u64, now: Instant) {
    let r = st.on_heartbeat(
        Heartbeat {
            name: name.into(),
            epoch,
            ..Default::default()
        },
        now,
    );
    assert!(!r.reregister, "{name} fenced at a heartbeat");
}

fn alive(st: &MasterState, name: &str) -> bool {
    st.cluster().is_alive(name)
}

/// Ticks every half second (the daemon's period at a 1 s interval) from
/// `from` for `secs` seconds, w1 heartbeating every second if `w1` is
/// given; returns the instant after the last tick.
fn run_normally(st: &mut MasterState, from: Instant, secs: u64, w1: Option<u64>) -> Instant {
    let mut t = from;
    for i in 1..=secs * 2 {
        t = from + Duration::from_millis(500 * i);
        if let Some(e) = w1.filter(|_| i % 2 == 0) {
            beat(st, "w1", e, t);
        }
        st.on_tick(t);
    }
    t
}

#[test]
fn a_stall_of_three_expiries_between_ticks_expires_no_worker() {
    let (mut st, dir) = state("stall");
    let t0 = Instant::now();
    let e1 = register(&mut st, "w1", t0);
    let e2 = register(&mut st, "w2", t0);
    let t = run_normally(&mut st, t0, 2, None);
    beat(&mut st, "w1", e1, t);
    beat(&mut st, "w2", e2, t);
    st.on_tick(t);
    // The master freezes for three expiries (15 s); the workers'
    // heartbeats of that time are not read before the first tick after it.
    let expiry = st.cfg().heartbeat.expiry();
    let resumed = t + expiry * 3;
    st.on_tick(resumed);
    assert!(
        alive(&st, "w1") && alive(&st, "w2"),
        "a master stall declared workers dead"
    );
    // The grace starts at the end of the stall: half an expiry later both
    // are still alive without a heartbeat, ticks running on time again.
    let t = run_normally(&mut st, resumed, 2, None);
    assert!(alive(&st, "w1") && alive(&st, "w2"));
    // Then w1 is heard again and w2 stays silent: w2 dies one expiry after
    // the stall ended, w1 lives on.
    beat(&mut st, "w1", e1, t);
    run_normally(&mut st, t, 4, Some(e1));
    assert!(alive(&st, "w1"));
    assert!(
        !alive(&st, "w2"),
        "a worker silent since the stall must still die"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_worker_silent_across_ticks_on_time_still_expires() {
    let (mut st, dir) = state("silent");
    let t0 = Instant::now();
    let e1 = register(&mut st, "w1", t0);
    register(&mut st, "w2", t0);
    st.on_tick(t0);
    // Four seconds of ticks: within the 5 s expiry, both live.
    let t = run_normally(&mut st, t0, 4, Some(e1));
    assert!(alive(&st, "w1") && alive(&st, "w2"));
    // Two more: w2 has been silent for 6 s across ticks that ran every
    // half second, so it is dead; w1 heartbeats and is not.
    run_normally(&mut st, t, 2, Some(e1));
    assert!(alive(&st, "w1"));
    assert!(!alive(&st, "w2"));
    let _ = std::fs::remove_dir_all(&dir);
}
