//! `mr admin scheduler set|show`: the active placement policy.

use common::config::ClusterConfig;
use common::dfs::{Dfs, DfsError};

pub async fn scheduler_set(cfg: &ClusterConfig, name: &str, kvs: &[String]) -> anyhow::Result<()> {
    let mut params = std::collections::HashMap::new();
    for kv in kvs {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("parameter {kv:?} is not key=value"))?;
        params.insert(k.to_string(), v.to_string());
    }
    let r = Dfs::connect(cfg)?
        .master()
        .set_scheduler(proto::SchedulerRequest {
            name: name.to_string(),
            params,
        })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    print_spec(&r);
    Ok(())
}

pub async fn scheduler_show(cfg: &ClusterConfig) -> anyhow::Result<()> {
    let r = Dfs::connect(cfg)?
        .master()
        .get_scheduler(proto::Empty {})
        .await
        .map_err(DfsError::from)?
        .into_inner();
    print_spec(&r);
    Ok(())
}

fn print_spec(r: &proto::SchedulerResponse) {
    let mut params: Vec<_> = r.params.iter().collect();
    params.sort();
    let p: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    println!("scheduler: {} {}", r.name, p.join(" "));
}
