//! Once an epoch: `prepare_beacon_proposer` with the fee recipient, and, with builder
//! proposals on, `register_validator` with signed builder registrations.
//!
//! [spec]: beacon-APIs prepareBeaconProposer and registerValidator; builder-specs
//! bellatrix/builder.md#validator-registration

use beacon_api::{ProposerPreparationData, SignedValidatorRegistrationV1, ValidatorRegistrationV1};
use tracing::{debug, warn};
use types::EthSpec;

use crate::Context;
use crate::timing::SlotClock;

/// Sends the fee recipient of every resolved validator, and the builder registrations.
pub(crate) async fn prepare_proposers<E: EthSpec>(ctx: &Context<E>) {
    let Some(fee_recipient) = ctx.fee_recipient else {
        return;
    };
    let preparations: Vec<ProposerPreparationData> = ctx
        .store
        .indices()
        .into_iter()
        .map(|validator_index| ProposerPreparationData {
            validator_index,
            fee_recipient,
        })
        .collect();
    if preparations.is_empty() {
        return;
    }
    let preparations_ref = &preparations;
    if let Err(e) = ctx
        .nodes
        .first_success("prepare_beacon_proposer", |c| async move {
            c.post_validator_prepare_beacon_proposer(preparations_ref)
                .await
        })
        .await
    {
        warn!(error = %e, "prepare_beacon_proposer failed");
    }
    if ctx.builder_proposals {
        register_validators(ctx, fee_recipient).await;
    }
}

async fn register_validators<E: EthSpec>(ctx: &Context<E>, fee_recipient: types::ExecutionAddress) {
    // Signed once per key and resent each epoch: a new timestamp would only replace the same
    // preferences.
    let mut registrations: Vec<SignedValidatorRegistrationV1> = ctx.registrations.lock().clone();
    let registered: std::collections::HashSet<_> =
        registrations.iter().map(|r| r.message.pubkey).collect();
    let timestamp = SlotClock::now().as_secs();
    for pubkey in ctx.store.pubkeys() {
        if registered.contains(&pubkey) || ctx.store.index_of(&pubkey).is_none() {
            continue;
        }
        let message = ValidatorRegistrationV1 {
            fee_recipient,
            gas_limit: ctx.gas_limit,
            timestamp,
            pubkey,
        };
        match ctx.store.sign_validator_registration(&pubkey, message) {
            Ok(signed) => registrations.push(signed),
            Err(e) => debug!(error = %e, "registration not signed"),
        }
    }
    *ctx.registrations.lock() = registrations.clone();
    if registrations.is_empty() {
        return;
    }
    let registrations_ref = &registrations;
    if let Err(e) = ctx
        .nodes
        .first_success("register_validator", |c| async move {
            c.post_validator_register_validator(registrations_ref).await
        })
        .await
    {
        warn!(error = %e, "register_validator failed");
    }
}
