//! The service's work done after an answer is sent (the decision log's writer, the shadow
//! rules): how such a thread takes its queue, and how it gives way to requests.
//!
//! Both threads run the same loop ([`drain`]): take what is queued, and nap a few milliseconds
//! whenever a look finds nothing. They never block on their queue: a thread waiting in
//! `recv` makes each request that sends to it pay a wake-up (a system call), and it holds a
//! lock the senders take to wake it. And both run at [`Priority::Idle`] by default: on Linux a
//! `SCHED_IDLE` thread gets a core only when no request needs it, so on a server whose cores
//! are all busy with requests the background work falls behind, its queue fills and what does
//! not fit is dropped and counted — a request is never slowed by it. With spare cores (the
//! usual case) it keeps up and nothing is dropped. That is also why a request never waits for
//! anything these threads hold: a thread that gets no core holds it for long. Their queue is
//! [`queue`] (a bounded channel of slots made a sender wait while the receiver read its slot),
//! and the shadow's counts are atomics (they were under a mutex the requests took too): with
//! either, p99 under full load went from 1 ms to 0.1–1.3 s in some runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, TryRecvError};
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

/// A bounded queue whose sender never waits for its receiver: an unbounded channel (whose
/// senders wait at most for one another, never for the receiver) with a count of what it holds.
/// A bounded channel of slots is not enough: a sender that finds the slot the receiver is
/// reading waits for the receiver to let go of it, and a receiver at idle priority may not run
/// for a long time (measured: p99 from 1 ms to 0.1–1.3 s in some runs).
pub fn queue<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = mpsc::channel();
    let held = Arc::new(AtomicUsize::new(0));
    let sender = Sender {
        tx,
        held: held.clone(),
        capacity: capacity.max(1),
    };
    (sender, Receiver { rx, held })
}

/// The sending side of [`queue`].
#[derive(Debug)]
pub struct Sender<T> {
    tx: mpsc::Sender<T>,
    held: Arc<AtomicUsize>,
    capacity: usize,
}

impl<T> Sender<T> {
    /// Queues `item`, or gives it back when the queue is full or its receiver gone. Never
    /// waits.
    pub fn try_send(&self, item: T) -> Result<(), T> {
        if self.held.fetch_add(1, Ordering::AcqRel) >= self.capacity {
            self.held.fetch_sub(1, Ordering::AcqRel);
            return Err(item);
        }
        self.tx.send(item).map_err(|e| {
            self.held.fetch_sub(1, Ordering::AcqRel);
            e.0
        })
    }
}

/// The receiving side of [`queue`].
#[derive(Debug)]
pub struct Receiver<T> {
    rx: mpsc::Receiver<T>,
    held: Arc<AtomicUsize>,
}

impl<T> Receiver<T> {
    fn try_recv(&self) -> Result<T, TryRecvError> {
        let item = self.rx.try_recv()?;
        self.held.fetch_sub(1, Ordering::AcqRel);
        Ok(item)
    }
}

/// What [`drain`] hands its caller.
#[derive(Debug)]
pub enum Step<T> {
    /// The next item of the queue.
    Item(T),
    /// The queue was found empty: the thread naps until the next item.
    Waiting,
    /// An item came after the queue was found empty (it is handed over next).
    Woken,
}

/// Hands every item of `rx` to `step` until the senders are gone: drains what is queued and
/// naps `nap` whenever a look finds nothing. The first look that finds nothing after some items
/// says [`Step::Waiting`], and the first item after that says [`Step::Woken`] before it is
/// handed over. It never blocks in `recv` (see the module's page); while nothing comes the naps
/// grow to [`IDLE_NAP`], so an idle service wakes these threads a few times a second.
pub fn drain<T>(rx: &Receiver<T>, nap: Duration, mut step: impl FnMut(Step<T>)) {
    let mut waiting = false;
    let mut idle_for = nap;
    loop {
        match rx.try_recv() {
            Ok(item) => {
                if waiting {
                    waiting = false;
                    idle_for = nap;
                    step(Step::Woken);
                }
                step(Step::Item(item));
            }
            Err(TryRecvError::Empty) => {
                if !waiting {
                    waiting = true;
                    step(Step::Waiting);
                }
                std::thread::sleep(idle_for);
                idle_for = (idle_for * 2).min(IDLE_NAP.max(nap));
            }
            Err(TryRecvError::Disconnected) => return,
        }
    }
}

/// The longest nap of [`drain`] while nothing comes: how much later than its request a line
/// reaches the decision log of a quiet service, at most.
pub const IDLE_NAP: Duration = Duration::from_millis(100);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_takes_every_item_in_order_and_ends_when_the_senders_are_gone() {
        let (tx, rx) = queue(4);
        let sender = std::thread::spawn(move || {
            for i in 0..100 {
                // A full queue gives the item back: try again until it is taken.
                let mut item = i;
                while let Err(back) = tx.try_send(item) {
                    item = back;
                    std::thread::yield_now();
                }
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

    #[test]
    fn a_full_queue_gives_the_item_back_at_once_and_takes_again_once_read() {
        let (tx, rx) = queue(2);
        assert!(tx.try_send(1).is_ok() && tx.try_send(2).is_ok());
        assert_eq!(tx.try_send(3), Err(3));
        assert_eq!(rx.try_recv(), Ok(1));
        assert!(tx.try_send(3).is_ok());
        drop(rx);
        assert_eq!(tx.try_send(4), Err(4), "no receiver");
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
