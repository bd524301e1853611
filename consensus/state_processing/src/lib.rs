//! state_processing (work in progress).
