//! The consensus specs' light-client protocol (`altair/light-client/` and its later forks):
//! what a full node derives from blocks and states, and the light client's sync functions.
