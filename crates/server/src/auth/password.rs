//! Password hashing: argon2id, run on tokio's blocking threads with a cap on
//! how many hashes run at once, so that a burst of logins takes at most that
//! many cores' worth of time and never stalls the tables' async workers.
//!
//! Each hash works in 19 MiB of memory. Left to the allocator, every blocking
//! thread that ever hashed would keep its own arena of that size, and the
//! server's memory grew with them (docs/performance.md, "Password hashing's
//! memory"), so the working memory is kept in a pool of at most as many
//! buffers as hashes may run at once, and lent to each hash.

use std::sync::Arc;

use argon2::password_hash::{Output, ParamsString, PasswordHash, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use tokio::sync::Semaphore;

/// The shortest password, in characters.
pub const MIN_PASSWORD_CHARS: usize = 8;
/// The longest password, in characters.
pub const MAX_PASSWORD_CHARS: usize = 256;

/// Why a hash could not be made or checked.
#[derive(Debug, thiserror::Error)]
pub enum HashError {
    /// A bug or a damaged stored hash, never the password's fault.
    #[error("password hashing failed: {0}")]
    Failed(String),
    /// As many hashes wait as [`Passwords::new`] allows: answered at once
    /// rather than queued behind them (a flood of wrong logins must not
    /// make everyone's login wait seconds).
    #[error("the server is checking too many passwords at once: try again in a second")]
    Busy,
}

/// argon2id's cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cost {
    /// Memory, in KiB.
    pub memory_kib: u32,
    /// Passes over the memory.
    pub iterations: u32,
    /// Lanes.
    pub parallelism: u32,
}

impl Default for Cost {
    /// OWASP's recommendation for argon2id: 19 MiB, two passes, one lane.
    fn default() -> Cost {
        Cost { memory_kib: 19 * 1024, iterations: 2, parallelism: 1 }
    }
}

/// Hashes and checks passwords.
#[derive(Clone)]
pub struct Passwords {
    params: Params,
    running: Arc<Semaphore>,
    /// Hashes asked for and not finished (running or waiting), and how many
    /// may be.
    asked: Arc<std::sync::atomic::AtomicUsize>,
    most_asked: usize,
    /// Working memory for hashes, one buffer per hash that may run at once.
    memory: Arc<std::sync::Mutex<Vec<Vec<Block>>>>,
    /// The hash an unknown name's password is checked against, so that a
    /// login takes as long whether the name exists or not.
    dummy: Arc<str>,
}

impl std::fmt::Debug for Passwords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Passwords").field("running", &self.running.available_permits()).finish_non_exhaustive()
    }
}

impl Passwords {
    /// Hashing at `cost`, at most `concurrent` hashes at a time, and at most
    /// [`WAITING_PER_SLOT`] times as many waiting (more are refused, `Busy`).
    pub fn new(cost: Cost, concurrent: usize) -> Result<Passwords, HashError> {
        let params = Params::new(cost.memory_kib, cost.iterations, cost.parallelism, None)
            .map_err(|e| HashError::Failed(e.to_string()))?;
        let mut blocks = vec![Block::default(); params.block_count()];
        let dummy = hash_now(&params, &mut blocks, "a password nobody has: only its checking time matters")?;
        Ok(Passwords {
            params,
            running: Arc::new(Semaphore::new(concurrent.max(1))),
            asked: Arc::default(),
            most_asked: concurrent.max(1) * (1 + WAITING_PER_SLOT),
            memory: Arc::new(std::sync::Mutex::new(vec![blocks])),
            dummy: dummy.into(),
        })
    }

    /// The PHC string of `password`'s hash, with a fresh salt.
    pub async fn hash(&self, password: &str) -> Result<String, HashError> {
        let params = self.params.clone();
        let password = password.to_string();
        self.blocking(move |blocks| hash_now(&params, blocks, &password)).await?
    }

