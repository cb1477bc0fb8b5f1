//! Failpoints: named places in the commit path where tests inject an error. Compiled out unless the
//! `failpoints` feature is on; then [`set`] arms a point to fail on its n-th hit.

#[cfg(feature = "failpoints")]
mod imp {
    use std::collections::HashMap;
    use std::sync::Mutex;

    static ARMED: Mutex<Option<HashMap<&'static str, u32>>> = Mutex::new(None);

    /// Arms `name` to fail on its `nth` hit from now (1 = the next one).
    pub fn set(name: &'static str, nth: u32) {
        let mut g = ARMED.lock().unwrap_or_else(|p| p.into_inner());
        g.get_or_insert_with(HashMap::new).insert(name, nth.max(1));
    }

    /// Disarms every failpoint.
    pub fn clear() {
        *ARMED.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Called at the failpoint; true when it must fail now (it then disarms itself).
    pub fn hit(name: &'static str) -> bool {
        let mut g = ARMED.lock().unwrap_or_else(|p| p.into_inner());
        let Some(map) = g.as_mut() else { return false };
        match map.get_mut(name) {
            Some(1) => {
                map.remove(name);
                true
            }
            Some(n) => {
                *n -= 1;
                false
            }
            None => false,
        }
    }
}

#[cfg(feature = "failpoints")]
pub use imp::{clear, hit, set};

/// Every failpoint name, in commit order.
pub const ALL: &[&str] = &[
    "segment.write",
    "segment.fsync",
    "segment.dir_fsync",
    "wal.write",
    "batch.commit",
    "compact.rename",
];

/// `failpoint!("name")` returns `Err(Error::Injected("name"))` from the enclosing function when the
/// point is armed; without the `failpoints` feature it expands to nothing.
#[macro_export]
#[doc(hidden)]
macro_rules! failpoint {
    ($name:literal) => {
        #[cfg(feature = "failpoints")]
        {
            if $crate::failpoint::hit($name) {
                return Err($crate::error::Error::Injected($name));
            }
        }
    };
}

/// Points that panic instead of failing (a worker thread's bug, for tests of panic propagation).
pub const PANICS: &[&str] = &["pairs.worker"];

/// `failpoint_panic!("name")` panics with `injected panic at failpoint `name`` when the point is
/// armed; without the `failpoints` feature it expands to nothing.
#[macro_export]
#[doc(hidden)]
macro_rules! failpoint_panic {
    ($name:literal) => {
        #[cfg(feature = "failpoints")]
        {
            if $crate::failpoint::hit($name) {
                panic!("injected panic at failpoint `{}`", $name);
            }
        }
    };
}
