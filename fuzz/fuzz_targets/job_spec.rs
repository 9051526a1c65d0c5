//! A job's parameters (the JSON of `SubmitJobRequest.params_json`), its
//! plan (`plan_json`) and the paths of a spec: parsed or refused, never a
//! panic; what parses round-trips and every job can say how it reads,
//! writes and partitions with it.
#![no_main]

use joblib::jobs::JobPlan;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = joblib::spec::params_from_json(text) {
        let again = joblib::spec::params_from_json(&joblib::spec::params_to_json(&p))
            .expect("written parameters parse");
        assert_eq!(again.size, p.size);
        assert_eq!(again.maps, p.maps);
        assert_eq!(again.extra, p.extra);
        for name in joblib::jobs::registry::NAMES {
            let job = joblib::jobs::registry::lookup(name).expect("listed jobs exist");
            let _ = job.input_format(&p);
            let _ = job.output_format(&p);
            let _ = job.partitioning(&p);
        }
    }
    let _ = joblib::jobs::registry::lookup(text);
    if let Ok(plan) = JobPlan::from_json(text) {
        assert_eq!(JobPlan::from_json(&plan.to_json()).expect("written plans parse"), plan);
    }
    if let Ok(path) = common::path::DfsPath::parse(text) {
        // A parsed path never escapes the root and parses to itself.
        assert!(path.as_str().starts_with('/'));
        assert!(!path.as_str().split('/').any(|c| c == ".."));
        assert_eq!(
            common::path::DfsPath::parse(path.as_str()).expect("reparses"),
            path
        );
        let _ = path.dir_prefix();
        let _ = path.join("x");
    }
    let _ = common::path::DfsPath::parse_file(text);
});
