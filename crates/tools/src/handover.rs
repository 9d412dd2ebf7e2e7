//! Starting the server binary on a listening socket the caller holds, as
//! systemd's socket activation hands one over (`LISTEN_FDS=1`, the socket as
//! file descriptor 3; the server's `serve` takes it instead of binding
//! `--listen`).
//!
//! Finding a free port, letting it go and asking the child to bind it leaves
//! a moment in which anything else may take it; a socket handed over is never
//! let go. A caller that keeps it can start the server again on the same
//! address, and the connections made while none ran wait in its queue.

use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Makes `command` (the server binary's `serve`) start with `listener` handed
/// over; `listener` must stay open until the child has started.
pub fn hand_over(command: &mut Command, listener: &TcpListener) {
    let handed = listener.as_raw_fd();
    // SAFETY: between fork and exec, only async-signal-safe calls (dup2,
    // fcntl) on file descriptors the child owns.
    unsafe {
        command.pre_exec(move || {
            // dup2 gives the copy no close-on-exec flag; a socket that is
            // descriptor 3 already keeps its own, so clear it.
            let done = if handed == 3 { libc::fcntl(3, libc::F_SETFD, 0) } else { libc::dup2(handed, 3) };
            if done < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) }
        });
    }
    command.env("LISTEN_FDS", "1").env_remove("LISTEN_PID");
}
