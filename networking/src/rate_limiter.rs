//! Token-bucket rate limits on req/resp, per peer and protocol, used in both directions: inbound
//! requests beyond the quota get `RATE_LIMITED` and a penalty; outbound requests beyond it are
//! refused locally so that Arbor never trips its peers' limits.
//!
//! A bucket holds `max_tokens`; a request costs the number of chunks it may produce (at least
//! 1); the bucket refills fully over `replenish_all_every`, continuously.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use libp2p::PeerId;

use crate::rpc::Protocol;

/// A quota: `max_tokens` every `replenish_all_every`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Bucket size (and the most one request may cost).
    pub max_tokens: u64,
    /// Time to refill an empty bucket.
    pub replenish_all_every: Duration,
}

impl Quota {
    /// `n` tokens per `secs` seconds.
    pub const fn n_every(n: u64, secs: u64) -> Self {
        Self {
            max_tokens: n,
            replenish_all_every: Duration::from_secs(secs),
        }
    }
}

/// Quotas per protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimiterConfig {
    quotas: HashMap<Protocol, Quota>,
}

impl Default for RateLimiterConfig {
    /// Quotas sized for a syncing peer: a full `MAX_REQUEST_BLOCKS_DENEB` batch of blocks or a
    /// batch of columns every few seconds, handshakes rarely.
    fn default() -> Self {
        let quotas = Protocol::ALL
            .into_iter()
            .map(|p| {
                let quota = match p {
                    Protocol::StatusV2 => Quota::n_every(5, 15),
                    Protocol::Goodbye => Quota::n_every(1, 10),
                    Protocol::Ping => Quota::n_every(2, 10),
                    Protocol::MetaDataV3 => Quota::n_every(2, 5),
                    Protocol::BlocksByRangeV2 | Protocol::BlocksByRootV2 => {
                        Quota::n_every(1024, 10)
                    }
                    Protocol::BlobsByRange | Protocol::BlobsByRoot => Quota::n_every(1152, 10),
                    Protocol::DataColumnsByRange | Protocol::DataColumnsByRoot => {
                        Quota::n_every(16_384, 10)
                    }
                    Protocol::LightClientBootstrap => Quota::n_every(1, 10),
                    Protocol::LightClientUpdatesByRange => Quota::n_every(128, 10),
                    Protocol::LightClientFinalityUpdate | Protocol::LightClientOptimisticUpdate => {
                        Quota::n_every(1, 12)
                    }
                    // From Gloas the envelope carries the payload a block carried before: as
                    // many envelopes as blocks, eight full `MAX_REQUEST_PAYLOADS` requests.
                    Protocol::ExecutionPayloadEnvelopesByRange
                    | Protocol::ExecutionPayloadEnvelopesByRoot => Quota::n_every(1024, 10),
                };
                (p, quota)
            })
            .collect();
        Self { quotas }
    }
}

impl RateLimiterConfig {
    /// Replaces one protocol's quota.
    pub fn with_quota(mut self, protocol: Protocol, quota: Quota) -> Self {
        self.quotas.insert(protocol, quota);
        self
    }

    /// The quota of `protocol`.
    pub fn quota(&self, protocol: Protocol) -> Quota {
        self.quotas
            .get(&protocol)
            .copied()
            .unwrap_or(Quota::n_every(1, 10))
    }
}

/// Why a request was not allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RateLimitError {
    /// The bucket is short; enough tokens return after `wait`.
    #[error("rate limited; retry in {wait:?}")]
    RateLimited {
        /// How long until the bucket holds enough tokens for this request.
        wait: Duration,
    },
    /// The request alone costs more than the whole quota.
    #[error("request cost {cost} exceeds the quota of {max}")]
    TooLarge {
        /// Tokens the request costs.
        cost: u64,
        /// Tokens the protocol's quota holds when full.
        max: u64,
    },
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Tokens available at `updated`, as a fraction of one token's nanoseconds, to avoid
    /// rounding drift: `tokens_ns / ns_per_token` whole tokens.
    tokens_ns: u128,
    updated: Instant,
}

/// Buckets per (peer, protocol).
#[derive(Debug, Clone)]
pub struct RateLimiter {
    config: RateLimiterConfig,
    buckets: HashMap<(PeerId, Protocol), Bucket>,
}

impl RateLimiter {
    /// A limiter with `config`'s quotas.
    pub fn new(config: RateLimiterConfig) -> Self {
        Self {
            config,
            buckets: HashMap::new(),
        }
    }

