//! The validator client: performs a validator's duties through the standard Beacon API only.
