//! A node's hold on its tables: its lease, renewed every heartbeat (and
//! what it gives up when the lease lapsed); taking over the tables nobody
//! plays; sending tables to a less loaded node (rebalancing, by
//! [`super::balance`]'s policy); handing every table over when it leaves.

use super::*;

impl Cluster {
    // ----- the lease ------------------------------------------------------------------

    /// Renews the lease every heartbeat; checks that this node still owns
    /// what it plays, and forgets the stand-ins and relays of dead nodes.
    pub(super) async fn keep_lease(self: Arc<Self>) {
        let mut tick = tokio::time::interval(self.config.heartbeat);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut renewed = Instant::now();
        loop {
            tick.tick().await;
            if self.leaving.load(Ordering::SeqCst) {
                return;
            }
            crate::metrics::nats_connected(self.bus.connected());
            let tables = self.store.fences().len() as i64;
            let sockets = crate::metrics::SocketCount::now();
            match self.store.renew_lease(&self.node_id, self.config.lease, tables, sockets).await {
                Ok(true) => {
                    renewed = Instant::now();
                    self.set_member(true);
                }
                Ok(false) => {
                    // Paused or cut off past the lease: the others may be
                    // taking its tables over. Give them all up, then come back.
                    tracing::error!("this node's lease expired: its tables are given up, and it joins again");
                    self.give_up_everything().await;
                    match self.rejoin().await {
                        Ok(()) => renewed = Instant::now(),
                        Err(e) => tracing::error!("cannot join the cluster again: {e}"),
                    }
                    continue;
                }
                Err(e) => {
                    tracing::warn!("cannot renew this node's lease: {e}");
                    if renewed.elapsed() >= self.config.lease {
                        // The lease has lapsed by now, whatever the
                        // database says when it answers again.
                        self.give_up_everything().await;
                    }
                    continue;
                }
            }
            if let Err(e) = self.check_ownership().await {
                tracing::warn!("cannot check this node's tables: {e}");
            }
            // A rotated key is announced before it is used: every node reads it in time.
            match self.store.read_cluster_keys().await {
                Ok(keys) => self.bus.seal().use_keys(&keys),
                Err(e) => tracing::warn!("cannot read the cluster's keys: {e}"),
            }
            // An admin's change of the budget of robots' play, made at any node.
            if let Err(e) = self.lobby.refresh_robot_budget().await {
                tracing::warn!("cannot read the budget of games of robots alone: {e}");
            }
            match self.store.nodes().await {
                Ok(nodes) => {
                    let (alive, lapsed): (Vec<NodeRow>, Vec<NodeRow>) =
                        nodes.into_iter().partition(|n| n.expires_in_ms > 0);
                    *self.lapsed.lock().unwrap_or_else(|e| e.into_inner()) = lapsed.into_iter().map(|n| n.id).collect();
                    let ids: Vec<String> = alive.iter().map(|n| n.id.clone()).collect();
                    self.forget_stand_ins(|owner| !ids.iter().any(|id| id == owner));
                    self.owner.forget_nodes_but(&ids).await;
                    *self.members.lock().unwrap_or_else(|e| e.into_inner()) = alive;
                }
                Err(e) => tracing::warn!("cannot read the cluster's nodes: {e}"),
            }
            let _ = self.store.forget_dead_nodes(FORGET_DEAD_AFTER).await;
            let _ = self.store.forget_spent_quotas().await;
        }
    }

    pub(super) fn set_member(&self, live: bool) {
        if self.member.send_replace(live) != live {
            crate::metrics::cluster_member(live);
        }
    }

    /// Stops every table this node plays without writing anything more:
    /// its lease has lapsed, so others may own them now.
    pub(super) async fn give_up_everything(&self) {
        self.set_member(false);
        // The relayed streams too: their owners have let them go (this node
        // was not alive), so they would stay silent. Their sockets close as
        // moved, and the clients connect again, to wherever the tables are.
        self.forget_stand_ins(|_| true);
        let fences = self.store.fences();
        if fences.is_empty() {
            return;
        }
        crate::metrics::cluster_lost(fences.len());
        for (id, _) in fences {
            self.give_up(&id).await;
        }
    }

