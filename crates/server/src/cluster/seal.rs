//! The seal on every cluster message: NATS is shared infrastructure, so a
//! node trusts nothing it hears there unless another node of its cluster
//! sealed it, and nothing it says can be read by anyone else.
//!
//! Every payload is encrypted and authenticated with XChaCha20-Poly1305
//! under a cluster key that only the nodes hold (kept in the shared
//! database, `Store::cluster_keys`). The header, sent in
//! clear but authenticated with the subject the message was published on,
//! says which key sealed it, which process sent it, that process's message
//! number and the time it was sealed:
//!
//! ```text
//! version (1) | key id (4) | sender (16) | number (8) | sealed at, ms (8) | ciphertext and tag
//! ```
//!
//! The nonce is the sender and its number (24 bytes): a process never seals
//! twice with one, and the sender is random per process. A message is
//! refused ([`Refused`]) when it is not sealed at all, names a key the node
//! does not hold (or no longer accepts), fails its tag (forged, altered, or
//! moved to another subject), was sealed too long ago or too far ahead
//! ([`FRESH_WITHIN`]), or repeats a number its subscription has already
//! heard from that sender ([`Replays`]).
//!
//! Keys rotate (`mahjong-server cluster-key rotate`): a new key is announced
//! some seconds before it is used (`Store::rotate_cluster_key`),
//! so that every node holds it by then, and the key it replaces is still
//! accepted for [`KEY_GRACE`] after.

use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

pub use crate::store::cluster::ClusterKey;

/// The format's version, the first byte of every sealed message.
const VERSION: u8 = 1;
/// Bytes before the ciphertext.
pub const HEADER: usize = 1 + 4 + 16 + 8 + 8;

/// How far a message's sealing time may be from the receiver's clock (the
/// nodes' clocks are assumed to agree within seconds; NTP keeps them within
/// milliseconds). Older messages are refused, which bounds how long a
/// captured one could be replayed onto a new subscription.
pub const FRESH_WITHIN: Duration = Duration::from_secs(30);

/// How long a key is still accepted once the next one is in use.
pub const KEY_GRACE: Duration = Duration::from_secs(60);

/// How many numbers back from the highest heard a subscription still
/// accepts a sender's message once (messages of one sender reach one
/// subscription in order, but the sender's tasks take their numbers and
/// publish in slightly different orders).
const WINDOW: u64 = 4096;

/// Why a message was refused; the label of
/// `mahjong_cluster_refused_messages_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Too short, or not of this format: not sealed by a node.
    Unsealed,
    /// Sealed with a key this node does not hold or no longer accepts.
    UnknownKey,
    /// Its tag does not check: forged, altered, or moved to another subject.
    Forged,
    /// Sealed too long ago, or too far ahead.
    Stale,
    /// A number already heard from its sender on this subscription.
    Replayed,
}

impl Refused {
    /// Its label.
    pub fn label(self) -> &'static str {
        match self {
            Refused::Unsealed => "unsealed",
            Refused::UnknownKey => "unknown_key",
            Refused::Forged => "forged",
            Refused::Stale => "stale",
            Refused::Replayed => "replayed",
        }
    }

    /// Every label (for the metric's zeroes).
    pub const ALL: [Refused; 5] =
        [Refused::Unsealed, Refused::UnknownKey, Refused::Forged, Refused::Stale, Refused::Replayed];
}

/// The keys a node seals and opens with.
struct Keys {
    /// The key messages are sealed with.
    sealing: Option<u32>,
    /// The keys messages are accepted under.
    accepted: HashMap<u32, XChaCha20Poly1305>,
}

/// What a node seals with and accepts: the cluster's keys, its own id as a
/// sender, and its count of messages sealed.
pub struct Seal {
    keys: RwLock<Keys>,
    sender: [u8; 16],
    sealed: AtomicU64,
}

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
        f.debug_struct("Seal").field("sealing", &keys.sealing).field("accepted", &keys.accepted.len()).finish()
    }
}

/// Milliseconds since the Unix epoch by this machine's clock.
fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

