//! A client of the builder API (ethereum/builder-specs): registrations, bids, blinded blocks.
