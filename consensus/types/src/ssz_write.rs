//! A state's SSZ written straight to an `io::Write`, a piece at a time.
//!
//! `Encode::ssz_append` builds the whole encoding in memory, and for a container it builds the
//! variable-length part in a second buffer first (ssz's `SszEncoder`), then copies it over: a
//! mainnet state (~135 MiB of SSZ at 1,000,000 validators, nearly all of it the validator
//! registry) held twice at its peak. [`BeaconState::ssz_write`] writes the same bytes with
//! only a small buffer in memory: the offsets come from each field's `ssz_bytes_len`, and the
//! large lists (the registry, balances, participation, inactivity scores, pending deposits)
//! are written element by element or page by page.

use std::io::{self, Write};

use crate::typenum::Unsigned;
use milhouse::{List, UpdateMap, Value};
use ssz::{BYTES_PER_LENGTH_OFFSET, Encode, encode_length};

use crate::{BeaconState, EthSpec};

/// Bytes gathered before they are handed to the writer.
const CHUNK: usize = 64 * 1024;

/// The writer and a buffer that gathers small encodings.
struct Out<'a, W: Write> {
    w: &'a mut W,
    buf: Vec<u8>,
}

impl<W: Write> Out<'_, W> {
    /// Writes the buffer once it holds at least [`CHUNK`] bytes.
    fn flush_if_full(&mut self) -> io::Result<()> {
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// `value`'s part of its container's fixed part: its bytes when it has a fixed size, else
    /// the offset of its bytes in the variable part (`offset`, then moved past them).
    fn fixed_part<T: Encode>(&mut self, value: &T, offset: &mut usize) -> io::Result<()> {
        if T::is_ssz_fixed_len() {
            value.ssz_append(&mut self.buf);
        } else {
            self.buf.extend_from_slice(&encode_length(*offset));
            *offset += value.ssz_bytes_len();
        }
        self.flush_if_full()
    }

    /// `value`'s part of its container's variable part, encoded whole (a small value).
    fn variable_part<T: Encode>(&mut self, value: &T) -> io::Result<()> {
        if !T::is_ssz_fixed_len() {
            value.ssz_append(&mut self.buf);
        }
        self.flush_if_full()
    }
}

/// The length of `value`'s part of its container's fixed part.
fn fixed_part_len<T: Encode>(_value: &T) -> usize {
    if T::is_ssz_fixed_len() {
        T::ssz_fixed_len()
    } else {
        BYTES_PER_LENGTH_OFFSET
    }
}

