//! What a server answers while it starts: before its store is open (a
//! Postgres that does not answer yet, `--wait-for-services`) and it has
//! joined its cluster (a NATS not up yet), its listener is bound but nothing
//! else could answer. Rather than leave connections waiting in the queue,
//! a copy of the listener answers them all, `/healthz` and `/readyz`
//! included, `503` with the code of the service awaited and a
//! `Retry-After`: a load balancer or a health check sees "not ready" at
//! once, and a client is told to come back. (`/healthz` says `ok` only once
//! the server itself answers: what waits for it may go on at once.)

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::response::Response;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::error::{ApiErrorCode, error_body};

/// What the server waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Awaiting {
    /// Its database.
    Database,
    /// Its cluster's NATS (and its lease).
    Cluster,
}

impl Awaiting {
    fn refusal(self) -> Response {
        let (code, message) = match self {
            Awaiting::Database => {
                (ApiErrorCode::StoreUnavailable, "the server is starting: its game store does not answer yet")
            }
            Awaiting::Cluster => (ApiErrorCode::NotMember, "the server is starting: it has not joined its cluster yet"),
        };
        let mut response = error_body(code.status(), code, message);
        response.headers_mut().insert(axum::http::header::RETRY_AFTER, 1.into());
        response
    }
}

/// The answers given while the server starts, until [`Starting::stop`].
#[derive(Debug)]
pub struct Starting {
    awaiting: Arc<Mutex<Awaiting>>,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Starting {
    /// Answers on a copy of `listener` (the same socket) from now on. Where
    /// the socket cannot be copied, nothing answers until the server does.
    pub fn answer(listener: &TcpListener) -> Starting {
        let awaiting = Arc::new(Mutex::new(Awaiting::Database));
        let stop = CancellationToken::new();
        let task = match copy(listener) {
            Ok(copy) => {
                let state = awaiting.clone();
                let app = Router::new().fallback(move || {
                    let awaiting = *state.lock().unwrap_or_else(|e| e.into_inner());
                    async move { awaiting.refusal() }
                });
                let stopped = stop.clone();
                Some(tokio::spawn(async move {
                    let _ = axum::serve(copy, app).with_graceful_shutdown(stopped.cancelled_owned()).await;
                }))
            }
            Err(e) => {
                tracing::warn!("nothing answers until the server has started (cannot copy its socket: {e})");
                None
            }
        };
        Starting { awaiting, stop, task }
    }

    /// Now waiting for `what`.
    pub fn awaiting(&self, what: Awaiting) {
        *self.awaiting.lock().unwrap_or_else(|e| e.into_inner()) = what;
    }

    /// Stops answering (the server answers from now on); a connection still
    /// open is given a second to finish.
    pub async fn stop(mut self) {
        self.stop.cancel();
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(1), &mut task).await.is_err()
        {
            task.abort();
        }
    }
}

/// Another listener on the same socket (its descriptor duplicated).
fn copy(listener: &TcpListener) -> std::io::Result<TcpListener> {
    use std::os::fd::AsFd;
    let fd = listener.as_fd().try_clone_to_owned()?;
    let std = std::net::TcpListener::from(fd);
    std.set_nonblocking(true)?;
    TcpListener::from_std(std)
}
