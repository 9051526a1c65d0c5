//! The reduce side's merge of length-prefixed sorted runs
//! (`worker::task::merge`): any bytes are merged or refused with an error, never a
//! panic or an allocation beyond the input; well-formed runs merge into the
//! multiset union of their records, in order when each run is sorted, and
//! grouping sees every record once.
#![no_main]

use joblib::jobs::formats::kv_iter;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let k = (k % 4) as usize + 1;
    // k runs: the input cut into k nearly equal pieces.
    let size = rest.len().div_ceil(k).max(1);
    let runs: Vec<&[u8]> = rest.chunks(size).collect();
    let parsed: Option<Vec<Vec<(Vec<u8>, Vec<u8>)>>> = runs
        .iter()
        .map(|r| {
            kv_iter(r)
                .map(|x| x.ok().map(|(k, v)| (k.to_vec(), v.to_vec())))
                .collect()
        })
        .collect();
    let mut got = Vec::new();
    let res = worker::task::merge::merge_records(runs.clone(), &mut |k, v| {
        got.push((k.to_vec(), v.to_vec()));
        Ok(())
    });
    let mut groups = 0u64;
    let mut grouped_values = 0usize;
    let gres = worker::task::merge::merge_grouped(runs.clone(), &mut |_, vs| {
        groups += 1;
        grouped_values += vs.count();
        Ok(())
    });
    match parsed {
        Some(runs) => {
            let n = res.expect("well-formed runs merge") as usize;
            gres.expect("well-formed runs group");
            let mut all: Vec<(Vec<u8>, Vec<u8>)> = runs.iter().flatten().cloned().collect();
            assert_eq!(n, all.len());
            assert_eq!(grouped_values, all.len());
            let sorted_runs = runs.iter().all(|r| r.windows(2).all(|w| w[0].0 <= w[1].0));
            if sorted_runs {
                assert!(
                    got.windows(2).all(|w| w[0].0 <= w[1].0),
                    "merge out of order"
                );
                let mut keys: Vec<&Vec<u8>> = all.iter().map(|r| &r.0).collect();
                keys.sort();
                keys.dedup();
                assert_eq!(groups as usize, keys.len());
            }
            all.sort();
            got.sort();
            assert_eq!(got, all, "the merge is the union of the runs");
        }
        // Malformed runs: an error or a partial merge, never a panic.
        None => {}
    }
});
