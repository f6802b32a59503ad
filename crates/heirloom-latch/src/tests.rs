//! Every latch of the family through the same checks, written against
//! [`RawMutex`](crate::RawMutex): loom models (mutual exclusion and no lost
//! wake-up) and stress runs on real threads.

#[cfg(heirloom_loom)]
mod loom;
#[cfg(not(heirloom_loom))]
mod stress;