    /// Whether `password` matches the stored `hash`; with `None` (no such
    /// account) it is checked against a dummy hash and is always wrong.
    pub async fn verify(&self, hash: Option<&str>, password: &str) -> Result<bool, HashError> {
        let known = hash.is_some();
        let hash = hash.map_or_else(|| self.dummy.to_string(), str::to_string);
        let password = password.to_string();
        let matched = self.blocking(move |blocks| verify_now(&hash, blocks, &password)).await??;
        Ok(known && matched)
    }

    /// Runs `work` on a blocking thread once a hashing slot is free, with a
    /// working memory from the pool (returned to it afterwards).
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Vec<Block>) -> T + Send + 'static,
    ) -> Result<T, HashError> {
        let _asked = Asked::take(&self.asked, self.most_asked).ok_or(HashError::Busy)?;
        let _slot =
            self.running.acquire().await.map_err(|_| HashError::Failed("the hashing slots are closed".into()))?;
        let pool = self.memory.clone();
        let count = self.params.block_count();
        tokio::task::spawn_blocking(move || {
            let lent = pool.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let mut blocks = lent.unwrap_or_else(|| vec![Block::default(); count]);
            let done = work(&mut blocks);
            pool.lock().unwrap_or_else(|e| e.into_inner()).push(blocks);
            done
        })
        .await
        .map_err(|e| HashError::Failed(format!("the hashing task failed: {e}")))
    }
}

/// How many hashes may wait for each slot: at about 50 ms a hash, a login
/// waits at most about half a second behind the others.
pub const WAITING_PER_SLOT: usize = 8;

/// One hash asked for, counted until it is dropped.
struct Asked(Arc<std::sync::atomic::AtomicUsize>);

impl Asked {
    fn take(asked: &Arc<std::sync::atomic::AtomicUsize>, most: usize) -> Option<Asked> {
        use std::sync::atomic::Ordering;
        asked.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < most).then_some(n + 1)).ok()?;
        Some(Asked(asked.clone()))
    }
}

impl Drop for Asked {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Hashes `password` with a fresh salt in `blocks` (of `params`' size).
fn hash_now(params: &Params, blocks: &mut [Block], password: &str) -> Result<String, HashError> {
    use rand::RngCore;
    let fail = |e: &dyn std::fmt::Display| HashError::Failed(e.to_string());
    let mut salt = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut salt);
    let salt_text = SaltString::encode_b64(&salt).map_err(|e| fail(&e))?;
    let mut out = [0u8; Params::DEFAULT_OUTPUT_LEN];
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone())
        .hash_password_into_with_memory(password.as_bytes(), &salt, &mut out, blocks)
        .map_err(|e| fail(&e))?;
    let phc = PasswordHash {
        algorithm: Algorithm::Argon2id.ident(),
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(params).map_err(|e| fail(&e))?,
        salt: Some(salt_text.as_salt()),
        hash: Some(Output::new(&out).map_err(|e| fail(&e))?),
    };
    Ok(phc.to_string())
}

/// Whether `password` matches the PHC string `stored`, computed in `blocks`
/// (replaced by a buffer of the right size if the stored hash was made at
/// another cost).
fn verify_now(stored: &str, blocks: &mut Vec<Block>, password: &str) -> Result<bool, HashError> {
    let bad = |e: &dyn std::fmt::Display| HashError::Failed(format!("a stored hash does not read: {e}"));
    let parsed = PasswordHash::new(stored).map_err(|e| bad(&e))?;
    let algorithm = Algorithm::try_from(parsed.algorithm).map_err(|e| bad(&e))?;
    let version = parsed.version.map(Version::try_from).transpose().map_err(|e| bad(&e))?.unwrap_or_default();
    let params = Params::try_from(&parsed).map_err(|e| bad(&e))?;
    let (Some(salt), Some(expected)) = (parsed.salt, parsed.hash) else {
        return Err(bad(&"no salt or no hash"));
    };
    let mut salt_buffer = [0u8; 64];
    let salt_bytes = salt.decode_b64(&mut salt_buffer).map_err(|e| bad(&e))?;
    if blocks.len() != params.block_count() {
        *blocks = vec![Block::default(); params.block_count()];
    }
    let mut out = vec![0u8; expected.len()];
    Argon2::new(algorithm, version, params)
        .hash_password_into_with_memory(password.as_bytes(), salt_bytes, &mut out, blocks.as_mut_slice())
        .map_err(|e| bad(&e))?;
    // `Output`'s equality takes the same time whatever the bytes.
    Ok(Output::new(&out).map_err(|e| bad(&e))? == expected)
}

