//! The one conversion between a wire message and a base type: a worker's
//! resource vector, from the heartbeat to `common::resources` and back.
//! Here, beside the wire type, because the base crate links no protobuf.

use crate::ResourceVector;

impl From<ResourceVector> for common::resources::ResourceVector {
    fn from(r: ResourceVector) -> Self {
        common::resources::ResourceVector {
            cpu_pct: r.cpu_pct,
            cpu_per_core_pct: r.cpu_per_core_pct,
            load1: r.load1,
            load5: r.load5,
            load15: r.load15,
            mem_used_bytes: r.mem_used_bytes,
            mem_total_bytes: r.mem_total_bytes,
            disk_read_bps: r.disk_read_bps,
            disk_write_bps: r.disk_write_bps,
            net_rx_bps: r.net_rx_bps,
            net_tx_bps: r.net_tx_bps,
        }
    }
}

impl From<&ResourceVector> for common::resources::ResourceVector {
    fn from(r: &ResourceVector) -> Self {
        r.clone().into()
    }
}

impl From<common::resources::ResourceVector> for ResourceVector {
    fn from(r: common::resources::ResourceVector) -> Self {
        ResourceVector {
            cpu_pct: r.cpu_pct,
            cpu_per_core_pct: r.cpu_per_core_pct,
            load1: r.load1,
            load5: r.load5,
            load15: r.load15,
            mem_used_bytes: r.mem_used_bytes,
            mem_total_bytes: r.mem_total_bytes,
            disk_read_bps: r.disk_read_bps,
            disk_write_bps: r.disk_write_bps,
            net_rx_bps: r.net_rx_bps,
            net_tx_bps: r.net_tx_bps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_round_trip_keeps_every_field() {
        let r = common::resources::ResourceVector {
            cpu_pct: 12.5,
            cpu_per_core_pct: vec![10.0, 15.0],
            load1: 0.5,
            load5: 0.25,
            load15: 0.125,
            mem_used_bytes: 1,
            mem_total_bytes: 2,
            disk_read_bps: 3,
            disk_write_bps: 4,
            net_rx_bps: 5,
            net_tx_bps: 6,
        };
        let wire = ResourceVector::from(r.clone());
        assert_eq!(wire.load15, 0.125);
        assert_eq!(common::resources::ResourceVector::from(&wire), r);
    }
}
