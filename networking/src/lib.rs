//! networking (work in progress).
