//! execution_layer (work in progress).