/// A variable-length value whose SSZ is written without building it whole.
trait WriteInPieces: Encode {
    fn write_in_pieces<W: Write>(&self, out: &mut Out<'_, W>) -> io::Result<()>;
}

impl<T: Value, N: Unsigned, U: UpdateMap<T>> WriteInPieces for List<T, N, U> {
    fn write_in_pieces<W: Write>(&self, out: &mut Out<'_, W>) -> io::Result<()> {
        if !<T as Encode>::is_ssz_fixed_len() {
            // Variable-size elements (phase0's pending attestations, a few thousand at most)
            // need their offsets first: encoded whole.
            return out.variable_part(self);
        }
        for item in self {
            item.ssz_append(&mut out.buf);
            out.flush_if_full()?;
        }
        Ok(())
    }
}

impl<T: packed_list::PackedValue, N: Unsigned> WriteInPieces for packed_list::PackedList<T, N> {
    fn write_in_pieces<W: Write>(&self, out: &mut Out<'_, W>) -> io::Result<()> {
        out.flush()?;
        self.ssz_write(out.w)
    }
}

impl<T> WriteInPieces for progressive_tree::ProgressiveTreeList<T>
where
    T: tree_hash::TreeHash + Encode + Clone + Send + Sync,
{
    fn write_in_pieces<W: Write>(&self, out: &mut Out<'_, W>) -> io::Result<()> {
        if !<T as Encode>::is_ssz_fixed_len() {
            return out.variable_part(self);
        }
        for item in self.iter() {
            item.ssz_append(&mut out.buf);
            out.flush_if_full()?;
        }
        Ok(())
    }
}

impl<T: packed_list::PackedValue> WriteInPieces for progressive_tree::ProgressivePackedList<T> {
    fn write_in_pieces<W: Write>(&self, out: &mut Out<'_, W>) -> io::Result<()> {
        out.flush()?;
        self.ssz_write(out.w)
    }
}

/// Writes the container `$value` of type `$ty`, whose fields are listed in the spec's order;
/// a field followed by `large` is written in pieces ([`WriteInPieces`]). Destructuring without
/// `..` makes a field missing from the list a compile error; the order is checked against the
/// spec's vectors (the `ssz_static` runner encodes every `BeaconState` case with this).
macro_rules! write_container {
    ($out:ident, $value:expr, $ty:path { $($field:ident $($large:ident)?),+ $(,)? }) => {{
        let $ty { $($field),+ } = $value;
        let mut offset = 0 $(+ fixed_part_len($field))+;
        $($out.fixed_part($field, &mut offset)?;)+
        $(write_container!(@variable $out, $field $($large)?);)+
        $out.flush()
    }};
    (@variable $out:ident, $field:ident) => {
        $out.variable_part($field)?
    };
    (@variable $out:ident, $field:ident large) => {
        $field.write_in_pieces(&mut $out)?
    };
}

impl<E: EthSpec> crate::gloas::BeaconState<E> {
    /// Writes the state's SSZ (the bytes `as_ssz_bytes` returns) to `w` in pieces, as
    /// [`BeaconState::ssz_write`] does: a progressive container serializes as a container of
    /// its fields, and its tree-backed lists are written element by element or page by page.
    pub fn ssz_write<W: Write>(&self, w: &mut W) -> io::Result<()> {
        let mut out = Out {
            w,
            buf: Vec::with_capacity(2 * CHUNK),
        };
        write_container!(out, self, crate::gloas::BeaconState {
            genesis_time, genesis_validators_root, slot, fork, latest_block_header,
            block_roots, state_roots, historical_roots, eth1_data, eth1_data_votes,
            eth1_deposit_index, validators large, balances large, randao_mixes, slashings,
            previous_epoch_participation large, current_epoch_participation large,
            justification_bits, previous_justified_checkpoint, current_justified_checkpoint,
            finalized_checkpoint, inactivity_scores large, current_sync_committee,
            next_sync_committee, latest_block_hash, next_withdrawal_index,
            next_withdrawal_validator_index, historical_summaries,
            deposit_requests_start_index, deposit_balance_to_consume, exit_balance_to_consume,
            earliest_exit_epoch, consolidation_balance_to_consume,
            earliest_consolidation_epoch, pending_deposits large,
            pending_partial_withdrawals large, pending_consolidations large,
            proposer_lookahead, builders large, next_withdrawal_builder_index,
            execution_payload_availability, builder_pending_payments,
            builder_pending_withdrawals large, latest_execution_payload_bid,
            payload_expected_withdrawals large, ptc_window,
        })
    }
}

impl<E: EthSpec> BeaconState<E> {
    /// Writes the state's SSZ (the bytes `as_ssz_bytes` returns) to `w`, holding only a small
    /// buffer in memory (see the module's documentation). `w` gets pieces of up to 64 KiB
    /// (larger for a fixed-size field such as `randao_mixes`); wrap a file in a `BufWriter`
    /// only if it needs fewer, larger writes.
    pub fn ssz_write<W: Write>(&self, w: &mut W) -> io::Result<()> {
        let mut out = Out {
            w,
            buf: Vec::with_capacity(2 * CHUNK),
        };
        match self {
            Self::Phase0(state) => write_container!(out, state, crate::phase0::BeaconState {
                genesis_time, genesis_validators_root, slot, fork, latest_block_header,
                block_roots, state_roots, historical_roots, eth1_data, eth1_data_votes,
                eth1_deposit_index, validators large, balances large, randao_mixes, slashings,
                previous_epoch_attestations large, current_epoch_attestations large,
                justification_bits, previous_justified_checkpoint, current_justified_checkpoint,
                finalized_checkpoint,
            }),
            Self::Altair(state) => write_container!(out, state, crate::altair::BeaconState {
                genesis_time, genesis_validators_root, slot, fork, latest_block_header,
                block_roots, state_roots, historical_roots, eth1_data, eth1_data_votes,
                eth1_deposit_index, validators large, balances large, randao_mixes, slashings,
                previous_epoch_participation large, current_epoch_participation large,
                justification_bits, previous_justified_checkpoint, current_justified_checkpoint,
                finalized_checkpoint, inactivity_scores large, current_sync_committee,
                next_sync_committee,
            }),
            Self::Bellatrix(state) => write_container!(out, state, crate::bellatrix::BeaconState {
                genesis_time, genesis_validators_root, slot, fork, latest_block_header,
                block_roots, state_roots, historical_roots, eth1_data, eth1_data_votes,
                eth1_deposit_index, validators large, balances large, randao_mixes, slashings,
                previous_epoch_participation large, current_epoch_participation large,
                justification_bits, previous_justified_checkpoint, current_justified_checkpoint,
                finalized_checkpoint, inactivity_scores large, current_sync_committee,
                next_sync_committee, latest_execution_payload_header,
            }),
            Self::Capella(state) => write_container!(out, state, crate::capella::BeaconState {
                genesis_time, genesis_validators_root, slot, fork, latest_block_header,
                block_roots, state_roots, historical_roots, eth1_data, eth1_data_votes,
                eth1_deposit_index, validators large, balances large, randao_mixes, slashings,
                previous_epoch_participation large, current_epoch_participation large,
                justification_bits, previous_justified_checkpoint, current_justified_checkpoint,
                finalized_checkpoint, inactivity_scores large, current_sync_committee,
                next_sync_committee, latest_execution_payload_header, next_withdrawal_index,
                next_withdrawal_validator_index, historical_summaries,
            }),
            Self::Deneb(state) => write_container!(out, state, crate::deneb::BeaconState {
                genesis_time, genesis_validators_root, slot, fork, latest_block_header,
                block_roots, state_roots, historical_roots, eth1_data, eth1_data_votes,
                eth1_deposit_index, validators large, balances large, randao_mixes, slashings,
                previous_epoch_participation large, current_epoch_participation large,
                justification_bits, previous_justified_checkpoint, current_justified_checkpoint,
                finalized_checkpoint, inactivity_scores large, current_sync_committee,
                next_sync_committee, latest_execution_payload_header, next_withdrawal_index,
                next_withdrawal_validator_index, historical_summaries,
            }),
            Self::Electra(state) => write_container!(out, state, crate::electra::BeaconState {
                genesis_time, genesis_validators_root, slot, fork, latest_block_header,
                block_roots, state_roots, historical_roots, eth1_data, eth1_data_votes,
                eth1_deposit_index, validators large, balances large, randao_mixes, slashings,
                previous_epoch_participation large, current_epoch_participation large,
                justification_bits, previous_justified_checkpoint, current_justified_checkpoint,
                finalized_checkpoint, inactivity_scores large, current_sync_committee,
                next_sync_committee, latest_execution_payload_header, next_withdrawal_index,
                next_withdrawal_validator_index, historical_summaries,
                deposit_requests_start_index, deposit_balance_to_consume, exit_balance_to_consume,
                earliest_exit_epoch, consolidation_balance_to_consume,
                earliest_consolidation_epoch, pending_deposits large,
                pending_partial_withdrawals large, pending_consolidations large,
            }),
            Self::Fulu(state) => write_container!(out, state, crate::fulu::BeaconState {
                genesis_time, genesis_validators_root, slot, fork, latest_block_header,
                block_roots, state_roots, historical_roots, eth1_data, eth1_data_votes,
                eth1_deposit_index, validators large, balances large, randao_mixes, slashings,
                previous_epoch_participation large, current_epoch_participation large,
                justification_bits, previous_justified_checkpoint, current_justified_checkpoint,
                finalized_checkpoint, inactivity_scores large, current_sync_committee,
                next_sync_committee, latest_execution_payload_header, next_withdrawal_index,
                next_withdrawal_validator_index, historical_summaries,
                deposit_requests_start_index, deposit_balance_to_consume, exit_balance_to_consume,
                earliest_exit_epoch, consolidation_balance_to_consume,
                earliest_consolidation_epoch, pending_deposits large,
                pending_partial_withdrawals large, pending_consolidations large,
                proposer_lookahead,
            }),
            // Its tree-backed progressive lists are written element by element or page by
            // page, as Fulu's lists.
            Self::Gloas(state) => {
                out.flush()?;
                state.ssz_write(out.w)
            }
        }
    }
}
