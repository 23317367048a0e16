//! The service's work done after an answer is sent (the decision log's writer, the shadow
//! rules): how such a thread takes its queue, and how it gives way to requests.
//!
//! Both threads run the same loop ([`drain`]): take what is queued, nap a few milliseconds
//! while more keeps coming (a thread that waits on its queue after every item makes each
//! request that sends one pay a wake-up, a system call), and wait only once a look finds
//! nothing. And both run at [`Priority::Idle`] by default: on Linux a `SCHED_IDLE` thread gets
//! a core only when no request needs it, so on a server whose cores are all busy with requests
//! the background work falls behind, its queue fills and what does not fit is dropped and
//! counted — a request is never slowed by it. With spare cores (the usual case) it keeps up
//! and nothing is dropped.

use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Duration;

/// How a background thread shares the cores with requests (`serve --background-priority`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Priority {
    /// Only the CPU time requests leave (Linux `SCHED_IDLE`; elsewhere the thread runs at the
    /// normal priority and says so): under full load lines are dropped and counted rather than
    /// requests slowed.
    #[default]
    Idle,
    /// The same share as a request: every line is kept as long as the queue holds, and under
    /// full load the background work takes CPU time from requests.
    Normal,
}

impl Priority {
    /// As written on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Normal => "normal",
        }
    }
}

/// Gives the calling thread `priority`; says why when the system refuses (the thread then runs
/// at the normal priority, which is still correct, only not as polite).
pub fn apply(priority: Priority) -> Result<(), String> {
    match priority {
        Priority::Normal => Ok(()),
        Priority::Idle => idle(),
    }
}

#[cfg(target_os = "linux")]
fn idle() -> Result<(), String> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `sched_setscheduler` with pid 0 changes only the calling thread's policy and
    // reads `param`, which lives across the call. Lowering one's own policy needs no privilege.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &raw const param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().to_string())
    }
}

// Elsewhere a nice value is the whole process's, requests included: nothing to lower alone.
#[cfg(not(target_os = "linux"))]
fn idle() -> Result<(), String> {
    Err("a thread of its own idle priority is Linux's (SCHED_IDLE)".to_owned())
}

/// Starts a named background thread at `priority` that runs `work` (a refused priority is
/// logged, and the thread runs anyway).
pub fn spawn(
    name: &str,
    priority: Priority,
    work: impl FnOnce() + Send + 'static,
) -> Result<(), String> {
    let label = name.to_owned();
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            if let Err(e) = apply(priority) {
                tracing::warn!(thread = %label, priority = priority.as_str(), error = %e, "cannot lower the thread's priority; it runs at the normal one");
            }
            work();
        })
        .map(drop)
        .map_err(|e| format!("cannot start the {name} thread: {e}"))
}

/// What [`drain`] hands its caller.
#[derive(Debug)]
pub enum Step<T> {
    /// The next item of the queue.
    Item(T),
    /// The queue was found empty: the thread is about to wait for the next item.
    Waiting,
    /// An item came after a wait (it is handed over next).
    Woken,
}

/// Hands every item of `rx` to `step` until the senders are gone: drains what is queued, naps
/// `nap` before looking again while items keep coming, and once a look finds nothing says
/// [`Step::Waiting`], waits for the next item, and says [`Step::Woken`] before handing it over.
pub fn drain<T>(rx: &Receiver<T>, nap: Duration, mut step: impl FnMut(Step<T>)) {
    let mut took = false;
    loop {
        let item = match rx.try_recv() {
            Ok(item) => item,
            Err(TryRecvError::Empty) if took => {
                took = false;
                std::thread::sleep(nap);
                continue;
            }
            Err(TryRecvError::Empty) => {
                step(Step::Waiting);
                let next = rx.recv();
                match next {
                    Ok(item) => {
                        step(Step::Woken);
                        item
                    }
                    Err(_) => return,
                }
            }
            Err(TryRecvError::Disconnected) => return,
        };
        took = true;
        step(Step::Item(item));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    #[test]
    fn drain_takes_every_item_in_order_and_ends_when_the_senders_are_gone() {
        let (tx, rx) = mpsc::sync_channel(4);
        let sender = std::thread::spawn(move || {
            for i in 0..100 {
                tx.send(i).expect("the receiver is there");
            }
        });
        let mut got = Vec::new();
        let mut waits = 0;
        drain(&rx, Duration::from_millis(1), |step| match step {
            Step::Item(i) => got.push(i),
            Step::Waiting => waits += 1,
            Step::Woken => {}
        });
        sender.join().expect("sender");
        assert_eq!(got, (0..100).collect::<Vec<_>>());
        // It waited at least once: at the start, before anything was sent, or at the end.
        assert!(waits >= 1);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_idle_thread_has_the_idle_policy_and_normal_leaves_it() {
        let policy = |p: Priority| {
            std::thread::spawn(move || {
                apply(p).expect("lowering one's own priority needs no privilege");
                // SAFETY: reads the calling thread's policy.
                unsafe { libc::sched_getscheduler(0) }
            })
            .join()
            .expect("thread")
        };
        assert_eq!(policy(Priority::Idle), libc::SCHED_IDLE);
        assert_eq!(policy(Priority::Normal), libc::SCHED_OTHER);
    }
}
