//! The audit log's record of the changes admins make through the other
//! handlers (accounts, tables closed, games imported); the options' own
//! changes are recorded by the rulebook as it makes them.

use super::AppState;
use super::extract::Caller;
use crate::store::{Author, Change};

/// The account making a change (an admin) or keeping a game, as the store names it.
pub(crate) fn author(admin: &Caller) -> Author {
    Author { user_id: admin.user_id, name: admin.name.clone() }
}

/// Logs in the audit log a change an admin made elsewhere: to an account
/// (`user/ID`), a table closed (`table/ID`), a game imported (`game/ID`).
/// The change is already made (in its own transaction): a failure to log
/// it is logged as an error, and the request still succeeds, since telling
/// the admin it failed would be false.
pub(crate) async fn record_change(
    state: &AppState,
    admin: &Caller,
    action: &'static str,
    target: String,
    before: Option<serde_json::Value>,
    after: Option<serde_json::Value>,
) {
    let change = Change { at_us: crate::store::now_us(), action, target, before, after };
    if let Err(e) = state.rulebook.record(&author(admin), &change).await {
        tracing::error!(admin = admin.user_id, target = %change.target, action, "a change was made but not logged: {e}");
    }
}
