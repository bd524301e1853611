//! Data column sidecars on their way to availability: the checks of a sidecar that need no
//! chain state (`verify_data_column_sidecar`, the inclusion proof, and the KZG proofs, batched
//! across every sidecar the processor hands over at once, blocks mixed), each failure
//! attributed to the sidecar's position in the batch so its sender can be penalised.
//!
//! [spec]: fulu/p2p-interface.md#data_column_sidecar_subnet_id

use std::sync::Arc;

use fork_choice::{SidecarError, verify_data_column_sidecars};
use rayon::ThreadPool;
use types::{ChainSpec, ColumnIndex, DataColumnSidecar, EthSpec, Root, Slot};

use crate::data_column_sidecars::verify_data_column_sidecar_inclusion_proof;

/// Why a data column sidecar failed the checks that need no chain state. Every one is a REJECT
/// on gossip.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataColumnError {
    /// A sidecar of a fork whose data columns the chain does not verify (Gloas: issue 44).
    #[error("data column sidecars of fork {0} are not supported")]
    UnsupportedFork(types::ForkName),
    /// `verify_data_column_sidecar` or `verify_data_column_sidecar_kzg_proofs` failed.
    #[error(transparent)]
    Sidecar(#[from] SidecarError),
    /// `verify_data_column_sidecar_inclusion_proof` failed: the commitments are not the
    /// block's.
    #[error("column {index}: the commitments' inclusion proof does not hold")]
    InclusionProof {
        /// The sidecar's index.
        index: ColumnIndex,
    },
}

/// A sidecar whose shape, inclusion proof and KZG proofs hold. Only
/// [`verify_data_column_sidecars_standalone`] makes one.
#[derive(Debug, Clone)]
pub struct KzgVerifiedDataColumn<E: EthSpec> {
    sidecar: Arc<DataColumnSidecar<E>>,
    block_root: Root,
}

impl<E: EthSpec> KzgVerifiedDataColumn<E> {
    /// A sidecar whose shape, inclusion proof and KZG proofs were verified elsewhere in this
    /// crate (gossip validation batches them with the chain-state rules).
    pub(crate) fn from_verified(sidecar: Arc<DataColumnSidecar<E>>, block_root: Root) -> Self {
        Self {
            sidecar,
            block_root,
        }
    }

    /// The sidecar.
    pub fn sidecar(&self) -> &Arc<DataColumnSidecar<E>> {
        &self.sidecar
    }

    /// The column index.
    pub fn index(&self) -> ColumnIndex {
        self.sidecar.index()
    }

    /// The block's slot, from the sidecar's header.
    pub fn slot(&self) -> Slot {
        self.sidecar.slot()
    }

    /// The root of the block the sidecar belongs to (its header's root).
    pub fn block_root(&self) -> Root {
        self.block_root
    }
}

/// What a batch of sidecars came to: the verified ones and the failures, each with its position
/// in the batch.
#[derive(Debug)]
pub struct ColumnBatchOutcome<E: EthSpec> {
    /// Sidecars that passed, with their positions.
    pub verified: Vec<(usize, KzgVerifiedDataColumn<E>)>,
    /// Sidecars that failed, with their positions, sorted by position.
    pub failed: Vec<(usize, DataColumnError)>,
}

