//! Handing freed memory back to the system when the service is idle.
//!
//! The binary allocates with mimalloc (see `Cargo.toml`). mimalloc returns freed pages to the
//! system lazily, when the thread that owns them allocates again; memory freed by another
//! thread waits on its owner's list until then. After a flood of connections the request
//! threads fall idle and allocate nothing, so without a nudge the flood's memory stays
//! resident. Each request thread calls [`give_back`] when it parks (tokio's `on_thread_park`);
//! at most once a second a thread, it asks mimalloc to collect that thread's heap and return
//! what is free.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Least time between two collections on one thread: a busy thread parks thousands of times a
/// second, and a collection walks the thread's heap.
const EVERY: Duration = Duration::from_secs(1);

thread_local! {
    static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Collects this thread's mimalloc heap, unless it did so less than [`EVERY`] ago. Harmless
/// when mimalloc is not the global allocator (its heaps are then empty).
pub fn give_back() {
    LAST.with(|last| {
        let now = Instant::now();
        if last.get().is_some_and(|t| now.duration_since(t) < EVERY) {
            return;
        }
        last.set(Some(now));
        // SAFETY: `mi_collect` takes no pointers and may be called from any thread at any time.
        unsafe { libmimalloc_sys::mi_collect(true) };
    });
}