/// Checks a new password's length: [`MIN_PASSWORD_CHARS`] to
/// [`MAX_PASSWORD_CHARS`] characters, any characters.
pub fn check_new_password(password: &str) -> Result<(), String> {
    let n = password.chars().count();
    if n < MIN_PASSWORD_CHARS {
        return Err(format!("a password has at least {MIN_PASSWORD_CHARS} characters; this one has {n}"));
    }
    if n > MAX_PASSWORD_CHARS {
        return Err(format!("a password has at most {MAX_PASSWORD_CHARS} characters; this one has {n}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cheap() -> Passwords {
        Passwords::new(Cost { memory_kib: 64, iterations: 1, parallelism: 1 }, 2).unwrap()
    }

    #[tokio::test]
    async fn a_hash_checks_its_password_only() {
        let p = cheap();
        let hash = p.hash("correct horse").await.unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(!hash.contains("correct horse"));
        assert!(p.verify(Some(&hash), "correct horse").await.unwrap());
        assert!(!p.verify(Some(&hash), "correct horsf").await.unwrap());
        // Salted: the same password hashes differently.
        assert_ne!(hash, p.hash("correct horse").await.unwrap());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn hashes_past_the_queue_are_refused_at_once_not_queued() {
        let p = Passwords::new(Cost::default(), 1).unwrap();
        let asked = 1 + WAITING_PER_SLOT + 5;
        let all = futures_util::future::join_all((0..asked).map(|_| p.verify(None, "a wrong guess"))).await;
        let busy = all.iter().filter(|r| matches!(r, Err(HashError::Busy))).count();
        assert_eq!(busy, 5, "{all:?}");
        assert!(all.iter().all(|r| matches!(r, Ok(false) | Err(HashError::Busy))));
        assert_eq!(p.asked.load(std::sync::atomic::Ordering::Acquire), 0, "every hash let its place go");
        assert!(!p.verify(None, "and later, room again").await.unwrap());
    }

    #[tokio::test]
    async fn an_unknown_account_never_matches() {
        let p = cheap();
        let dummy_password = "a password nobody has: only its checking time matters";
        assert!(!p.verify(None, dummy_password).await.unwrap());
        assert!(p.verify(Some("not a hash"), "x").await.is_err());
    }

    #[tokio::test]
    async fn hashes_read_both_ways_with_the_crate_and_another_cost() {
        use argon2::password_hash::{PasswordHasher, PasswordVerifier};
        let p = cheap();
        // Ours checks with the crate's own verifier...
        let ours = p.hash("shared secret").await.unwrap();
        assert!(Argon2::default().verify_password(b"shared secret", &PasswordHash::new(&ours).unwrap()).is_ok());
        // ... and the crate's hash at another cost checks with ours.
        let salt = SaltString::encode_b64(b"sixteen byte salt").unwrap();
        let other_cost = Params::new(128, 2, 1, None).unwrap();
        let theirs = Argon2::new(Algorithm::Argon2id, Version::V0x13, other_cost)
            .hash_password(b"shared secret", &salt)
            .unwrap()
            .to_string();
        assert!(p.verify(Some(&theirs), "shared secret").await.unwrap());
        assert!(!p.verify(Some(&theirs), "shared secreT").await.unwrap());
        // The pool holds no more buffers than hashes may run at once.
        assert!(p.memory.lock().unwrap().len() <= 2);
    }

    #[test]
    fn passwords_have_bounded_lengths() {
        assert!(check_new_password("1234567").is_err());
        assert!(check_new_password("12345678").is_ok());
        assert!(check_new_password(&"é".repeat(256)).is_ok());
        assert!(check_new_password(&"é".repeat(257)).is_err());
    }
}
