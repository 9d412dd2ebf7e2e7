//! Password hashing: argon2id, run on tokio's blocking threads with a cap on
//! how many hashes run at once, so that a burst of logins takes at most that
//! many cores' worth of time and never stalls the tables' async workers.

use std::sync::Arc;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use tokio::sync::Semaphore;

/// The shortest password, in characters.
pub const MIN_PASSWORD_CHARS: usize = 8;
/// The longest password, in characters.
pub const MAX_PASSWORD_CHARS: usize = 256;

/// Why a hash could not be made or checked: a bug or a damaged stored hash,
/// never the password's fault.
#[derive(Debug, thiserror::Error)]
#[error("password hashing failed: {0}")]
pub struct HashError(String);

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
    hasher: Argon2<'static>,
    running: Arc<Semaphore>,
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
    /// Hashing at `cost`, at most `concurrent` hashes at a time.
    pub fn new(cost: Cost, concurrent: usize) -> Result<Passwords, HashError> {
        let params = Params::new(cost.memory_kib, cost.iterations, cost.parallelism, None)
            .map_err(|e| HashError(e.to_string()))?;
        let hasher = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
        let dummy = hash_now(&hasher, "a password nobody has: only its checking time matters")?;
        Ok(Passwords { hasher, running: Arc::new(Semaphore::new(concurrent.max(1))), dummy: dummy.into() })
    }

    /// The PHC string of `password`'s hash, with a fresh salt.
    pub async fn hash(&self, password: &str) -> Result<String, HashError> {
        let hasher = self.hasher.clone();
        let password = password.to_string();
        self.blocking(move || hash_now(&hasher, &password)).await?
    }

    /// Whether `password` matches the stored `hash`; with `None` (no such
    /// account) it is checked against a dummy hash and is always wrong.
    pub async fn verify(&self, hash: Option<&str>, password: &str) -> Result<bool, HashError> {
        let known = hash.is_some();
        let hash = hash.map_or_else(|| self.dummy.to_string(), str::to_string);
        let hasher = self.hasher.clone();
        let password = password.to_string();
        let matched = self
            .blocking(move || {
                let parsed =
                    PasswordHash::new(&hash).map_err(|e| HashError(format!("a stored hash does not read: {e}")))?;
                Ok::<bool, HashError>(hasher.verify_password(password.as_bytes(), &parsed).is_ok())
            })
            .await??;
        Ok(known && matched)
    }

    /// Runs `work` on a blocking thread once a hashing slot is free.
    async fn blocking<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Result<T, HashError> {
        let _slot = self.running.acquire().await.map_err(|_| HashError("the hashing slots are closed".into()))?;
        tokio::task::spawn_blocking(work).await.map_err(|e| HashError(format!("the hashing task failed: {e}")))
    }
}

fn hash_now(hasher: &Argon2<'_>, password: &str) -> Result<String, HashError> {
    use rand::RngCore;
    let mut salt = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut salt);
    let salt = SaltString::encode_b64(&salt).map_err(|e| HashError(e.to_string()))?;
    Ok(hasher.hash_password(password.as_bytes(), &salt).map_err(|e| HashError(e.to_string()))?.to_string())
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

    #[tokio::test]
    async fn an_unknown_account_never_matches() {
        let p = cheap();
        let dummy_password = "a password nobody has: only its checking time matters";
        assert!(!p.verify(None, dummy_password).await.unwrap());
        assert!(p.verify(Some("not a hash"), "x").await.is_err());
    }

    #[test]
    fn passwords_have_bounded_lengths() {
        assert!(check_new_password("1234567").is_err());
        assert!(check_new_password("12345678").is_ok());
        assert!(check_new_password(&"é".repeat(256)).is_ok());
        assert!(check_new_password(&"é".repeat(257)).is_err());
    }
}
