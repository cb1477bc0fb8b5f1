//! Failpoints: named places in the commit path where tests inject an error. Compiled out unless the
//! `failpoints` feature is on; then `set` arms a point to fail on its n-th hit.

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

#[cfg(feature = "failpoints")]
mod pause {
    use std::sync::{Condvar, Mutex};

    static PAUSED: Mutex<bool> = Mutex::new(false);
    static CHANGED: Condvar = Condvar::new();

    /// Blocks the calling thread at an armed pause point until [`resume`].
    pub fn pause_point(name: &'static str) {
        if !super::imp::hit(name) {
            return;
        }
        let mut g = PAUSED.lock().unwrap_or_else(|p| p.into_inner());
        *g = true;
        CHANGED.notify_all();
        while *g {
            g = CHANGED.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Waits until some thread is blocked at a pause point.
    pub fn wait_paused() {
        let mut g = PAUSED.lock().unwrap_or_else(|p| p.into_inner());
        while !*g {
            g = CHANGED.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Releases the thread blocked at a pause point.
    pub fn resume() {
        *PAUSED.lock().unwrap_or_else(|p| p.into_inner()) = false;
        CHANGED.notify_all();
    }
}

#[cfg(feature = "failpoints")]
pub use pause::{resume, wait_paused};

/// Blocks at the named point while it is armed, until `resume` (tests of what readers see in the
/// middle of a commit). Without the `failpoints` feature it does nothing.
#[inline]
pub fn pause_point(name: &'static str) {
    #[cfg(feature = "failpoints")]
    pause::pause_point(name);
    #[cfg(not(feature = "failpoints"))]
    let _ = name;
}

/// Panics when the named point is armed: tests of the panic paths (a pipeline worker, the writer
/// part-way through a batch). Without the `failpoints` feature it does nothing.
#[inline]
pub fn panic_point(name: &'static str) {
    #[cfg(feature = "failpoints")]
    if imp::hit(name) {
        panic!("injected panic at failpoint `{name}`");
    }
    #[cfg(not(feature = "failpoints"))]
    let _ = name;
}

/// `failpoint!("name")` returns `Err(Error::Injected("name"))` from the enclosing function when the
/// point is armed; without the `failpoints` feature it expands to nothing.
#[macro_export]
#[doc(hidden)]
macro_rules! failpoint {
    ($name:literal) => {
        #[cfg(feature = "failpoints")]
        {
            if $crate::failpoint::hit($name) {
                return Err($crate::Error::Injected($name));
            }
        }
    };
}
