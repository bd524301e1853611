//! The Beacon API (ethereum/beacon-APIs): request and response types and a typed client.
