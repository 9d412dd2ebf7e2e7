//! The server's one stop signal and the tasks it waits for.
//!
//! Everything that runs until the server stops (the HTTP accept loop, each
//! WebSocket, the classic listener and its sessions, the housekeeping
//! tasks) hears the same [`Shutdown`], and the tasks spawned through it are
//! waited for ([`Shutdown::wait`]) before the tables and the store close:
//! nothing is still writing when they do.

use std::future::Future;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The stop signal and the tasks that end with it. Cloning it gives
/// another handle on the same signal and the same tasks.
#[derive(Clone, Debug, Default)]
pub struct Shutdown {
    signal: CancellationToken,
    tasks: TaskTracker,
}

impl Shutdown {
    /// A signal not given yet, with no task.
    pub fn new() -> Shutdown {
        Shutdown::default()
    }

    /// Gives the signal: everything listening stops.
    pub fn stop(&self) {
        self.signal.cancel();
    }

    /// Whether the signal has been given.
    pub fn is_stopping(&self) -> bool {
        self.signal.is_cancelled()
    }

    /// Completes once the signal is given (at once if it has been).
    pub async fn stopped(&self) {
        self.signal.cancelled().await;
    }

    /// Runs `task`, which must end soon after the signal, and which
    /// [`Shutdown::wait`] waits for.
    pub fn spawn<F>(&self, task: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tasks.spawn(task)
    }

    /// Waits until every task spawned through this signal has ended (after
    /// the signal; no task may be spawned through it afterwards).
    pub async fn wait(&self) {
        self.tasks.close();
        self.tasks.wait().await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[tokio::test]
    async fn the_tasks_hear_the_signal_and_are_waited_for() {
        let shutdown = Shutdown::new();
        let ended = Arc::new(AtomicBool::new(false));
        let (listening, heard) = (shutdown.clone(), ended.clone());
        shutdown.spawn(async move {
            listening.stopped().await;
            tokio::task::yield_now().await;
            heard.store(true, Ordering::SeqCst);
        });
        assert!(!shutdown.is_stopping());
        shutdown.stop();
        shutdown.wait().await;
        assert!(shutdown.is_stopping());
        assert!(ended.load(Ordering::SeqCst), "wait returned before the task ended");
    }
}