impl Seal {
    /// A seal for a process with a fresh random sender id, holding `keys`.
    pub fn new(keys: &[ClusterKey]) -> Seal {
        let seal = Seal {
            keys: RwLock::new(Keys { sealing: None, accepted: HashMap::new() }),
            sender: *uuid::Uuid::new_v4().as_bytes(),
            sealed: AtomicU64::new(0),
        };
        seal.use_keys(keys);
        seal
    }

    /// Takes the store's keys as they stand now: seals with the newest one
    /// in use, accepts it, any announced after it, and the one before it
    /// until [`KEY_GRACE`] after it was replaced.
    pub fn use_keys(&self, keys: &[ClusterKey]) {
        let mut sorted: Vec<&ClusterKey> = keys.iter().collect();
        sorted.sort_by_key(|k| k.id);
        let sealing = sorted.iter().rev().find(|k| k.active_in_ms <= 0).map(|k| k.id);
        let grace = KEY_GRACE.as_millis() as i64;
        let mut accepted = HashMap::new();
        for (i, key) in sorted.iter().enumerate() {
            let keep = match sealing {
                // Not used yet: messages of a node that already uses it are accepted.
                Some(current) if key.id >= current => true,
                // Replaced: accepted until the grace after the next key came into use.
                Some(_) => sorted.get(i + 1).is_some_and(|next| next.active_in_ms > -grace),
                None => true,
            };
            if keep {
                accepted.insert(key.id, XChaCha20Poly1305::new((&key.secret).into()));
            }
        }
        let mut held = self.keys.write().unwrap_or_else(|e| e.into_inner());
        *held = Keys { sealing, accepted };
    }

    /// The number of the key this node seals with, if it holds one.
    pub fn sealing_key(&self) -> Option<u32> {
        self.keys.read().unwrap_or_else(|e| e.into_inner()).sealing
    }

    /// Seals `plain` for publication on `subject`. `None` only when the node
    /// holds no key (it never publishes then).
    pub fn seal(&self, subject: &str, plain: &[u8]) -> Option<Vec<u8>> {
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
        let key_id = keys.sealing?;
        let cipher = keys.accepted.get(&key_id)?;
        let number = self.sealed.fetch_add(1, Ordering::Relaxed) + 1;
        let mut out = Vec::with_capacity(HEADER + plain.len() + 16);
        out.push(VERSION);
        out.extend_from_slice(&key_id.to_be_bytes());
        out.extend_from_slice(&self.sender);
        out.extend_from_slice(&number.to_be_bytes());
        out.extend_from_slice(&now_ms().to_be_bytes());
        let nonce = nonce(&self.sender, number);
        let aad = associated(&out, subject);
        let sealed = cipher.encrypt(&nonce, Payload { msg: plain, aad: &aad }).ok()?;
        out.extend_from_slice(&sealed);
        Some(out)
    }

    /// Opens a message heard on `subject`: its plain text, or why it is
    /// refused. `replays` is the receiving subscription's memory of numbers.
    pub fn open(&self, subject: &str, sealed: &[u8], replays: &mut Replays) -> Result<Vec<u8>, Refused> {
        self.open_at(subject, sealed, replays, now_ms())
    }

    fn open_at(&self, subject: &str, sealed: &[u8], replays: &mut Replays, now: i64) -> Result<Vec<u8>, Refused> {
        if sealed.len() < HEADER + 16 || sealed[0] != VERSION {
            return Err(Refused::Unsealed);
        }
        let key_id = u32::from_be_bytes(sealed[1..5].try_into().map_err(|_| Refused::Unsealed)?);
        let sender: [u8; 16] = sealed[5..21].try_into().map_err(|_| Refused::Unsealed)?;
        let number = u64::from_be_bytes(sealed[21..29].try_into().map_err(|_| Refused::Unsealed)?);
        let at = i64::from_be_bytes(sealed[29..37].try_into().map_err(|_| Refused::Unsealed)?);
        let plain = {
            let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
            let cipher = keys.accepted.get(&key_id).ok_or(Refused::UnknownKey)?;
            let aad = associated(&sealed[..HEADER], subject);
            cipher
                .decrypt(&nonce(&sender, number), Payload { msg: &sealed[HEADER..], aad: &aad })
                .map_err(|_| Refused::Forged)?
        };
        // Judged only once authentic: the header could not have been changed.
        if (now - at).unsigned_abs() > FRESH_WITHIN.as_millis() as u64 {
            return Err(Refused::Stale);
        }
        replays.admit(sender, number)?;
        Ok(plain)
    }
}