    /// Stops one table here: another node owns it now.
    pub(super) async fn give_up(&self, id: &str) {
        self.store.unfence(id);
        if let Ok(handle) = self.lobby.get(id) {
            let _ = handle.send(TableCommand::GiveUp).await;
        }
    }

    /// After the lease expired: the lease starts again, and the tables that
    /// still name this node (nobody took them while it was away) come back
    /// here at their next epoch. For a lease after, it takes over nobody
    /// else's tables: when the database was away from every node, the
    /// others come back to their own tables within it, rather than the
    /// first one back taking them all.
    pub(super) async fn rejoin(&self) -> Result<(), StoreError> {
        let c = &self.config;
        // No takeover of this node's runs meanwhile: one that had read "not
        // back lately" would otherwise take the others' tables under the
        // lease this renews.
        let _turn = self.taking.lock().await;
        let kept = self.store.rejoin_cluster(&self.node_id, &c.node_name, &c.address, c.lease).await?;
        *self.rejoined.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        self.set_member(true);
        self.bring_back(kept, "of this node's taken back").await;
        Ok(())
    }

    /// Compares what this node plays with what the store says it owns:
    /// a table owned elsewhere now (or at another epoch) is given up; one
    /// that has closed here gives its row up (forgotten once its game is
    /// over, else released for another node to bring back).
    pub(super) async fn check_ownership(&self) -> Result<(), StoreError> {
        let owned: HashMap<String, i64> = self.store.owned_tables(&self.node_id).await?.into_iter().collect();
        let mut lost = 0;
        for (id, epoch) in self.store.fences() {
            if owned.get(&id) != Some(&epoch) {
                lost += 1;
                tracing::warn!(table = %id, "another node plays this table now: it stops here");
                self.give_up(&id).await;
            } else if !self.lobby.holds(&id) {
                self.store.unfence(&id);
                self.store.close_table(&id, &self.node_id, epoch).await?;
            }
        }
        if lost > 0 {
            crate::metrics::cluster_lost(lost);
        }
        crate::metrics::cluster_owned(self.store.fences().len());
        Ok(())
    }

    // ----- taking tables over ------------------------------------------------------------

    /// Every heartbeat (and at once when told), takes a share of the tables
    /// nobody plays and brings them back.
    pub(super) async fn take_over_orphans(self: Arc<Self>) {
        let mut at_once = false;
        loop {
            // Right after taking some: look again at once, for what the
            // others could not take (not a heartbeat later, in rounds).
            if !at_once {
                tokio::select! {
                    _ = tokio::time::sleep(self.config.heartbeat) => {}
                    _ = self.orphans.notified() => {}
                }
            }
            if self.leaving.load(Ordering::SeqCst) {
                return;
            }
            if !*self.member.borrow() {
                at_once = false;
                continue;
            }
            at_once = match self.take_over_share().await {
                Ok(taken) => taken > 0,
                Err(e) => {
                    tracing::warn!("cannot take tables over: {e}");
                    false
                }
            };
        }
    }

    /// Takes this node's share of the tables nobody plays, and brings them
    /// back; how many it took.
    pub(super) async fn take_over_share(&self) -> Result<usize, StoreError> {
        let _turn = self.taking.lock().await;
        if lately(&self.rejoined, self.config.lease) {
            return Ok(0);
        }
        let (orphans, members) = self.store.orphans_and_members().await?;
        if orphans == 0 || members == 0 {
            return Ok(0);
        }
        // A fair share each, so that a dead node's tables spread over the others.
        let share = (orphans + members - 1) / members;
        // A node that sent tables away lately does not take them back: what
        // was released lately is left to the node it was sent to (which
        // takes it at once), and to any other node after a lease.
        let settled = if lately(&self.last_sent, self.config.lease * 2) { self.config.lease } else { Duration::ZERO };
        let taken = self.store.take_over_tables(&self.node_id, share, settled).await?;
        let count = taken.len();
        if count > 0 {
            crate::metrics::cluster_taken_over(count);
            self.bring_back(taken, "taken over").await;
        }
        Ok(count)
    }