/// The chain-state-free checks of the p2p spec for each of `sidecars`:
/// `verify_data_column_sidecar` and `verify_data_column_sidecar_inclusion_proof` one by one
/// (cheap), then `verify_data_column_sidecar_kzg_proofs` of all that passed as one batch on
/// `pool` (on failure narrowed down in parallel). Sidecars may belong to different blocks.
///
/// [spec]: fulu/p2p-interface.md#data_column_sidecar_subnet_id
pub fn verify_data_column_sidecars_standalone<E: EthSpec>(
    sidecars: Vec<Arc<DataColumnSidecar<E>>>,
    spec: &ChainSpec,
    pool: &ThreadPool,
) -> ColumnBatchOutcome<E> {
    let mut failed = Vec::new();
    let mut candidates = Vec::with_capacity(sidecars.len());
    for (position, sidecar) in sidecars.into_iter().enumerate() {
        match &*sidecar {
            DataColumnSidecar::Fulu(_) => {}
            DataColumnSidecar::Gloas(_) => {
                failed.push((
                    position,
                    DataColumnError::UnsupportedFork(sidecar.fork_name()),
                ));
                continue;
            }
        }
        if verify_data_column_sidecar_inclusion_proof(&sidecar) {
            candidates.push((position, sidecar));
        } else {
            let index = sidecar.index();
            failed.push((position, DataColumnError::InclusionProof { index }));
        }
    }

    let refs: Vec<&DataColumnSidecar<E>> = candidates.iter().map(|(_, s)| &**s).collect();
    let mut bad = vec![false; candidates.len()];
    let kzg = crate::batch_metrics::timed(None, refs.len(), || {
        verify_data_column_sidecars(&refs, spec, pool)
    });
    if let Err(failures) = kzg {
        for (i, error) in failures {
            bad[i] = true;
            failed.push((candidates[i].0, error.into()));
        }
    }
    let verified = candidates
        .into_iter()
        .zip(bad)
        .filter(|(_, bad)| !bad)
        .map(|((position, sidecar), _)| {
            let block_root = sidecar.block_root();
            (
                position,
                KzgVerifiedDataColumn {
                    sidecar,
                    block_root,
                },
            )
        })
        .collect();
    failed.sort_by_key(|(position, _)| *position);
    ColumnBatchOutcome { verified, failed }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_utils::{block_with_blobs, minimal_spec, pool};
    use ssz_types::VariableList;
    use types::MinimalEthSpec as E;

    fn sidecars_of(blobs: u8, seed: u64) -> (Root, Vec<Arc<DataColumnSidecar<E>>>) {
        let (block, cells) = block_with_blobs(blobs, seed);
        let sidecars =
            crate::data_column_sidecars::get_data_column_sidecars_from_block(&block, &cells)
                .expect("built");
        (
            block.canonical_root(),
            sidecars.into_iter().map(Arc::new).collect(),
        )
    }

    #[test]
    fn a_batch_across_two_blocks_names_the_bad_sidecar_by_position() {
        let (root_a, a) = sidecars_of(2, 1);
        let (root_b, b) = sidecars_of(1, 2);
        // Column 5 of both blocks, column 6 of a; b's column 5 gets a wrong proof, a's column 6 a
        // commitment list its header does not commit to.
        let DataColumnSidecar::Fulu(a5) = &*a[5] else {
            panic!("the tests make Fulu sidecars");
        };
        let mut bad_proof = (*b[5]).clone();
        let DataColumnSidecar::Fulu(s) = &mut bad_proof else {
            panic!("the tests make Fulu sidecars");
        };
        s.kzg_proofs[0] = a5.kzg_proofs[0];
        let mut bad_inclusion = (*a[6]).clone();
        let DataColumnSidecar::Fulu(s) = &mut bad_inclusion else {
            panic!("the tests make Fulu sidecars");
        };
        s.kzg_commitments.swap(0, 1);

        let batch = vec![
            Arc::clone(&a[5]),
            Arc::new(bad_proof),
            Arc::new(bad_inclusion),
            Arc::clone(&b[7]),
        ];
        let outcome = verify_data_column_sidecars_standalone(batch, &minimal_spec(), &pool());
        let failed: Vec<_> = outcome.failed.iter().map(|(p, _)| *p).collect();
        assert_eq!(failed, [1, 2]);
        assert!(matches!(
            outcome.failed[0].1,
            DataColumnError::Sidecar(SidecarError::Kzg { index: 5, .. })
        ));
        assert_eq!(
            outcome.failed[1].1,
            DataColumnError::InclusionProof { index: 6 }
        );
        let verified: Vec<_> = outcome
            .verified
            .iter()
            .map(|(p, c)| (*p, c.index(), c.block_root()))
            .collect();
        assert_eq!(verified, [(0, 5, root_a), (3, 7, root_b)]);
    }

    #[test]
    fn a_malformed_sidecar_is_refused_before_kzg() {
        let (_, a) = sidecars_of(2, 3);
        let mut short = (*a[0]).clone();
        let DataColumnSidecar::Fulu(s) = &mut short else {
            panic!("the tests make Fulu sidecars");
        };
        s.kzg_proofs = VariableList::new(s.kzg_proofs[..1].to_vec()).expect("one proof");
        // The proofs are not part of the inclusion proof; the shape check catches them.
        let outcome =
            verify_data_column_sidecars_standalone(vec![Arc::new(short)], &minimal_spec(), &pool());
        assert!(outcome.verified.is_empty());
        assert!(matches!(
            outcome.failed[0],
            (
                0,
                DataColumnError::Sidecar(SidecarError::LengthMismatch { proofs: 1, .. })
            )
        ));
    }
}
