//! The cluster's bus: NATS with every message sealed ([`super::seal`]).
//! Everything the nodes say to each other goes through [`Bus`], and
//! everything they hear through [`Heard`], which passes on only what
//! another node of the cluster sealed for that subject, once; the rest is
//! dropped and counted (`mahjong_cluster_refused_messages_total`).

use std::sync::Arc;
use std::time::Duration;

use async_nats::Subject;
use futures_util::StreamExt;

use super::seal::{Replays, Seal};

/// A message another node sealed, opened.
#[derive(Debug)]
pub struct Said {
    /// Where a request wants its answer.
    pub reply: Option<Subject>,
    /// The plain text.
    pub payload: Vec<u8>,
}

/// Why a message could not be sent or answered.
#[derive(Debug, thiserror::Error)]
pub enum BusError {
    /// The node holds no cluster key yet.
    #[error("this node holds no cluster key")]
    NoKey,
    /// NATS refused or is away.
    #[error("NATS: {0}")]
    Nats(String),
    /// No answer came in time, or none that was sealed by a node.
    #[error("no answer")]
    NoAnswer,
}

/// The NATS client and this node's seal.
#[derive(Clone, Debug)]
pub struct Bus {
    nats: async_nats::Client,
    seal: Arc<Seal>,
}

impl Bus {
    /// Messages on `nats` sealed and opened with `seal`.
    pub fn new(nats: async_nats::Client, seal: Arc<Seal>) -> Bus {
        Bus { nats, seal }
    }

    /// The seal (to take new keys).
    pub fn seal(&self) -> &Seal {
        &self.seal
    }

    /// Whether the client is connected to a NATS server now.
    pub fn connected(&self) -> bool {
        self.nats.connection_state() == async_nats::connection::State::Connected
    }

    fn sealed(&self, subject: &str, plain: &[u8]) -> Result<Vec<u8>, BusError> {
        crate::metrics::nats_message(true);
        self.seal.seal(subject, plain).ok_or(BusError::NoKey)
    }

    /// Publishes `plain` on `subject`, sealed.
    pub async fn publish(&self, subject: String, plain: &[u8]) -> Result<(), BusError> {
        let sealed = self.sealed(&subject, plain)?;
        self.nats.publish(subject, sealed.into()).await.map_err(|e| BusError::Nats(e.to_string()))
    }

    /// Publishes `plain` on `subject`, sealed, its answers wanted on `reply`.
    pub async fn publish_with_reply(&self, subject: String, reply: String, plain: &[u8]) -> Result<(), BusError> {
        let sealed = self.sealed(&subject, plain)?;
        self.nats.publish_with_reply(subject, reply, sealed.into()).await.map_err(|e| BusError::Nats(e.to_string()))
    }

    /// Asks on `subject` and waits at most `within` for a sealed answer.
    pub async fn request(&self, subject: String, plain: &[u8], within: Duration) -> Result<Vec<u8>, BusError> {
        let sealed = self.sealed(&subject, plain)?;
        let asked = tokio::time::timeout(within, self.nats.request(subject, sealed.into())).await;
        let Ok(Ok(answer)) = asked else { return Err(BusError::NoAnswer) };
        crate::metrics::nats_message(false);
        // The inbox is new to this request: nothing could have been heard on it before.
        self.seal.open(&answer.subject, &answer.payload, &mut Replays::default()).map_err(|why| {
            crate::metrics::cluster_refused(why.label());
            BusError::NoAnswer
        })
    }

    /// Subscribes to `subject`.
    pub async fn subscribe(&self, subject: String) -> Result<Heard, BusError> {
        let subscriber = self.nats.subscribe(subject).await.map_err(|e| BusError::Nats(e.to_string()))?;
        Ok(Heard { subscriber, seal: self.seal.clone(), replays: Replays::default() })
    }

    /// A subject of this client's for answers.
    pub fn new_inbox(&self) -> String {
        self.nats.new_inbox()
    }

    /// Waits until what was published has been written to NATS.
    pub async fn flush(&self) {
        // NATS may be away (a node stopped during an outage): the others
        // then learn what this one said at their next heartbeat, and
        // waiting for NATS to come back would hold the node for ever.
        let _ = tokio::time::timeout(FLUSH_WITHIN, self.nats.flush()).await;
    }
}

/// How long [`Bus::flush`] waits for NATS to take what was published.
const FLUSH_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

/// A subscription that passes on only what nodes of the cluster sealed.
pub struct Heard {
    subscriber: async_nats::Subscriber,
    seal: Arc<Seal>,
    replays: Replays,
}

impl std::fmt::Debug for Heard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Heard").finish_non_exhaustive()
    }
}

impl Heard {
    /// The next message a node sealed; `None` once the subscription ends.
    /// Others are dropped and counted.
    pub async fn next(&mut self) -> Option<Said> {
        loop {
            let message = self.subscriber.next().await?;
            crate::metrics::nats_message(false);
            match self.seal.open(&message.subject, &message.payload, &mut self.replays) {
                Ok(payload) => return Some(Said { reply: message.reply, payload }),
                Err(why) => {
                    crate::metrics::cluster_refused(why.label());
                    tracing::debug!(subject = %message.subject, why = why.label(), "a NATS message refused");
                }
            }
        }
    }

    /// Ends the subscription.
    pub async fn unsubscribe(&mut self) {
        let _ = self.subscriber.unsubscribe().await;
    }
}
