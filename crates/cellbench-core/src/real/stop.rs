//! Stopping agents: the controller's interrupt stops every agent of its run
//! (a group) on this host, and every blocking wait of an agent is cut into
//! slices so that it notices within one.

use super::AgentError;
use std::time::Duration;

/// Every blocking wait of an agent is cut into slices this long, so that a stop
/// (the controller interrupted) ends it within one slice.
pub(super) const SLICE: Duration = Duration::from_millis(100);

/// Groups (one per controller run) whose agents must stop.
static STOPPED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
/// Whether any group was ever stopped: the per-block check is one relaxed load
/// until then, so a full-blast loop pays nothing for it.
static ANY_STOPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Stop every agent of `group` on this host within about 100 ms (they fail with
/// "stopped"); later agents of the group stop at once.
pub fn stop(group: &str) {
    let mut g = STOPPED.lock().unwrap_or_else(|e| e.into_inner());
    if !g.iter().any(|x| x == group) {
        g.push(group.to_string());
    }
    ANY_STOPPED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// An agent's view of the stop registry.
#[derive(Clone, Copy)]
pub(super) struct Stop<'a>(pub(super) Option<&'a str>);

impl Stop<'_> {
    pub(super) fn requested(&self) -> bool {
        match self.0 {
            None => false,
            Some(_) if !ANY_STOPPED.load(std::sync::atomic::Ordering::Relaxed) => false,
            Some(g) => STOPPED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|x| x == g),
        }
    }

    pub(super) fn check(&self) -> Result<(), AgentError> {
        if self.requested() {
            Err(AgentError("stopped by the controller".into()))
        } else {
            Ok(())
        }
    }
}