    /// Plays here the tables the store has just given this node, at their
    /// new epochs: brought back from their logs, as a restart does; logs
    /// how many (`what`: how they came) and how long it took.
    pub(super) async fn bring_back(&self, taken: Vec<(String, i64)>, what: &str) {
        if taken.is_empty() {
            return;
        }
        let began = Instant::now();
        let ids: Vec<String> = taken.iter().map(|(id, _)| id.clone()).collect();
        // On their way before they are this node's: the check of ownership
        // must not take them for tables that closed here.
        self.lobby.expect_taking(&ids);
        for (id, epoch) in &taken {
            self.store.fence(id, *epoch);
        }
        let progress = self.lobby.take_over(ids).await;
        tracing::info!(
            "{} tables {what} in {:.2} s ({} could not be brought back)",
            taken.len(),
            began.elapsed().as_secs_f64(),
            progress.failed
        );
    }

    /// Tells the other nodes that this one let tables go: the one named
    /// (rebalancing), or else every node, is to take them over at once.
    pub(super) async fn tables_wait(&self, for_node: Option<&str>) {
        let notice = TablesWait { from: self.node_id.clone(), to: for_node.map(str::to_string) };
        let payload = serde_json::to_vec(&notice).unwrap_or_default();
        if let Err(e) = self.bus.publish(self.shared.orphans.clone(), &payload).await {
            tracing::warn!("cannot tell the other nodes that tables wait: {e}");
        }
    }

    pub(super) async fn hear_orphans(self: Arc<Self>, mut orphans: Heard) {
        while let Some(notice) = orphans.next().await {
            let Ok(notice) = serde_json::from_slice::<TablesWait>(&notice.payload) else { continue };
            // The stand-ins here of the tables it let go are stale at once
            // (not at the next heartbeat): the next request reads where
            // each table is now.
            if notice.from != self.node_id {
                self.forget_stand_ins(|owner| owner == notice.from);
            }
            // Tables sent to another node are left to it; should it not
            // take them, every node looks again at its next heartbeat.
            if notice.to.is_none_or(|to| to == self.node_id) {
                self.orphans.notify_one();
            }
        }
    }

    // ----- rebalancing ---------------------------------------------------------------------

