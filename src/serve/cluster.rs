//! Cluster mode's flags (`--nats` and its companions, `--node-name`,
//! `--lease-seconds`, `--rebalance-at-once`) as the library's
//! [`ClusterConfig`].

use std::time::Duration;

use mahjong::cluster::ClusterConfig;
use mahjong::store::Backend;
use tokio::net::TcpListener;

use super::ServeArgs;

/// The cluster to join, if `--nats` is given. Cluster mode's rule (a
/// Postgres database) is the library's ([`mahjong::server::check_cluster_database`]),
/// asked here of `--database` before anything is opened, so that a refusal
/// creates no SQLite file; `Server::build` asks it again of the store it is
/// given.
pub fn cluster_config(args: &ServeArgs, listener: &TcpListener) -> Result<Option<ClusterConfig>, String> {
    let Some(nats) = args.nats_access()? else { return Ok(None) };
    mahjong::server::check_cluster_database(Backend::of_url(args.database.trim())).map_err(|e| e.to_string())?;
    let address = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
    let name = args.node_name.clone().unwrap_or_else(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string());
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
        format!("{}:{port}", host.ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "localhost".into()))
    });
    let name = mahjong::text::node_name(&name).map_err(|e| format!("--node-name: {e}"))?;
    let mut config = ClusterConfig::new(nats, name, address).with_lease(Duration::from_secs(args.lease_seconds));
    config.join_within = Duration::from_secs(args.wait_for_services);
    config.rebalance_at_once = args.rebalance_at_once as usize;
    Ok(Some(config))
}
