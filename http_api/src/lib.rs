//! The Beacon API server (axum): the endpoints of ethereum/beacon-APIs over a [`beacon_chain`].
