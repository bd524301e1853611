//! The beacon node's assembly: store, chain, execution layer, HTTP API and timers from one config.