fn nonce(sender: &[u8; 16], number: u64) -> XNonce {
    let mut nonce = [0u8; 24];
    nonce[..16].copy_from_slice(sender);
    nonce[16..].copy_from_slice(&number.to_be_bytes());
    nonce.into()
}

/// What the tag covers besides the ciphertext: the header and the subject,
/// so that a message cannot be moved to another subject or re-dated.
fn associated(header: &[u8], subject: &str) -> Vec<u8> {
    let mut aad = Vec::with_capacity(header.len() + subject.len());
    aad.extend_from_slice(header);
    aad.extend_from_slice(subject.as_bytes());
    aad
}

/// A subscription's memory of the numbers each sender's messages carried:
/// the highest, and which of the [`WINDOW`] before it were heard.
#[derive(Debug, Default)]
pub struct Replays {
    senders: HashMap<[u8; 16], Window>,
}

#[derive(Debug)]
struct Window {
    highest: u64,
    /// Bit `i`: number `highest - i` was heard.
    heard: [u64; (WINDOW / 64) as usize],
}

impl Window {
    fn bit(&mut self, back: u64) -> (&mut u64, u64) {
        (&mut self.heard[(back / 64) as usize], 1 << (back % 64))
    }

    /// Moves the window up to `number`, now heard.
    fn advance(&mut self, number: u64) {
        let by = number - self.highest;
        if by >= WINDOW {
            self.heard = [0; (WINDOW / 64) as usize];
        } else {
            // Shift the bitmap by `by` bits towards the older end (word 0
            // bit 0 is the newest).
            let (words, bits) = ((by / 64) as usize, (by % 64) as u32);
            let old = self.heard;
            for (i, word) in self.heard.iter_mut().enumerate() {
                let from = |j: usize| if j < old.len() { old[j] } else { 0 };
                *word = match i.checked_sub(words) {
                    None => 0,
                    Some(j) if bits == 0 => from(j),
                    Some(j) => (from(j) << bits) | j.checked_sub(1).map_or(0, |k| from(k) >> (64 - bits)),
                };
            }
        }
        self.highest = number;
        *self.bit(0).0 |= 1;
    }
}

impl Replays {
    /// Senders a subscription remembers at most (a cluster has a handful;
    /// a flood of made-up senders cannot pass the tag anyway).
    const SENDERS: usize = 256;

    /// Admits `number` from `sender` once.
    fn admit(&mut self, sender: [u8; 16], number: u64) -> Result<(), Refused> {
        if !self.senders.contains_key(&sender) && self.senders.len() >= Self::SENDERS {
            // Senders that stopped (restarted nodes) are forgotten wholesale.
            self.senders.clear();
        }
        let window =
            self.senders.entry(sender).or_insert_with(|| Window { highest: 0, heard: [0; (WINDOW / 64) as usize] });
        if number > window.highest {
            window.advance(number);
            return Ok(());
        }
        let back = window.highest - number;
        if back >= WINDOW {
            return Err(Refused::Replayed);
        }
        let (word, bit) = window.bit(back);
        if *word & bit != 0 {
            return Err(Refused::Replayed);
        }
        *word |= bit;
        Ok(())
    }
}

