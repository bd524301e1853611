//! The operation pool: what the node has seen and may include in a block it produces.
