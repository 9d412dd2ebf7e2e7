//! `GET /api/v1/cluster` (admins): the nodes of the cluster this node
//! belongs to (`serve --nats`), with their tables, sockets and heartbeats.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::Admin;
use super::openapi::refusals;
use super::{ApiError, AppState};
use crate::store::cluster::NodeRow;

/// The cluster's route (under `/api/v1`).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(cluster))
}

/// The cluster as the database sees it.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ClusterView {
    /// Whether this server runs in cluster mode (`--nats`); a single node
    /// lists no nodes.
    pub clustered: bool,
    /// This node's id (`null` on a single node).
    pub this_node: Option<String>,
    /// The live nodes (their lease not expired), by name.
    pub nodes: Vec<NodeRow>,
    /// Nodes whose lease has expired and whose row is not yet forgotten
    /// (their tables are being, or have been, taken over).
    pub expired: Vec<NodeRow>,
}

refusals!(
    /// Why the cluster is not told.
    ClusterRefusals: Unauthenticated, AccountDisabled, AdminOnly, StoreUnavailable
);

/// The nodes of the cluster (admins only): each live node with the tables
/// it plays, its open WebSockets and its last heartbeat (by the database's
/// clock), as of its last heartbeat.
#[utoipa::path(
    get,
    path = "/cluster",
    operation_id = "get_cluster",
    tag = "server",
    security(("account_token" = []), ("session_cookie" = [])),
    responses((status = 200, description = "The cluster's nodes", body = ClusterView), ClusterRefusals)
)]
pub async fn cluster(State(state): State<AppState>, _admin: Admin) -> Result<Json<ClusterView>, ApiError> {
    let Some(cluster) = &state.cluster else {
        return Ok(Json(ClusterView { clustered: false, this_node: None, nodes: Vec::new(), expired: Vec::new() }));
    };
    let (nodes, expired) = cluster.nodes().await?.into_iter().partition(|n| n.expires_in_ms > 0);
    Ok(Json(ClusterView { clustered: true, this_node: Some(cluster.node_id().to_string()), nodes, expired }))
}