    /// Takes `cost` tokens from the bucket of (`peer`, `protocol`) at `now`, or says why not.
    pub fn allows(
        &mut self,
        peer: &PeerId,
        protocol: Protocol,
        cost: u64,
        now: Instant,
    ) -> Result<(), RateLimitError> {
        let quota = self.config.quota(protocol);
        let cost = cost.max(1);
        if cost > quota.max_tokens {
            return Err(RateLimitError::TooLarge {
                cost,
                max: quota.max_tokens,
            });
        }
        let period = quota.replenish_all_every.as_nanos().max(1);
        let ns_per_token = (period / u128::from(quota.max_tokens)).max(1);
        let full = ns_per_token * u128::from(quota.max_tokens);
        let bucket = self.buckets.entry((*peer, protocol)).or_insert(Bucket {
            tokens_ns: full,
            updated: now,
        });
        let elapsed = now.saturating_duration_since(bucket.updated).as_nanos();
        bucket.tokens_ns = (bucket.tokens_ns + elapsed).min(full);
        bucket.updated = now;
        let needed = ns_per_token * u128::from(cost);
        if bucket.tokens_ns >= needed {
            bucket.tokens_ns -= needed;
            Ok(())
        } else {
            let wait_ns = needed - bucket.tokens_ns;
            Err(RateLimitError::RateLimited {
                wait: Duration::from_nanos(wait_ns.min(u128::from(u64::MAX)) as u64),
            })
        }
    }

    /// Drops buckets that have been full for a while, bounding memory.
    pub fn prune(&mut self, now: Instant) {
        let config = &self.config;
        self.buckets.retain(|(_, protocol), bucket| {
            now.saturating_duration_since(bucket.updated)
                < config.quota(*protocol).replenish_all_every
        });
    }

    /// Number of live buckets.
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    /// Whether no bucket is live.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_empties_then_refills_with_time() {
        let config = RateLimiterConfig::default().with_quota(Protocol::Ping, Quota::n_every(2, 10));
        let mut limiter = RateLimiter::new(config);
        let peer = PeerId::random();
        let t0 = Instant::now();
        assert!(limiter.allows(&peer, Protocol::Ping, 1, t0).is_ok());
        assert!(limiter.allows(&peer, Protocol::Ping, 1, t0).is_ok());
        let Err(RateLimitError::RateLimited { wait }) =
            limiter.allows(&peer, Protocol::Ping, 1, t0)
        else {
            panic!("third ping should be limited");
        };
        assert_eq!(wait, Duration::from_secs(5));
        // Another peer has its own bucket.
        assert!(
            limiter
                .allows(&PeerId::random(), Protocol::Ping, 1, t0)
                .is_ok()
        );
        // Half the period returns one token.
        assert!(
            limiter
                .allows(&peer, Protocol::Ping, 1, t0 + Duration::from_secs(5))
                .is_ok()
        );
        assert!(
            limiter
                .allows(&peer, Protocol::Ping, 1, t0 + Duration::from_secs(5))
                .is_err()
        );
    }

    #[test]
    fn cost_is_charged_and_oversized_requests_refused() {
        let mut limiter = RateLimiter::new(RateLimiterConfig::default());
        let peer = PeerId::random();
        let now = Instant::now();
        assert_eq!(
            limiter.allows(&peer, Protocol::BlocksByRangeV2, 1025, now),
            Err(RateLimitError::TooLarge {
                cost: 1025,
                max: 1024
            })
        );
        assert!(
            limiter
                .allows(&peer, Protocol::BlocksByRangeV2, 1000, now)
                .is_ok()
        );
        assert!(
            limiter
                .allows(&peer, Protocol::BlocksByRangeV2, 25, now)
                .is_err()
        );
        assert!(
            limiter
                .allows(&peer, Protocol::BlocksByRangeV2, 24, now)
                .is_ok()
        );
    }

    #[test]
    fn envelope_requests_are_limited_like_blocks_per_protocol() {
        let mut limiter = RateLimiter::new(RateLimiterConfig::default());
        let peer = PeerId::random();
        let now = Instant::now();
        for protocol in [
            Protocol::ExecutionPayloadEnvelopesByRange,
            Protocol::ExecutionPayloadEnvelopesByRoot,
        ] {
            // Eight requests of MAX_REQUEST_PAYLOADS (128) envelopes, then none.
            for _ in 0..8 {
                assert!(limiter.allows(&peer, protocol, 128, now).is_ok());
            }
            assert!(matches!(
                limiter.allows(&peer, protocol, 1, now),
                Err(RateLimitError::RateLimited { .. })
            ));
        }
        // Each protocol has its own bucket, apart from the blocks'.
        assert!(
            limiter
                .allows(&peer, Protocol::BlocksByRangeV2, 1024, now)
                .is_ok()
        );
    }

    #[test]
    fn prune_bounds_memory() {
        let mut limiter = RateLimiter::new(RateLimiterConfig::default());
        let now = Instant::now();
        for _ in 0..100 {
            limiter
                .allows(&PeerId::random(), Protocol::Ping, 1, now)
                .unwrap();
        }
        assert_eq!(limiter.len(), 100);
        limiter.prune(now + Duration::from_secs(60));
        assert!(limiter.is_empty());
    }
}
