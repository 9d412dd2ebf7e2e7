//! The server's housekeeping: the tasks that run beside the tables until the
//! stop signal, forgetting what has expired and passing on the ends of
//! sessions. Each is a task of the signal, so that stopping waits for it.

use std::sync::Arc;
use std::time::Duration;

use crate::auth::Accounts;
use crate::cluster::Cluster;
use crate::shutdown::Shutdown;
use crate::table::{Lobby, TableCommand};

/// Starts every housekeeping task of a server: the ones of the accounts and
/// the lobby, and in a cluster the ones that pass sessions' ends between the
/// nodes.
pub(super) fn start(accounts: &Arc<Accounts>, lobby: &Arc<Lobby>, cluster: Option<&Arc<Cluster>>, shutdown: &Shutdown) {
    forget_expired_sessions(accounts.clone(), shutdown);
    forget_old_robot_games(lobby.clone(), shutdown);
    end_seat_tokens_with_sessions(accounts, lobby.clone(), cluster.cloned(), shutdown);
    if let Some(cluster) = cluster {
        hear_sessions_ended_elsewhere(cluster, accounts.clone(), shutdown);
    }
}

/// Forgets the old games of robots alone nobody keeps, every hour (or
/// twice in the time they are kept for, when that is shorter); puts in
/// force the budget an admin stored first.
fn forget_old_robot_games(lobby: Arc<Lobby>, shutdown: &Shutdown) {
    let stopping = shutdown.clone();
    shutdown.spawn(async move {
        if let Err(e) = lobby.refresh_robot_budget().await {
            tracing::warn!("cannot read the budget of games of robots alone: {e}");
        }
        loop {
            let kept_for = lobby.quotas().robot_budget().kept_for;
            let every = (kept_for / 2).clamp(Duration::from_secs(1), Duration::from_secs(3600));
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = stopping.stopped() => return,
            }
            match lobby.forget_old_robot_games().await {
                Ok(0) => {}
                Ok(n) => tracing::info!("{n} old games of robots alone forgotten"),
                Err(e) => tracing::warn!("forgetting old games of robots alone: {e}"),
            }
        }
    });
}

/// Forgets expired sessions once an hour until the server stops (a session
/// is refused once expired whether or not it has been forgotten).
fn forget_expired_sessions(accounts: Arc<Accounts>, shutdown: &Shutdown) {
    let stopping = shutdown.clone();
    shutdown.spawn(async move {
        let mut hourly = tokio::time::interval(Duration::from_secs(3600));
        loop {
            tokio::select! {
                _ = hourly.tick() => {}
                _ = stopping.stopped() => return,
            }
            match accounts.forget_expired().await {
                Ok(0) => {}
                Ok(n) => tracing::info!("{n} expired sessions forgotten"),
                Err(e) => tracing::warn!("forgetting expired sessions: {e}"),
            }
        }
    });
}

/// Ends the seat tokens of an account's seats when its sessions end (logged
/// out, out everywhere, password changed, disabled), at every table: a seat
/// token given to a session lives no longer than it (in a cluster, at
/// every node's tables).
fn end_seat_tokens_with_sessions(
    accounts: &Accounts,
    lobby: Arc<Lobby>,
    cluster: Option<Arc<Cluster>>,
    shutdown: &Shutdown,
) {
    let mut news = accounts.revocations_here();
    let stopping = shutdown.clone();
    shutdown.spawn(async move {
        loop {
            let revoked = tokio::select! {
                revoked = news.recv() => revoked,
                _ = stopping.stopped() => return,
            };
            let revoked = match revoked {
                Ok(revoked) => revoked,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!("{missed} ends of sessions missed: their seat tokens outlive them");
                    continue;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            for table in lobby.handles() {
                let _ = table.send(TableCommand::EndSeatTokens(revoked.clone())).await;
            }
            // The other nodes' tables too.
            if let Some(cluster) = &cluster {
                cluster.revoked(&revoked).await;
            }
        }
    });
}

/// Sessions another node ended close the connections made here with them
/// (the cluster tells this node's tables itself).
fn hear_sessions_ended_elsewhere(cluster: &Cluster, accounts: Arc<Accounts>, shutdown: &Shutdown) {
    let mut news = cluster.revocations_heard();
    let stopping = shutdown.clone();
    shutdown.spawn(async move {
        loop {
            let revoked = tokio::select! {
                revoked = news.recv() => revoked,
                _ = stopping.stopped() => return,
            };
            match revoked {
                Ok(revoked) => accounts.revoked_elsewhere(revoked),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!("{missed} ends of sessions at other nodes missed");
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    });
}
