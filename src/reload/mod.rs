//! The live ruleset: an [`ArcSwapOption`] that a reload replaces only with a ruleset built
//! completely on the side. A reload that fails keeps the last good ruleset serving and records
//! why. Requests take one `Arc` at their start and keep it to the end, so a swap never mixes
//! two versions inside one decision.
//!
//! A reload reads the directory once ([`source::read_dir`](crate::source::read_dir)); the digest of what it read is
//! both the new version and the "did anything change" test, so an unchanged directory is never
//! compiled, logged or counted again, and a broken file is reported once per distinct content.
//!
//! A change the watcher sees that removes a rule file the serving ruleset was built from (a
//! delete, or a rename away) waits until the directory has been quiet for a settle window
//! ([`LiveRules::set_delete_settle`]) before it is applied: `rm f && write f`, `git checkout`,
//! sync tools and scripted deploys put files back moments later, and the rules without the file
//! must not serve in between. The pending read's digest is not kept as "last read", so the file
//! coming back byte for byte is an unchanged directory and the removal is simply dropped. The
//! caller re-checks after the window with [`LiveRules::settle`]. Creates and writes apply at
//! once, and so does every explicit reload (start-up, `SIGHUP`, the API): the operator asked.
//!
//! The watcher (`watch`) turns file events into reloads. Only events that can change content
//! count (a create, a write, a rename, a delete); the opens and reads a reload itself causes do
//! not, so an idle service reads nothing. It survives the directory being deleted, replaced or
//! moved (rsync- and git-style deploys): a supervisor thread checks the directory's identity
//! twice a second and re-arms the watch on whatever is at the path now. Its health is part of
//! [`Status`] and of the service's metrics.

mod live;
#[cfg(feature = "watch")]
mod watch;

pub use live::*;
#[cfg(feature = "watch")]
pub use watch::{CHECK_INTERVAL, DEBOUNCE, POLL_INTERVAL, Watcher, watch};