    /// Every heartbeat: while this node is the most loaded, by more than its
    /// fair share and one, it sends some of its tables to the least loaded
    /// node, a few at a time, each when its hand is over.
    pub(super) async fn rebalance(self: Arc<Self>) {
        if self.config.rebalance_at_once == 0 {
            return;
        }
        loop {
            tokio::time::sleep(self.config.heartbeat).await;
            if self.leaving.load(Ordering::SeqCst) || !*self.member.borrow() {
                continue;
            }
            // What moved, or closed, is no longer on its way.
            let on_the_way: Vec<String> = {
                let mut moving = self.moving.lock().unwrap_or_else(|e| e.into_inner());
                moving.retain(|id| self.lobby.holds(id));
                moving.iter().cloned().collect()
            };
            let members = self.members.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let loads: Vec<(String, i64)> = members
                .iter()
                .filter(|n| n.state == "member" && n.expires_in_ms > 0)
                .map(|n| (n.id.clone(), n.tables))
                .collect();
            let mine = self.store.fences().len() as i64;
            let Some((to, count)) =
                balance::plan(&self.node_id, mine, &loads, on_the_way.len(), self.config.rebalance_at_once)
            else {
                continue;
            };
            for id in self.tables_to_move(count, &on_the_way).await {
                self.moving.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone());
                tokio::spawn(self.clone().move_table(id, to.clone()));
            }
        }
    }

    /// Up to `count` tables being played here that are not on their way
    /// yet; those with the fewest people first (a person's socket moves
    /// with the table, and reconnects).
    pub(super) async fn tables_to_move(&self, count: usize, on_the_way: &[String]) -> Vec<String> {
        let mut playing = Vec::new();
        for handle in self.lobby.handles() {
            if on_the_way.contains(&handle.id) {
                continue;
            }
            let Ok(info) = self.lobby.info(&handle).await else { continue };
            if info.state == crate::protocol::ws::TableState::Playing {
                let people = info.seats.iter().filter(|s| s.robot.is_none() && s.name.is_some()).count();
                playing.push((people, handle.id.clone()));
            }
        }
        playing.sort();
        playing.into_iter().take(count).map(|(_, id)| id).collect()
    }

    /// Moves one table to node `to` at its hand's end: it stops here as on
    /// SIGTERM, its row is released, and `to` is told to take it.
    pub(super) async fn move_table(self: Arc<Self>, id: String, to: String) {
        let Some(epoch) = self.store.epoch_of(&id) else { return };
        let Ok(handle) = self.lobby.get(&id) else { return };
        // Not answered: not moved (it closed, or this node is leaving,
        // which hands it over itself).
        if handle.ask(|reply| TableCommand::MoveBetweenHands { reply }).await.is_err() {
            return;
        }
        self.store.unfence(&id);
        *self.last_sent.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        if let Err(e) = self.store.release_table(&id, &self.node_id, epoch).await {
            // Its row still names this node, which no longer plays it: the
            // next check of ownership releases it.
            tracing::warn!(table = %id, "cannot release a table moving to another node: {e}");
        }
        crate::metrics::cluster_moved();
        self.tables_wait(Some(&to)).await;
    }

    // ----- leaving ----------------------------------------------------------------------

    /// Hands every table over before this node stops (SIGTERM): each stores
    /// what it has, sends its clients to reconnect, and is released; the
    /// other nodes, told at once, take them over. Then the lease goes.
    pub async fn leave(&self) {
        if self.leaving.swap(true, Ordering::SeqCst) {
            return;
        }
        let began = Instant::now();
        if let Err(e) = self.store.leave_cluster(&self.node_id).await {
            tracing::warn!("cannot mark this node as leaving: {e}");
        }
        let fences = self.store.fences();
        let handovers = fences.iter().map(|(id, epoch)| async move {
            if let Ok(handle) = self.lobby.get(id) {
                let _ = handle.ask(|reply| TableCommand::HandOver { reply }).await;
            }
            self.store.unfence(id);
            if let Err(e) = self.store.release_table(id, &self.node_id, *epoch).await {
                tracing::warn!(table = %id, "cannot release the table: {e}");
            }
        });
        // The database may be away: a table that cannot store what it has
        // showed none of it (stored before shown), so leaving without it
        // loses nothing a client saw; waiting would hold the node for ever.
        if tokio::time::timeout(HAND_OVER_WITHIN, futures_util::future::join_all(handovers)).await.is_err() {
            tracing::warn!("some tables could not store what they had: left as last stored");
        }
        let _ = tokio::time::timeout(HAND_OVER_WITHIN, self.tables_wait(None)).await;
        self.bus.flush().await;
        if let Err(e) = self.store.forget_node(&self.node_id).await {
            tracing::warn!("cannot remove this node's lease: {e}");
        }
        crate::metrics::cluster_member(false);
        self.stop.cancel();
        tracing::info!(
            "{} tables handed over in {:.2} s; left the cluster",
            fences.len(),
            began.elapsed().as_secs_f64()
        );
    }
}

/// Whether the moment kept in `at` is less than `within` ago.
fn lately(at: &Mutex<Option<Instant>>, within: Duration) -> bool {
    at.lock().unwrap_or_else(|e| e.into_inner()).is_some_and(|at| at.elapsed() < within)
}