/// A new random key's 32 bytes.
pub fn new_secret() -> [u8; 32] {
    use rand::RngCore;
    let mut secret = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut secret);
    secret
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: u32, byte: u8, active_in_ms: i64) -> ClusterKey {
        ClusterKey { id, secret: [byte; 32], active_in_ms }
    }

    #[test]
    fn a_sealed_message_opens_once_on_its_own_subject() {
        let keys = [key(1, 7, -1000)];
        let (a, b) = (Seal::new(&keys), Seal::new(&keys));
        let sealed = a.seal("mj.node.x", b"{\"op\":\"info\"}").unwrap();
        assert!(!sealed.windows(4).any(|w| w == b"info"), "the text is not readable");
        let mut replays = Replays::default();
        assert_eq!(b.open("mj.node.x", &sealed, &mut replays).unwrap(), b"{\"op\":\"info\"}");
        assert_eq!(b.open("mj.node.x", &sealed, &mut replays), Err(Refused::Replayed));
        assert_eq!(b.open("mj.node.y", &sealed, &mut Replays::default()), Err(Refused::Forged), "another subject");
        let mut altered = sealed.clone();
        *altered.last_mut().unwrap() ^= 1;
        assert_eq!(b.open("mj.node.x", &altered, &mut Replays::default()), Err(Refused::Forged));
        let mut redated = sealed.clone();
        redated[30] ^= 1;
        assert_eq!(b.open("mj.node.x", &redated, &mut Replays::default()), Err(Refused::Forged));
        assert_eq!(b.open("mj.node.x", b"{\"op\":\"connect\"}", &mut replays), Err(Refused::Unsealed));
        let stranger = Seal::new(&[key(1, 8, -1000)]);
        assert_eq!(stranger.open("mj.node.x", &sealed, &mut Replays::default()), Err(Refused::Forged));
        let other = Seal::new(&[key(2, 7, -1000)]);
        assert_eq!(other.open("mj.node.x", &sealed, &mut Replays::default()), Err(Refused::UnknownKey));
    }

    #[test]
    fn every_refusal_is_a_label_of_the_metric() {
        let labels: Vec<&str> = Refused::ALL.iter().map(|r| r.label()).collect();
        assert_eq!(labels, crate::metrics::REFUSED_WHY);
    }

    #[test]
    fn an_old_message_is_stale() {
        let keys = [key(1, 7, -1000)];
        let seal = Seal::new(&keys);
        let sealed = seal.seal("s", b"x").unwrap();
        let later = now_ms() + FRESH_WITHIN.as_millis() as i64 + 1000;
        assert_eq!(seal.open_at("s", &sealed, &mut Replays::default(), later), Err(Refused::Stale));
    }

    #[test]
    fn numbers_out_of_order_pass_once_within_the_window() {
        let mut replays = Replays::default();
        let me = [1u8; 16];
        for n in [5, 3, 4, 1, 2, 10, 9] {
            assert_eq!(replays.admit(me, n), Ok(()), "{n}");
        }
        for n in [5, 3, 10, 9, 1] {
            assert_eq!(replays.admit(me, n), Err(Refused::Replayed), "{n}");
        }
        assert_eq!(replays.admit(me, 10 + WINDOW), Ok(()));
        assert_eq!(replays.admit(me, 10), Err(Refused::Replayed), "out of the window");
        assert_eq!(replays.admit(me, 11), Ok(()), "just inside it");
        assert_eq!(replays.admit([2u8; 16], 1), Ok(()), "another sender has its own");
    }

    #[test]
    fn a_rotated_key_is_used_once_active_and_the_old_one_accepted_for_a_grace() {
        let old = key(1, 1, -100_000);
        let announced = key(2, 2, 5_000);
        let seal = Seal::new(&[old.clone(), announced.clone()]);
        assert_eq!(seal.sealing_key(), Some(1), "the new key is not used before its time");
        let early = Seal::new(&[old.clone(), key(2, 2, -1)]);
        let sealed = early.seal("s", b"x").unwrap();
        assert_eq!(seal.open("s", &sealed, &mut Replays::default()).unwrap(), b"x", "but it is accepted");
        seal.use_keys(&[old.clone(), key(2, 2, -1_000)]);
        assert_eq!(seal.sealing_key(), Some(2));
        let by_old = Seal::new(std::slice::from_ref(&old)).seal("s", b"y").unwrap();
        assert!(seal.open("s", &by_old, &mut Replays::default()).is_ok(), "the old key within its grace");
        seal.use_keys(&[old, key(2, 2, -(KEY_GRACE.as_millis() as i64) - 1)]);
        assert_eq!(seal.open("s", &by_old, &mut Replays::default()), Err(Refused::UnknownKey), "not after it");
    }
}
