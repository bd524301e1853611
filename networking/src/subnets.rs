//! Subnet mathematics of the consensus p2p spec: attestation, sync-committee and data-column
//! subnets, custody groups.
